"""pass@k against exact big-integer arithmetic; bootstrap behaviour; diversity."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from setrl import metrics


def exact_pass_at_k(n, c, k):
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def test_pass_at_k_matches_exact():
    for n in [1, 2, 5, 16, 256]:
        for c in sorted({0, 1, 2, n // 2, n - 1, n} & set(range(n + 1))):
            for k in sorted({1, 2, 8, n // 2, n} & set(range(1, n + 1))):
                want = float(exact_pass_at_k(n, c, k))
                assert metrics.pass_at_k(n, c, k) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_pass_at_k_array_matches_exact_on_ragged_ns():
    rng = np.random.default_rng(0)
    ns = rng.integers(4, 300, 200)
    cs = rng.integers(0, ns + 1)
    for k in (1, 3, 4):
        got = metrics.pass_at_k_array(ns, cs, k)
        want = [float(exact_pass_at_k(int(n), int(c), k)) for n, c in zip(ns, cs)]
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-14)
    assert metrics.pass_at_k_array([256], [1], 1)[0] == pytest.approx(1 / 256, rel=1e-13)


def test_k_larger_than_n_raises():
    with pytest.raises(ValueError, match="n=4, k=5"):
        metrics.pass_at_k(4, 1, 5)
    with pytest.raises(ValueError, match="n=3, k=4"):
        metrics.pass_at_k_array([8, 3], [1, 1], 4)
    with pytest.raises(ValueError, match="c=5"):
        metrics.pass_at_k(4, 5, 1)
    with pytest.raises(ValueError):
        metrics.pass_at_k(4, 1, 0)


def test_curve_ci_contains_point_and_is_monotone_in_k():
    rng = np.random.default_rng(1)
    ns = np.full(60, 32)
    cs = rng.binomial(32, rng.uniform(0, 0.5, 60))
    df = metrics.pass_at_k_curve(ns, cs, [1, 2, 4, 8, 16, 32], n_boot=500)
    assert list(df.columns) == ["k", "pass_at_k", "ci_low", "ci_high", "n_problems"]
    assert (df.ci_low <= df.pass_at_k).all() and (df.pass_at_k <= df.ci_high).all()
    assert (df.ci_low < df.ci_high).any() and (df.n_problems == 60).all()
    assert df.pass_at_k.is_monotonic_increasing
    assert df.pass_at_k.iloc[0] == pytest.approx((cs / 32).mean())


def test_paired_bootstrap_detects_real_difference_not_null():
    rng = np.random.default_rng(2)
    ns = np.full(80, 16)
    p = rng.uniform(0.1, 0.7, 80)
    cs_a = rng.binomial(16, p)
    cs_b = rng.binomial(16, np.clip(p - 0.15, 0, 1))
    real = metrics.paired_bootstrap(ns, cs_a, ns, cs_b, k=1)
    assert real["diff"] > 0 and real["ci_low"] > 0 and real["p_value"] < 0.01
    cs_null = rng.binomial(16, p)  # same per-problem rates as A: no real difference
    null = metrics.paired_bootstrap(ns, cs_a, ns, cs_null, k=1)
    assert null["ci_low"] < 0 < null["ci_high"] and null["p_value"] > 0.05
    same = metrics.paired_bootstrap(ns, cs_a, ns, cs_a, k=1)
    assert same["diff"] == 0 and same["p_value"] == 1.0


def test_distinct_correct_clusters():
    r = [1, 1, 0, 1, 1, 1]
    c = [3, 3, 4, 100, 5, 0]
    assert metrics.distinct_correct_clusters(r, c) == 3  # {3, 5, 0}; 4 is wrong, 100 degenerate
    assert metrics.distinct_correct_clusters(r, c, degenerate={0, 100}) == 2
    assert metrics.mean_distinct_correct_clusters([r, [0, 0]], [c, [1, 2]]) == 1.5

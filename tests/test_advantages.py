"""Advantage estimators against brute-force twins in exact rational arithmetic."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from setrl import advantages as adv


# ---------------------------------------------------------------- exact twins


def brute_poly_epo(rewards, clusters, n, aggregate="mean", degenerate=frozenset({100}), gate=False):
    """Enumerate every size-n set, exactly: the readable definition of Poly-EPO."""
    N = len(rewards)
    sets = list(itertools.combinations(range(N), n))

    def f(G):
        u = len({clusters[i] for i in G if clusters[i] not in degenerate})
        d = Fraction(0 if (gate and u <= 1) else u, n)
        return Fraction(sum(rewards[i] for i in G), n) * d

    fs = {G: f(G) for G in sets}
    fbar = sum(fs.values()) / len(sets)
    out = []
    for i in range(N):
        holding = [fs[G] - fbar for G in sets if i in G]
        out.append(sum(holding) / (len(holding) if aggregate == "mean" else 1))
    return out


def exact_closed_form(rewards, clusters, n, aggregate="mean", degenerate=frozenset({100}), gate=False):
    """The reference's closed form, literally: F(P) - F(P without i), in Fractions."""

    def comb(a, b):
        return math.comb(a, b) if 0 <= b <= a else 0

    def F(rs, cs):
        N, g = len(rs), int(gate)
        rho = sum(rs, Fraction(0))
        pool = [r for r, c in zip(rs, cs) if c in degenerate]
        m0, rho0 = len(pool), sum(pool, Fraction(0))
        total = Fraction(0)
        for k in {c for c in cs if c not in degenerate}:
            members = [r for r, c in zip(rs, cs) if c == k]
            mk, rhok = len(members), sum(members, Fraction(0))
            total += rho * comb(N - 1, n - 1) - (rho - rhok) * comb(N - mk - 1, n - 1)
            total -= g * ((rhok + rho0) * comb(mk + m0 - 1, n - 1) - rho0 * comb(m0 - 1, n - 1))
        return total / n**2

    N = len(rewards)
    full = F(rewards, clusters)
    out = []
    for i in range(N):
        a = full - F(rewards[:i] + rewards[i + 1:], clusters[:i] + clusters[i + 1:]) - Fraction(n, N) * full
        out.append(a / comb(N - 1, n - 1) if aggregate == "mean" else a)
    return out


VARIANTS = [
    dict(aggregate="mean", degenerate=frozenset({100}), gate=False),
    dict(aggregate="sum", degenerate=frozenset({0, 100}), gate=True),
    dict(aggregate="mean", degenerate=frozenset({0, 100}), gate=True),
    dict(aggregate="sum", degenerate=frozenset(), gate=False),
]


def random_group(rng: random.Random, N: int, real: bool):
    """Few cluster ids (so clusters repeat), degenerate ids 0/100 mixed in."""
    ids = [0, 100] + list(range(1, rng.randint(1, 5) + 1))
    clusters = [rng.choice(ids) for _ in range(N)]
    rewards = [Fraction(rng.randint(0, 8), 8) if real else Fraction(rng.randint(0, 1)) for _ in range(N)]
    return rewards, clusters


def run_fast(rewards, clusters, n, variant):
    return adv.poly_epo(np.array([float(r) for r in rewards]), np.array(clusters), set_size=n,
                        aggregate=variant["aggregate"], degenerate=variant["degenerate"],
                        gate_single_cluster=variant["gate"])


def assert_close_to_exact(fast, exact, rtol=1e-11):
    exact = np.array([float(x) for x in exact])
    scale = max(1.0, np.abs(exact).max())
    np.testing.assert_allclose(fast, exact, rtol=0, atol=rtol * scale)


# ---------------------------------------------------------------- Poly-EPO


def test_hand_worked_group():
    # N=4, n=2, clusters [1, 1, 2, 100], rewards [1, 0, 1, 1], mean aggregate, ungated.
    # n^2 f(G) = R(G) * u(G) over the 6 pairs:
    #   {0,1}: R=1 u=1 -> 1    {0,2}: R=2 u=2 -> 4    {0,3}: R=2 u=1 -> 2
    #   {1,2}: R=1 u=2 -> 2    {1,3}: R=1 u=1 -> 1    {2,3}: R=2 u=1 -> 2
    # fbar = 12 / (6*4) = 1/2; rollout 0 is in {0,1},{0,2},{0,3}: (1+4+2)/4/3 - 1/2 = 1/12
    # rollout 1: (1+2+1)/12 - 1/2 = -1/6; rollout 2: (4+2+2)/12 - 1/2 = 1/6;
    # rollout 3: (2+1+2)/12 - 1/2 = -1/12. Sum = 0.
    out = adv.poly_epo(np.array([1.0, 0, 1, 1]), np.array([1, 1, 2, 100]), set_size=2)
    np.testing.assert_allclose(out, [1 / 12, -1 / 6, 1 / 6, -1 / 12], atol=1e-15)
    # Gated: the single-cluster pairs ({0,1},{0,3},{1,3},{2,3}) score 0, leaving 4 and 2.
    gated = adv.poly_epo(np.array([1.0, 0, 1, 1]), np.array([1, 1, 2, 100]), set_size=2,
                         gate_single_cluster=True)
    np.testing.assert_allclose(gated, [4 / 12 - 1 / 4, 2 / 12 - 1 / 4, 6 / 12 - 1 / 4, -1 / 4], atol=1e-15)


def variant_id(v):
    return f"{v['aggregate']}-{sorted(v['degenerate'])}-gate{int(v['gate'])}"


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_poly_epo_matches_enumeration(variant):
    rng = random.Random(1234)
    for case in range(40):
        N = 12 if case < 6 else rng.randint(1, 12)  # always a few of the largest groups
        n = rng.randint(1, min(N, 6))
        rewards, clusters = random_group(rng, N, real=case % 2 == 1)
        brute = brute_poly_epo(rewards, clusters, n, variant["aggregate"], variant["degenerate"], variant["gate"])
        closed = exact_closed_form(rewards, clusters, n, variant["aggregate"], variant["degenerate"], variant["gate"])
        assert closed == brute, (rewards, clusters, n)  # the formula itself, exactly
        assert_close_to_exact(run_fast(rewards, clusters, n, variant), brute)


def test_poly_epo_large_group_precision():
    # N=256, n=8: no enumeration possible (4e14 sets), so the exact Fraction closed
    # form (checked against enumeration above) is the reference.
    rng = random.Random(7)
    for variant in VARIANTS[:2]:
        rewards, clusters = random_group(rng, 256, real=True)
        clusters = [c if c in (0, 100) else rng.randint(1, 30) for c in clusters]
        exact = exact_closed_form(rewards, clusters, 8, variant["aggregate"], variant["degenerate"], variant["gate"])
        assert_close_to_exact(run_fast(rewards, clusters, 8, variant), exact, rtol=1e-10)


@pytest.mark.parametrize("name", ["grpo", "dr_grpo", "poly_epo", "poly_epo_replication"])
def test_group_advantages_sum_to_zero(name):
    rng = np.random.default_rng(0)
    for _ in range(20):
        N = int(rng.integers(2, 40))
        r = rng.integers(0, 2, N).astype(float)
        c = rng.choice([0, 1, 2, 3, 100], N)
        a = adv.get(name)(r, c, **({"set_size": min(4, N)} if "poly" in name else {}))
        assert a.shape == (N,) and a.dtype == np.float64
        assert abs(a.sum()) < 1e-9 * max(1.0, np.abs(a).max())


def test_poly_epo_edge_cases():
    r, c = np.array([1.0, 0, 1]), np.array([1, 2, 3])
    with pytest.raises(ValueError, match="set_size=4 exceeds the group size N=3"):
        adv.poly_epo(r, c, set_size=4)
    # One set only: every rollout's advantage is that set's score minus itself.
    np.testing.assert_array_equal(adv.poly_epo(r, c, set_size=3), np.zeros(3))
    np.testing.assert_array_equal(adv.poly_epo(np.array([1.0]), np.array([1]), set_size=1), [0.0])
    # Nothing counts toward diversity: every set scores 0.
    np.testing.assert_array_equal(adv.poly_epo(r, np.array([100, 100, 100]), set_size=2), np.zeros(3))
    # Diversity matters: a correct rollout in a new cluster beats one in a crowded cluster.
    a = adv.poly_epo(np.array([1.0, 1, 1, 1, 0]), np.array([1, 1, 1, 2, 3]), set_size=2)
    assert a[3] > a[0]


def test_replication_preset_and_batch_match_single_group():
    rng = np.random.default_rng(3)
    rs = [rng.integers(0, 2, N).astype(float) for N in (5, 8, 8, 13)]
    cs = [rng.choice([0, 1, 2, 100], len(r)) for r in rs]
    batch = adv.compute_batch("poly_epo_replication", rs, cs, set_size=4)
    for r, c, b in zip(rs, cs, batch):
        single = adv.poly_epo(r, c, set_size=4, aggregate="sum", degenerate={0, 100}, gate_single_cluster=True)
        np.testing.assert_allclose(b, single, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b, adv.get("poly_epo_replication")(r, c, set_size=4), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="group 0"):
        adv.compute_batch("poly_epo", [np.ones(3)], [np.ones(3)], set_size=4)


# ---------------------------------------------------------------- GRPO family, others


def test_grpo_and_dr_grpo():
    r = np.array([1.0, 0, 0, 1, 1])
    np.testing.assert_allclose(adv.dr_grpo(r), r - 0.6)
    np.testing.assert_allclose(adv.grpo(r, eps=0.0), (r - 0.6) / np.std(r, ddof=1))
    np.testing.assert_array_equal(adv.grpo(np.ones(4)), np.zeros(4))  # no signal, no NaN
    np.testing.assert_array_equal(adv.grpo(np.array([1.0])), [0.0])


def test_pass_at_k_advantage_matches_exact():
    for N in range(1, 11):
        for k in range(1, N + 1):
            for c in range(N + 1):
                r = np.array([1.0] * c + [0.0] * (N - c))
                a = adv.get("pass_at_k")(r, k=k)
                rbar = 1 - Fraction(math.comb(N - c, k), math.comb(N, k))
                if rbar in (0, 1):
                    np.testing.assert_array_equal(a, np.zeros(N))
                    continue
                sigma = math.sqrt(rbar * (1 - rbar))
                miss = Fraction(math.comb(N - c - 1, k - 1), math.comb(N - 1, k - 1))
                want = [float(1 - rbar) / sigma] * c + [float(1 - rbar - miss) / sigma] * (N - c)
                np.testing.assert_allclose(a, want, rtol=1e-12, atol=1e-12)
                assert abs(a.sum()) < 1e-9
    with pytest.raises(ValueError, match="k=5, N=4"):
        adv.pass_at_k(np.ones(4), k=5)
    with pytest.raises(ValueError, match="binary"):
        adv.pass_at_k(np.array([0.5, 1.0]), k=1)


def test_uniqueness_scales_correct_by_cluster_size():
    r = np.array([1.0, 1, 1, 0, 1])
    c = np.array([7, 7, 7, 7, 9])
    base = r - 0.8
    # Correct in cluster 7: 3 correct members; cluster 9: 1. Incorrect rollout unscaled.
    want = base * np.array([1 / 3**0.5, 1 / 3**0.5, 1 / 3**0.5, 1, 1])
    np.testing.assert_allclose(adv.get("uniqueness")(r, c, alpha=0.5), want)
    with pytest.raises(ValueError, match="needs cluster ids"):
        adv.get("uniqueness")(r)


def test_registry():
    assert {"grpo", "dr_grpo", "poly_epo", "poly_epo_replication", "pass_at_k", "uniqueness"} <= set(adv.names())
    with pytest.raises(KeyError, match="valid: .*dr_grpo.*grpo"):
        adv.get("ppo")
    with pytest.raises(ValueError, match="already registered"):
        adv.register("grpo")(lambda r: r)
    est = adv.get("poly_epo")
    assert est.needs_clusters and "arxiv.org" in est.doc
    out = adv.compute_batch("dr_grpo", [[1, 0], [1, 1, 0]])
    np.testing.assert_allclose(np.concatenate(out), [0.5, -0.5, 1 / 3, 1 / 3, -2 / 3])

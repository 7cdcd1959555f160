"""EXPO plug-ins: AKL coefficient and the Gaussian curriculum sampler."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from setrl.curriculum import GaussianCurriculum, akl_coef


def test_akl_coef_range():
    assert akl_coef(0.02, 0.0) == pytest.approx(0.01)
    assert akl_coef(0.02, 1.0) == pytest.approx(0.02 * 0.8807970779778823)
    assert akl_coef(0.02, 0.3) < akl_coef(0.02, 0.7)


def test_weights_and_probs():
    cur = GaussianCurriculum(3)
    cur.acc[:] = [0.5, 0.85, 0.0]
    w = cur.weights()
    np.testing.assert_allclose(w, [1.0, math.exp(-0.35**2 / (2 * 0.35**2)), math.exp(-0.25 / (2 * 0.1225))])
    np.testing.assert_allclose(cur.probs(), w / w.sum())
    assert cur.probs().sum() == pytest.approx(1.0)


def test_update_is_ema_on_sampled_only():
    cur = GaussianCurriculum(4)
    cur.update([2, 0], [1.0, 0.0])
    np.testing.assert_allclose(cur.acc, [0.45, 0.5, 0.55, 0.5])
    cur.update([2], [1.0])
    assert cur.acc[2] == pytest.approx(0.9 * 0.55 + 0.1)
    cur.update([1, 1], [1.0, 1.0])  # repeats apply in turn
    assert cur.acc[1] == pytest.approx(0.9 * (0.9 * 0.5 + 0.1) + 0.1)
    with pytest.raises(ValueError):
        cur.update([0, 1], [1.0])
    with pytest.raises(IndexError):
        cur.update([4], [1.0])


def test_sample_deterministic_distinct_and_biased():
    a, b = GaussianCurriculum(50, seed=3), GaussianCurriculum(50, seed=3)
    draws = a.sample(20)
    np.testing.assert_array_equal(draws, b.sample(20))
    assert len(set(draws.tolist())) == 20
    assert len(GaussianCurriculum(5).sample(12)) == 12  # k > n: with replacement
    assert not np.array_equal(GaussianCurriculum(50, seed=4).sample(20), draws)
    # Solved questions (p = 1) are drawn less often than ones at 50%.
    cur = GaussianCurriculum(2, seed=0)
    cur.acc[:] = [0.5, 1.0]
    counts = np.bincount(np.concatenate([cur.sample(1) for _ in range(4000)]), minlength=2)
    expect = cur.probs()[1] * 4000
    assert abs(counts[1] - expect) < 4 * math.sqrt(expect) and counts[1] < counts[0]


def test_state_dict_resume_continues_identically():
    run = GaussianCurriculum(30, seed=11)
    for _ in range(3):
        idx = run.sample(8)
        run.update(idx, np.linspace(0, 1, 8))
    state = json.loads(json.dumps(run.state_dict()))  # survives a JSON checkpoint
    resumed = GaussianCurriculum(30, seed=999)
    resumed.load_state_dict(state)
    for _ in range(3):
        idx = run.sample(8)
        np.testing.assert_array_equal(idx, resumed.sample(8))
        run.update(idx, np.ones(8))
        resumed.update(idx, np.ones(8))
    np.testing.assert_array_equal(run.acc, resumed.acc)
    with pytest.raises(ValueError, match="30 questions"):
        GaussianCurriculum(5).load_state_dict(state)

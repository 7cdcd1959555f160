"""ARI and pairwise precision/recall against hand-worked values and a brute-force pair loop."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from setrl.judge.metrics import adjusted_rand_index, degenerate_accuracy, pairwise_precision_recall


def brute_pairs(labels, pred):
    both = same_pred = same_label = 0
    for i, j in combinations(range(len(labels)), 2):
        sl, sp = labels[i] == labels[j], pred[i] == pred[j]
        both += sl and sp
        same_pred += sp
        same_label += sl
    return both, same_pred, same_label


def test_ari_hand_worked():
    # labels {0,0,0 | 1,1,1}, pred {0,0 | 1,1,1,1}: n_ij = [[2,1],[0,3]]
    # index = C(2,2)+C(3,2) = 1+3 = 4; a = 3+3 = 6; b = C(2,2)+C(4,2) = 7; C(6,2) = 15
    # expected = 6*7/15 = 2.8; max = 6.5; ARI = (4-2.8)/(6.5-2.8) = 1.2/3.7
    assert adjusted_rand_index([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]) == pytest.approx(1.2 / 3.7)
    # relabelling the prediction changes nothing
    assert adjusted_rand_index([0, 0, 1, 1], [7, 7, 3, 3]) == 1.0
    # labels {0,0 | 1,1}, pred all singletons: index 0, a = 2, b = 0, expected 0, max 1 -> 0
    assert adjusted_rand_index([0, 0, 1, 1], [0, 1, 2, 3]) == 0.0
    # worse than chance: labels {0,0 | 1,1}, pred {0,1 | 0,1}: index 0, a = b = 2, expected 4/6, max 2
    assert adjusted_rand_index([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx((0 - 4 / 6) / (2 - 4 / 6))
    # both trivial in the same way: identical partitions
    assert adjusted_rand_index([5, 5, 5], [1, 1, 1]) == 1.0
    assert adjusted_rand_index([0, 1, 2], [3, 4, 5]) == 1.0


def test_precision_recall_match_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 10))
        labels = rng.integers(0, 4, n).tolist()
        pred = rng.integers(0, 4, n).tolist()
        both, sp, sl = brute_pairs(labels, pred)
        p, r = pairwise_precision_recall(labels, pred)
        assert p == pytest.approx(both / sp if sp else 1.0)
        assert r == pytest.approx(both / sl if sl else 1.0)


def test_precision_recall_hand_worked():
    # pred merges everything: precision = same-label pairs / all pairs = (3+1)/C(5,2) = 0.4, recall 1
    assert pairwise_precision_recall([0, 0, 0, 1, 1], [9] * 5) == (pytest.approx(0.4), 1.0)


def test_degenerate_accuracy():
    assert degenerate_accuracy([100, 0, 1, 100], [100, 0, 100, 3]) == 0.5
    with pytest.raises(ValueError):
        adjusted_rand_index([0, 1], [0])

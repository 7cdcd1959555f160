"""How well a judge's clustering of one group matches ground-truth strategy labels.

All functions take two equal-length integer sequences for ONE group (ids mean nothing across
groups) and are pure numpy over the contingency table. Degenerate responses are one more
cluster here (label 100 in the calibration sets), so dumping a buggy attempt into the
degenerate cluster costs precision, recall and ARI as well as degenerate accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from setrl.judge.base import DEGENERATE


def contingency(labels: Sequence[int], pred: Sequence[int]) -> np.ndarray:
    """(L, P) counts n_ij of responses with the i-th distinct label and the j-th distinct predicted id."""
    if len(labels) != len(pred):
        raise ValueError(f"labels ({len(labels)}) and pred ({len(pred)}) differ in length")
    _, li = np.unique(np.asarray(labels), return_inverse=True)
    _, pi = np.unique(np.asarray(pred), return_inverse=True)
    table = np.zeros((li.max(initial=-1) + 1, pi.max(initial=-1) + 1), dtype=np.int64)
    np.add.at(table, (li, pi), 1)
    return table


def _pairs(x: np.ndarray) -> np.ndarray:
    return x * (x - 1) // 2


def pair_counts(labels: Sequence[int], pred: Sequence[int]) -> tuple[int, int, int, int]:
    """(same-label-and-same-cluster pairs, same-cluster pairs, same-label pairs, all pairs)."""
    t = contingency(labels, pred)
    n = int(t.sum())
    return int(_pairs(t).sum()), int(_pairs(t.sum(0)).sum()), int(_pairs(t.sum(1)).sum()), n * (n - 1) // 2


def adjusted_rand_index(labels: Sequence[int], pred: Sequence[int]) -> float:
    """Hubert & Arabie's ARI: (index - expected) / (max - expected), from the contingency table.

    index = sum_ij C(n_ij, 2); a = sum_i C(a_i, 2) over label sizes; b = sum_j C(b_j, 2) over cluster
    sizes; expected = a * b / C(n, 2); max = (a + b) / 2. 1 = identical partitions, ~0 = chance,
    negative = worse than chance. When max == expected (both partitions all-singletons or both one
    cluster) the partitions are identical and ARI is 1, as in scikit-learn.
    """
    index, b, a, total = pair_counts(labels, pred)
    if total == 0:
        return 1.0
    expected = a * b / total
    maximum = (a + b) / 2
    if maximum == expected:
        return 1.0
    return float((index - expected) / (maximum - expected))


def pairwise_precision_recall(labels: Sequence[int], pred: Sequence[int]) -> tuple[float, float]:
    """precision = same-cluster pairs that share a label / same-cluster pairs (1 when there are none);
    recall = same-label pairs put in one cluster / same-label pairs (1 when there are none)."""
    both, same_cluster, same_label, _ = pair_counts(labels, pred)
    precision = both / same_cluster if same_cluster else 1.0
    recall = both / same_label if same_label else 1.0
    return precision, recall


def degenerate_accuracy(labels: Sequence[int], pred: Sequence[int], degenerate_id: int = DEGENERATE) -> float:
    """Fraction of responses whose degenerate-or-not verdict matches the label."""
    lab = np.asarray(labels) == degenerate_id
    prd = np.asarray(pred) == degenerate_id
    return float((lab == prd).mean()) if len(lab) else 1.0

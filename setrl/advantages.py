"""Per-group advantage estimators, registered by name (pure numpy; no Prefect).

One group = the N rollouts of one prompt. Every estimator maps that group's rewards
(N,) -- and, for the set-RL ones, the judge's strategy cluster ids (N,) -- to one
float64 advantage per rollout (N,), which the trainer broadcasts to every response
token of that rollout.

    est = get("poly_epo")
    adv = est(rewards, clusters, set_size=4)                     # (N,)
    advs = compute_batch("grpo", [r0, r1, ...])                  # ragged groups

Formulas: /work/shared/reference/algorithms.md. The exact Poly-EPO marginal
advantage uses the closed form derived there; tests/test_advantages.py checks it
against brute-force enumeration in exact rational arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

Array = np.ndarray


@dataclass(frozen=True)
class Estimator:
    """A registered advantage estimator.

    name: registry key. fn: the per-group function. needs_clusters: whether it reads
    judge cluster ids. doc: fn's docstring (formula, shapes, paper link).
    batch_fn: optional fast path over many ragged groups at once (same parameters).
    """

    name: str
    fn: Callable[..., Array]
    needs_clusters: bool
    doc: str
    batch_fn: Callable[..., list[Array]] | None = None

    def __call__(self, rewards, clusters=None, **params) -> Array:
        rewards = _as_rewards(rewards)
        if not self.needs_clusters:
            return self.fn(rewards, **params)
        return self.fn(rewards, _as_clusters(clusters, len(rewards), self.name), **params)


_REGISTRY: dict[str, Estimator] = {}


def register(name: str, needs_clusters: bool = False, batch_fn: Callable[..., list[Array]] | None = None):
    """Decorator: add `fn` to the registry under `name` (fn is returned unchanged)."""

    def deco(fn: Callable[..., Array]) -> Callable[..., Array]:
        if name in _REGISTRY:
            raise ValueError(f"advantage estimator {name!r} is already registered")
        _REGISTRY[name] = Estimator(name, fn, needs_clusters, fn.__doc__ or "", batch_fn)
        return fn

    return deco


def get(name: str) -> Estimator:
    """The Estimator registered as `name`; unknown names list the valid ones."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown advantage estimator {name!r}; valid: {names()}") from None


def names() -> list[str]:
    return sorted(_REGISTRY)


def compute_batch(name: str, rewards: Sequence, clusters: Sequence | None = None, **params) -> list[Array]:
    """Advantages for many ragged groups: rewards[g] (N_g,) -> list of (N_g,) arrays."""
    est = get(name)
    if clusters is None:
        if est.needs_clusters:
            raise ValueError(f"advantage estimator {name!r} needs cluster ids")
        clusters = [None] * len(rewards)
    if len(clusters) != len(rewards):
        raise ValueError(f"{len(rewards)} reward groups but {len(clusters)} cluster groups")
    if est.batch_fn is not None:
        rs = [_as_rewards(r) for r in rewards]
        cs = [_as_clusters(c, len(r), name) for r, c in zip(rs, clusters)]
        return est.batch_fn(rs, cs, **params)
    return [est(r, c, **params) for r, c in zip(rewards, clusters)]


def _as_rewards(rewards) -> Array:
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 1:
        raise ValueError(f"rewards must be 1-D (N,), got shape {r.shape}")
    return r


def _as_clusters(clusters, n: int, name: str) -> Array:
    if clusters is None:
        raise ValueError(f"advantage estimator {name!r} needs cluster ids")
    c = np.asarray(clusters)
    if c.shape != (n,):
        raise ValueError(f"clusters must have shape ({n},) like rewards, got {c.shape}")
    return c


# ---------------------------------------------------------------- GRPO family


@register("grpo")
def grpo(rewards: Array, eps: float = 1e-6) -> Array:
    """GRPO: A_i = (r_i - mean(r)) / (std(r) + eps) within the group.

    rewards (N,) -> (N,). std is the unbiased (ddof=1) one, as in verl's
    compute_grpo_outcome_advantage; a group of one has no baseline, so A = 0.
    Shao et al. 2024, DeepSeekMath, https://arxiv.org/abs/2402.03300
    """
    if len(rewards) < 2:
        return np.zeros(len(rewards))
    centred = rewards - rewards.mean()
    return centred / (rewards.std(ddof=1) + eps)


@register("dr_grpo")
def dr_grpo(rewards: Array) -> Array:
    """Dr.GRPO: A_i = r_i - mean(r) (no std normalisation).

    rewards (N,) -> (N,). The loss side (token-sum / max response length) lives in
    the trainer. Liu et al. 2025, https://arxiv.org/abs/2503.20783
    """
    return rewards - rewards.mean()


# ---------------------------------------------------------------- Poly-EPO

# Cluster ids that never count toward diversity: the reference implementation's
# "no code / gibberish" bucket; the code-generation replication also used 0.
DEGENERATE = frozenset({100})
REPLICATION_DEGENERATE = frozenset({0, 100})


def _binomial_table(N: int, n: int) -> Array:
    """tab[a + 1] = C(a, n-1) / C(N-1, n-1) for a in -1..N-1 (0 when a < n-1), (N+1,).

    Every binomial in the closed form is C(a, n-1) with a <= N-1, so dividing by
    C(N-1, n-1) -- the mean-aggregation divisor -- keeps values in [0, 1]. C(256, 8)
    style magnitudes never reach a float: Python's int / int is correctly rounded.
    """
    top = math.comb(N - 1, n - 1)
    return np.array([0.0] + [math.comb(a, n - 1) / top for a in range(N)])


def _poly_epo_flat(r, gid, cl, degenerate, N, n, gated):
    """Mean-aggregated marginal advantages for groups laid end to end.

    r (T,) rewards, gid (T,) group index 0..G-1 (each group contiguous or not),
    cl (T,) cluster ids, N (G,) group sizes, n the set size. Returns (T,).

    With C(a) = C(a, n-1) / C(N-1, n-1), K non-degenerate clusters of m_k members and
    reward sum rho_k, degenerate pool (m0, rho0), total reward rho, g = 1 if gated, the reference
    closed form summed over clusters is linear in four per-group moments:
        n^2 F / C(N-1, n-1) = K rho C(N-1) - rho M1 + M2 - g [M4 + rho0 M3 - K rho0 C(m0-1)]
        M1 = sum_k C(N-m_k-1), M2 = sum_k rho_k C(N-m_k-1),
        M3 = sum_k C(m_k+m0-1), M4 = sum_k rho_k C(m_k+m0-1).
    Dropping rollout i changes N, rho and (in the pool) m0, rho0 for every cluster,
    and m_j, rho_j for its own cluster j only, so F(P \\ {i}) is the same formula on
    moments re-evaluated at N-1 with rollout i's own cluster term swapped: O(1) per
    rollout after O(C) per group, all vectorised over the whole batch. A cluster left
    empty contributes exactly 0, so K need not change.
    """
    G = len(N)
    g = 1.0 if gated else 0.0
    is_deg = np.isin(cl, list(degenerate))

    # One binomial table per distinct group size; C(a) looks a up in its group's row.
    sizes, row_of_group = np.unique(N, return_inverse=True)
    tab = np.zeros((len(sizes), sizes.max() + 1))
    for row, size in enumerate(sizes):
        tab[row, : size + 1] = _binomial_table(int(size), n)

    def C(a, grp):
        """C(a, n-1) / C(N_grp - 1, n-1), elementwise; every a < 0 reads the 0 at column 0."""
        return tab[row_of_group[grp], np.maximum(a, -1) + 1]

    # Per-group totals (G,); the degenerate pool is (m0, rho0).
    rho = np.bincount(gid, r, G)
    m0 = np.bincount(gid[is_deg], minlength=G)
    rho0 = np.bincount(gid[is_deg], r[is_deg], G)

    # Non-degenerate clusters keyed by (group, cluster id) -> k; cluster ids of any
    # sortable dtype are first ranked so the key is a plain int64.
    _, cl_rank = np.unique(cl, return_inverse=True)
    n_ids = int(cl_rank.max()) + 1
    keys, k_of = np.unique(gid.astype(np.int64)[~is_deg] * n_ids + cl_rank[~is_deg], return_inverse=True)
    k_grp = keys // n_ids
    m_k = np.bincount(k_of, minlength=len(keys))
    rho_k = np.bincount(k_of, r[~is_deg], len(keys))
    K = np.bincount(k_grp, minlength=G)

    def moments(shift_N, shift_m0):
        """M1..M4 (G,) for a population of N + shift_N rollouts and m0 + shift_m0 in the pool."""
        b = C(N[k_grp] + shift_N - m_k - 1, k_grp)
        c = C(m_k + m0[k_grp] + shift_m0 - 1, k_grp)
        return (np.bincount(k_grp, b, G), np.bincount(k_grp, rho_k * b, G),
                np.bincount(k_grp, c, G), np.bincount(k_grp, rho_k * c, G))

    def n2F(grp, Np, rhop, m0p, rho0p, M1, M2, M3, M4):
        return (K[grp] * rhop * C(Np - 1, grp) - rhop * M1 + M2
                - g * (M4 + rho0p * M3 - K[grp] * rho0p * C(m0p - 1, grp)))

    all_g = np.arange(G)
    F = n2F(all_g, N, rho, m0, rho0, *moments(0, 0)) / n**2  # (G,)

    # Leave-one-out, per rollout (T,): moments at N-1 (and m0-1 for pool rollouts).
    S1, S2, S3, S4 = (s[gid] for s in moments(-1, 0))
    P3, P4 = (s[gid] for s in moments(-1, -1)[2:])
    Ng, m0g = N[gid], m0[gid]
    # Own cluster (m_j, rho_j) of each rollout; pool rollouts get (0, 0), overridden below.
    mj = np.zeros(len(r), np.int64)
    rj = np.zeros(len(r))
    mj[~is_deg], rj[~is_deg] = m_k[k_of], rho_k[k_of]
    # Own cluster j: old term (m_j, rho_j) at N-1 out, new term (m_j - 1, rho_j - r_i) in.
    M1 = S1 - C(Ng - 2 - mj, gid) + C(Ng - 1 - mj, gid)
    M2 = S2 - rj * C(Ng - 2 - mj, gid) + (rj - r) * C(Ng - 1 - mj, gid)
    M3 = S3 - C(mj + m0g - 1, gid) + C(mj + m0g - 2, gid)
    M4 = S4 - rj * C(mj + m0g - 1, gid) + (rj - r) * C(mj + m0g - 2, gid)
    # Pool rollouts leave every cluster term as is but shrink the pool.
    M1, M2 = np.where(is_deg, S1, M1), np.where(is_deg, S2, M2)
    M3, M4 = np.where(is_deg, P3, M3), np.where(is_deg, P4, M4)
    F_drop = n2F(gid, Ng - 1, rho[gid] - r, np.where(is_deg, m0g - 1, m0g),
                 np.where(is_deg, rho0[gid] - r, rho0[gid]), M1, M2, M3, M4) / n**2

    # A_i(mean) = [F(P) - F(P \ i) - (n/N) F(P)] / C(N-1, n-1); both F already carry
    # that divisor.
    return F[gid] * (1.0 - n / Ng) - F_drop


def poly_epo_batch(rewards: list[Array], clusters: list[Array], set_size: int = 4, aggregate: str = "mean",
                   degenerate=DEGENERATE, gate_single_cluster: bool = False) -> list[Array]:
    """`poly_epo` over ragged groups in one vectorised pass: list of (N_g,) -> list of (N_g,)."""
    if aggregate not in ("mean", "sum"):
        raise ValueError(f"aggregate must be 'mean' or 'sum', got {aggregate!r}")
    n = int(set_size)
    N = np.array([len(r) for r in rewards], dtype=np.int64)
    if n < 1:
        raise ValueError(f"set_size must be >= 1, got {set_size}")
    if len(N) == 0:
        return []
    if (N < n).any():
        g = int(np.argmax(N < n))
        raise ValueError(f"set_size={n} exceeds the group size N={N[g]} (group {g}); need set_size <= N")
    gid = np.repeat(np.arange(len(N)), N)
    flat = _poly_epo_flat(np.concatenate(rewards), gid, np.concatenate(clusters), frozenset(degenerate),
                          N, n, gate_single_cluster)
    if aggregate == "sum":
        # Sum over the C(N-1, n-1) sets holding i; Python ints keep the factor exact
        # until the single float conversion.
        flat = flat * np.array([float(math.comb(int(s) - 1, n - 1)) for s in N])[gid]
    return np.split(flat, np.cumsum(N)[:-1])


def poly_epo_replication_batch(rewards, clusters, set_size: int = 4) -> list[Array]:
    return poly_epo_batch(rewards, clusters, set_size, "sum", REPLICATION_DEGENERATE, True)


@register("poly_epo", needs_clusters=True, batch_fn=poly_epo_batch)
def poly_epo(rewards: Array, clusters: Array, set_size: int = 4, aggregate: str = "mean",
             degenerate=DEGENERATE, gate_single_cluster: bool = False) -> Array:
    """Poly-EPO exact marginal set advantage per rollout.

    rewards (N,) real, clusters (N,) judge strategy ids -> (N,).
    Over all C(N, n) size-n sets G (n = set_size):
        f(G)  = (1/n sum_{i in G} r_i) * d(G),  d(G) = (u(G) - g [u(G) == 1]) / n,
        u(G)  = distinct non-degenerate cluster ids in G, g = gate_single_cluster,
        A#(G) = f(G) - mean_G f,
        A_i   = sum (aggregate="sum") or mean (aggregate="mean") of A#(G) over G containing i.
    Computed in closed form from F(P) - F(P \\ {i}) (no enumeration), O(N + clusters).
    Group advantages sum to 0; set_size == N gives all zeros; set_size > N raises.
    Defaults follow the reference implementation; `poly_epo_replication` is the
    code-generation replication's preset (sum, degenerate {0, 100}, gate on).
    Poly-EPO: https://arxiv.org/abs/2604.17654; polychromic objectives:
    https://arxiv.org/abs/2509.25424
    """
    return poly_epo_batch([rewards], [clusters], set_size, aggregate, degenerate, gate_single_cluster)[0]


@register("poly_epo_replication", needs_clusters=True, batch_fn=poly_epo_replication_batch)
def poly_epo_replication(rewards: Array, clusters: Array, set_size: int = 4) -> Array:
    """`poly_epo` with the code-generation replication's choices: aggregate="sum",
    degenerate ids {0, 100}, single-cluster gate on (d(G) = 0 when u(G) <= 1).

    rewards (N,), clusters (N,) -> (N,). https://arxiv.org/abs/2604.17654
    """
    return poly_epo(rewards, clusters, set_size, "sum", REPLICATION_DEGENERATE, True)


# ---------------------------------------------------------------- other exploration baselines


@register("pass_at_k")
def pass_at_k(rewards: Array, k: int = 4) -> Array:
    """Pass@k training advantage (analytic form), binary rewards.

    rewards (N,) in {0, 1}, c = number correct, 1 <= k <= N -> (N,):
        Rbar = 1 - C(N-c, k) / C(N, k),  sigma = sqrt(Rbar (1 - Rbar))
        correct:   A = (1 - Rbar) / sigma
        incorrect: A = (1 - Rbar - C(N-c-1, k-1) / C(N-1, k-1)) / sigma
    sigma = 0 (no correct rollout, or every k-subset holds one) gives A = 0.
    The group sums to 0. Chen et al. 2025, Pass@k Training,
    https://arxiv.org/abs/2508.10751
    """
    N = len(rewards)
    k = int(k)
    if not 1 <= k <= N:
        raise ValueError(f"pass_at_k advantage needs 1 <= k <= N, got k={k}, N={N}")
    if not np.isin(rewards, (0.0, 1.0)).all():
        raise ValueError("pass_at_k advantage needs binary rewards in {0, 1}")
    correct = rewards == 1.0
    c = int(correct.sum())
    # int / int is correctly rounded even when the binomials exceed float range.
    rbar = 1.0 - math.comb(N - c, k) / math.comb(N, k)
    sigma = math.sqrt(rbar * (1.0 - rbar))
    if sigma == 0.0:
        return np.zeros(N)
    miss = math.comb(N - c - 1, k - 1) / math.comb(N - 1, k - 1) if N - c >= 1 else 0.0
    return np.where(correct, 1.0 - rbar, 1.0 - rbar - miss) / sigma


@register("uniqueness", needs_clusters=True)
def uniqueness(rewards: Array, clusters: Array, alpha: float = 1.0) -> Array:
    """Uniqueness-aware scaling of Dr.GRPO advantages.

    rewards (N,), clusters (N,) -> (N,):
        A_i = (r_i - mean(r)) / s_i^alpha  if r_i > 0 (correct), else r_i - mean(r),
        s_i = number of correct rollouts sharing i's cluster id (>= 1).
    A correct solution whose strategy many other correct ones share gets less credit;
    incorrect rollouts keep their Dr.GRPO advantage. Degenerate ids are ordinary
    clusters here (one pooled bucket), so judge failures are not rewarded as unique.
    The group no longer sums to 0. Uniqueness-aware RL for creative problem solving:
    https://arxiv.org/abs/2601.08763
    """
    adv = dr_grpo(rewards)
    correct = rewards > 0
    if not correct.any():
        return adv
    ids, inverse, counts = np.unique(clusters[correct], return_inverse=True, return_counts=True)
    adv[correct] = adv[correct] / counts[inverse].astype(np.float64) ** alpha
    return adv

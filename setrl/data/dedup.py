"""Contamination control for evaluation problems: release-date filtering and deduplication against
the training set (normalised-title match, then character 5-gram near-duplicate text).

Near duplicates are judged by the Jaccard similarity of the sets of character 5-grams of the
normalised statements, J(A, B) = |A ∩ B| / |A ∪ B|. Comparing every eval/train pair exactly is
quadratic in text length, so MinHash signatures (`NUM_PERM` hash functions h_i(x) = a_i x + b_i mod 2^64
over the mixed shingle codes; P[min h_i(A) = min h_i(B)] ~= J(A, B)) pick candidate pairs whose estimate lies within `CANDIDATE_MARGIN` of the threshold, and the
decision and the reported similarity use the exact Jaccard of those candidates. With 128
permutations the estimate's standard deviation is at most 0.044, so a true near duplicate falls
outside the margin with probability well under 1e-3.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime

import numpy as np

from setrl.problem import Problem

SHINGLE = 5
NUM_PERM = 128
CANDIDATE_MARGIN = 0.15
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def normalise_title(title: str) -> str:
    """'Two Sum', 'two-sum' and 'Two  sum!' all become 'two sum' (accents folded, punctuation dropped)."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    return " ".join(re.findall(r"[a-z0-9]+", folded))


def normalise_text(text: str) -> str:
    """Case and whitespace differences (HTML vs markdown renderings of a statement) do not count."""
    return " ".join(text.lower().split())


def _release_day(value: str) -> date:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()


def filter_by_release(problems: list[Problem], after: str) -> list[Problem]:
    """Problems whose meta["release_date"] is on or after the day `after` (ISO date or datetime).

    A problem without a release date cannot be shown to postdate training, so it is dropped.
    """
    cutoff = _release_day(after)
    return [p for p in problems if p.meta.get("release_date") and _release_day(p.meta["release_date"]) >= cutoff]


def _mix(x: np.ndarray) -> np.ndarray:
    # splitmix64 finaliser: spreads the polynomial shingle code over all 64 bits.
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def shingle_hashes(text: str, k: int = SHINGLE) -> np.ndarray:
    """Sorted unique 64-bit hashes of the character k-grams of normalise_text(text); shape (n,)."""
    t = normalise_text(text)
    if not t:
        return np.zeros(0, dtype=np.uint64)
    cps = np.frombuffer(t.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if len(cps) < k:  # a text shorter than one shingle is its own single shingle
        cps = np.concatenate([cps, np.zeros(k - len(cps), dtype=np.uint64)])
    n = len(cps) - k + 1
    code = np.zeros(n, dtype=np.uint64)
    for j in range(k):  # polynomial code of each window, wrapping mod 2^64
        code = code * np.uint64(1_000_003) + cps[j:j + n]
    return np.unique(_mix(code))


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted unique hash arrays (0 when both are empty)."""
    if len(a) == 0 and len(b) == 0:
        return 0.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def minhash_signatures(sets: list[np.ndarray], num_perm: int = NUM_PERM, seed: int = 0) -> np.ndarray:
    """MinHash signature of each set; shape (len(sets), num_perm). Empty sets get all-max rows
    (they then match only other empty sets, which `jaccard` scores 0)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 2**63, size=num_perm, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64)
    sig = np.full((len(sets), num_perm), np.iinfo(np.uint64).max, dtype=np.uint64)
    nonempty = [i for i, s in enumerate(sets) if len(s)]
    if not nonempty:
        return sig
    flat = np.concatenate([sets[i] for i in nonempty])  # (total,)
    starts = np.cumsum([0] + [len(sets[i]) for i in nonempty[:-1]])
    # One pass over all shingles per hash function, min within each set: an odd multiplier makes
    # a*x+b a permutation of the (already mixed) codes, so each column is one MinHash draw.
    for p in range(num_perm):
        sig[nonempty, p] = np.minimum.reduceat(flat * a[p] + b[p], starts)
    return sig


def _text(p: Problem) -> str:
    return p.meta.get("statement") or p.prompt


def deduplicate(eval_problems: list[Problem], train_problems: list[Problem],
                threshold: float = 0.8) -> tuple[list[Problem], list[dict]]:
    """Drop eval problems that duplicate a training problem.

    Returns (kept eval problems in their order, removed records). A record is
    {problem_id, reason, matched_id, similarity, title, matched_title}; reason is "title_match"
    (equal normalise_title, similarity 1.0) or "near_duplicate" (exact 5-gram Jaccard >= threshold
    with the most similar training problem).
    """
    train_titles = {}
    for t in train_problems:
        train_titles.setdefault(normalise_title(t.title), t)
    removed, rest = [], []
    for p in eval_problems:
        key = normalise_title(p.title)
        match = train_titles.get(key) if key else None
        if match is not None:
            removed.append({"problem_id": p.problem_id, "reason": "title_match", "matched_id": match.problem_id,
                            "similarity": 1.0, "title": p.title, "matched_title": match.title})
        else:
            rest.append(p)

    if rest and train_problems:
        eval_sets = [shingle_hashes(_text(p)) for p in rest]
        train_sets = [shingle_hashes(_text(t)) for t in train_problems]
        eval_sig, train_sig = minhash_signatures(eval_sets), minhash_signatures(train_sets)
        for i, p in enumerate(rest):
            estimate = (train_sig == eval_sig[i]).mean(axis=1)  # (n_train,)
            best_j, best = -1, 0.0
            for j in np.flatnonzero(estimate >= threshold - CANDIDATE_MARGIN):
                sim = jaccard(eval_sets[i], train_sets[j])
                if sim > best:
                    best_j, best = int(j), sim
            if best_j >= 0 and best >= threshold:
                m = train_problems[best_j]
                removed.append({"problem_id": p.problem_id, "reason": "near_duplicate", "matched_id": m.problem_id,
                                "similarity": round(best, 4), "title": p.title, "matched_title": m.title})
    removed_ids = {r["problem_id"] for r in removed}
    kept = [p for p in eval_problems if p.problem_id not in removed_ids]
    return kept, removed

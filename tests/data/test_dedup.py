"""Contamination control: title match, near-duplicate text (MinHash candidates checked against a
brute-force exact Jaccard twin), release filtering and the speed at study scale."""

from __future__ import annotations

import random
import time

import numpy as np

from setrl.config import DatasetSpec
from setrl.data import load_problems
from setrl.data.dedup import (deduplicate, filter_by_release, jaccard, minhash_signatures, normalise_title,
                              shingle_hashes)
from setrl.problem import Problem
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"


def _problem(title: str, text: str, source: str = "livecodebench", **meta) -> Problem:
    return Problem(source=source, title=title, prompt=f"prompt for {title}", entry_point="f", test_style="check",
                   tests="def check(candidate): pass", meta={"statement": text, **meta})


def _brute_force(eval_problems, train_problems, threshold):
    """Readable twin: exact 5-gram Jaccard over every pair, after the title rule."""
    def grams(p):
        t = " ".join(p.meta["statement"].lower().split())
        return {t[i:i + 5] for i in range(max(1, len(t) - 4))} if t else set()

    titles = {normalise_title(t.title) for t in train_problems}
    train_grams = [grams(t) for t in train_problems]
    removed = {}
    for e in eval_problems:
        if normalise_title(e.title) and normalise_title(e.title) in titles:
            removed[e.problem_id] = "title_match"
            continue
        g = grams(e)
        best = max((len(g & t) / len(g | t) for t in train_grams if g | t), default=0.0)
        if best >= threshold:
            removed[e.problem_id] = "near_duplicate"
    return removed


def test_normalise_title():
    assert normalise_title("Two Sum") == normalise_title("two-sum") == normalise_title(" Two  sum! ") == "two sum"
    assert normalise_title("Café_Orders (II)") == "cafe orders ii"
    assert normalise_title("---") == ""


def test_fixture_sets_title_duplicate_and_near_duplicate_are_removed_and_recorded():
    train = load_problems(DatasetSpec(source="leetcode", path=str(FIXTURES / "leetcode_sample.jsonl")))
    evals = load_problems(DatasetSpec(source="livecodebench", split="test", path=str(FIXTURES / "livecodebench_sample.jsonl")))
    kept, removed = deduplicate(evals, train, threshold=0.8)
    by_title = {t.problem_id: t.title for t in train}
    records = {r["title"]: r for r in removed}
    assert set(records) == {"Two Sum", "largest-odd-binary-arrangement"}
    assert records["Two Sum"]["reason"] == "title_match" and by_title[records["Two Sum"]["matched_id"]] == "two-sum"
    near = records["largest-odd-binary-arrangement"]
    assert near["reason"] == "near_duplicate" and by_title[near["matched_id"]] == "maximum-odd-binary-number"
    assert 0.8 <= near["similarity"] < 1.0
    assert [p.title for p in kept] == [p.title for p in evals if p.title not in records]
    assert all(set(r) >= {"problem_id", "reason", "matched_id", "similarity"} for r in removed)


def _variant(rng: random.Random, words: list[str], base: list[str], keep: float) -> str:
    return " ".join(w if rng.random() < keep else rng.choice(words) for w in base)


def test_matches_brute_force_twin_across_similarity_levels():
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 7))) for _ in range(400)]
    bases = [[rng.choice(words) for _ in range(120)] for _ in range(30)]
    train = [_problem(f"train {i}", " ".join(b), source="leetcode") for i, b in enumerate(bases)]
    evals = [_problem(f"eval {i}", _variant(rng, words, bases[i % 30], keep)) for i, keep in
             enumerate([1.0, 0.99, 0.97, 0.95, 0.9, 0.85, 0.8, 0.6, 0.3, 0.0] * 4)]
    evals.append(_problem("Train 3", "unrelated text entirely"))  # title rule
    evals.append(_problem("empty", ""))
    for threshold in (0.5, 0.8, 0.9):
        kept, removed = deduplicate(evals, train, threshold=threshold)
        want = _brute_force(evals, train, threshold)
        assert {r["problem_id"]: r["reason"] for r in removed} == want
        assert len(kept) + len(removed) == len(evals)
    assert 0 < len(_brute_force(evals, train, 0.8)) < len(evals)  # the grid straddles the threshold


def test_minhash_estimate_tracks_exact_jaccard():
    rng = random.Random(1)
    words = ["".join(rng.choice("klmnopqrst") for _ in range(rng.randint(3, 8))) for _ in range(300)]
    base = [rng.choice(words) for _ in range(300)]
    texts = [" ".join(base)] + [_variant(rng, words, base, keep) for keep in np.linspace(0.5, 1.0, 12)]
    sets = [shingle_hashes(t) for t in texts]
    sig = minhash_signatures(sets)
    for i in range(1, len(sets)):
        estimate = float((sig[0] == sig[i]).mean())
        assert abs(estimate - jaccard(sets[0], sets[i])) < 0.15


def test_filter_by_release_is_inclusive_and_drops_undated():
    ps = [_problem("a", "x", release_date="2025-01-31T23:59:59"), _problem("b", "y", release_date="2025-02-01T00:00:00"),
          _problem("c", "z", release_date="2025-06-01"), _problem("d", "w")]
    assert [p.title for p in filter_by_release(ps, "2025-02-01")] == ["b", "c"]
    assert [p.title for p in filter_by_release(ps, "2025-02-02T12:00:00Z")] == ["c"]


def test_study_scale_runs_in_seconds():
    """2k train x 1k eval statements of LeetCode length (~1.2k-1.5k characters)."""
    rng = random.Random(2)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(3000)]
    train = [_problem(f"t{i}", " ".join(rng.choice(words) for _ in range(200)), source="leetcode") for i in range(2000)]
    evals = [_problem(f"e{i}", " ".join(rng.choice(words) for _ in range(250))) for i in range(1000)]
    evals[7] = _problem("copy", train[11].meta["statement"] + " with a short note")
    start = time.perf_counter()
    kept, removed = deduplicate(evals, train)
    elapsed = time.perf_counter() - start
    assert [r["title"] for r in removed] == ["copy"] and len(kept) == 999
    assert elapsed < 10, f"dedup took {elapsed:.1f}s"

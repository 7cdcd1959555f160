"""The tiny task family: determinism, schema, reference solutions, split hygiene, calibration set."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from setrl.config import DatasetSpec
from setrl.data import load_problems, tiny
from setrl.data.tiny_templates import HELDOUT, INT_ARGS, LIST_ARGS, STR_ARGS, TRAIN
from setrl.problem import Problem

REPO = Path(__file__).resolve().parents[2]


def spec(split: str, limit: int | None = None, seed: int = 0) -> DatasetSpec:
    return DatasetSpec(source="tiny", split=split, limit=limit, seed=seed)


def run_check(problem, code: str) -> bool:
    """Trusted in-process run: only for the generator's own reference programs."""
    ns: dict = {}
    try:
        exec(code + "\n" + problem.tests, ns)
        ns["check"](ns[problem.entry_point])
        return True
    except Exception:
        return False


def test_load_is_deterministic_and_limit_is_a_prefix():
    a = load_problems(spec("train", 40))
    b = tiny.load(spec("train", 40))
    assert [p.problem_id for p in a] == [p.problem_id for p in b]
    longer = tiny.load(spec("train", 80))
    assert [p.problem_id for p in longer[:40]] == [p.problem_id for p in a]
    assert len({p.problem_id for p in longer}) == 80
    other_seed = tiny.load(spec("train", 40, seed=1))
    assert {p.problem_id for p in other_seed} != {p.problem_id for p in a}


def test_default_sizes_and_unknown_split():
    assert len(tiny.load(spec("heldout"))) == tiny.DEFAULT_SIZE["heldout"]
    with pytest.raises(ValueError, match="valid: train, heldout"):
        tiny.load(spec("test"))


def test_schema_matches_the_real_datasets():
    for p in tiny.load(spec("heldout", 14)):
        assert p.source == "tiny" and p.test_style == "check"
        assert p.prompt.startswith(f"def {p.entry_point}(") and p.prompt.endswith('"""\n')
        assert p.tests.startswith("def check(candidate):")
        assert p.meta["template"] in tiny.HELDOUT_TEMPLATES
        assert len(p.meta["strategies"]) >= 3
        json.dumps(p.to_dict())  # the store keeps problems as JSON


def test_splits_use_disjoint_templates():
    assert not set(tiny.TRAIN_TEMPLATES) & set(tiny.HELDOUT_TEMPLATES)
    assert set(tiny.TEMPLATES) == set(tiny.TRAIN_TEMPLATES) | set(tiny.HELDOUT_TEMPLATES)
    assert {p.meta["template"] for p in tiny.load(spec("train", 200))} == set(tiny.TRAIN_TEMPLATES)


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_reference_solutions_pass_and_bugs_fail(split):
    count = 3 * len(tiny.SPLITS[split])  # three instances of every template
    for p in tiny.load(spec(split, count, seed=7)):
        sols = tiny.solutions(p)
        assert {s["strategy"] for s in sols if s["correct"]} == set(p.meta["strategies"])
        for s in sols:
            assert s["code"].startswith(p.prompt)
            assert run_check(p, s["code"]) == s["correct"], (p.meta["template"], s["strategy"], s["code"])


def test_strategies_are_genuinely_different_code():
    p = tiny.load(spec("train", 1))[0]
    bodies = [s["code"][len(p.prompt):] for s in tiny.solutions(p) if s["correct"]]
    assert len(set(bodies)) == len(bodies) >= 4


def _doc_pattern(doc: str) -> re.Pattern:
    """A held-out docstring with its placeholders widened to every name/constant they can take."""
    alt = {"xs": LIST_ARGS, "s": STR_ARGS, "n": INT_ARGS}
    pat = re.escape(doc)
    for key, pool in alt.items():
        pat = pat.replace(re.escape("$" + key), "(?:" + "|".join(pool) + ")")
    pat = pat.replace(re.escape("$k"), r"-?\d+").replace(re.escape("$c"), ".")
    return re.compile(pat)


def test_sft_corpus_contains_no_heldout_template():
    pairs = tiny.sft_examples(3000, seed=0)
    patterns = [_doc_pattern(t.doc) for t in HELDOUT]
    for prompt, _ in pairs:
        assert not any(pat.search(prompt) for pat in patterns), prompt


def test_no_training_body_is_a_heldout_solution():
    """Not even a buggy training variant may spell out a held-out answer (e.g. the "count" bug of
    sum_positive would be count_positive's solution): the corpus would leak it."""
    heldout = {b: t.name for t in HELDOUT for b in t.strategies.values()}
    for t in TRAIN:
        for body in list(t.strategies.values()) + [b for _, b in t.bugs]:
            assert body not in heldout, (t.name, heldout.get(body))


def _shingles(text: str, k: int = 5) -> set[str]:
    t = " ".join(text.lower().split())
    return {t[i:i + k] for i in range(len(t) - k + 1)}


def test_heldout_prompts_are_not_near_duplicates_of_train():
    """Eval problems similar to training ones (char 5-gram Jaccard >= 0.8) get dropped by the
    prepare stage's dedup; held-out tiny problems must survive it."""
    train = [_shingles(p.prompt) for p in tiny.load(spec("train", 160))]
    for p in tiny.load(spec("heldout", 48)):
        s = _shingles(p.prompt)
        assert max(len(s & t) / len(s | t) for t in train) < 0.8, p.prompt


def test_calibration_groups_are_well_formed():
    groups = tiny.calibration_groups(n_groups=6, seed=3)
    assert groups == tiny.calibration_groups(n_groups=6, seed=3)
    for g in groups:
        assert len(g["responses"]) == len(g["labels"]) == len(g["strategies"]) == 8
        assert g["labels"].count(tiny.DEGENERATE_LABEL) == 1
        real = [lab for lab in g["labels"] if lab != tiny.DEGENERATE_LABEL]
        assert sorted(set(real)) == list(range(len(set(real)))) and len(set(real)) >= 2
        by_label = {}
        for lab, s in zip(g["labels"], g["strategies"]):
            assert by_label.setdefault(lab, s) == s  # one label per strategy name
        prompt = g["problem"]["prompt"]
        assert all(r.startswith(prompt) for r in g["responses"])


def test_shipped_calibration_file_is_the_generator_output():
    path = REPO / "data" / "calibration" / "tiny.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 24
    assert lines == json.loads(json.dumps(tiny.calibration_groups()))
    assert any(not run_check(Problem.from_dict(g["problem"]), r)
               for g in lines for r, s in zip(g["responses"], g["strategies"]) if s != "degenerate")

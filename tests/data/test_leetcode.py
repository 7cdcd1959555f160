"""LeetCodeDataset loader on upstream-schema fixture rows, and its problems through the real sandbox."""

from __future__ import annotations

import json
import shutil

import pytest

from setrl.config import DatasetSpec
from setrl.data import leetcode, load_problems
from setrl.data.hub import DatasetUnavailable
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "leetcode_sample.jsonl"


def _spec(**kw) -> DatasetSpec:
    return DatasetSpec(source="leetcode", path=str(FIXTURE), **kw)


def test_rows_become_check_problems():
    problems = load_problems(_spec())
    assert [p.title for p in problems] == ["two-sum", "reverse-linked-list", "maximum-depth-of-binary-tree",
                                           "maximum-odd-binary-number", "climbing-stairs"]
    p = problems[0]
    assert p.source == "leetcode" and p.test_style == "check"
    assert p.entry_point == "Solution().twoSum"  # the expression upstream grades with
    assert p.tests.startswith("def check(candidate):")
    assert "class ListNode" in p.prelude and "def tree_node" in p.prelude
    assert "Given an array of integers nums" in p.prompt and "def twoSum(self" in p.prompt
    assert "```python block" in p.prompt
    assert p.meta["difficulty"] == "Easy" and p.meta["question_id"] == 1
    assert p.meta["release_date"].startswith("2015-08-07") and p.meta["platform"] == "leetcode"
    assert p.meta["tags"] == ["Array", "Hash Table"]
    assert p.meta["reference_solution"].startswith("class Solution:")


def test_problem_ids_are_stable_and_distinct():
    a, b = load_problems(_spec()), load_problems(_spec())
    assert [p.problem_id for p in a] == [p.problem_id for p in b]
    assert len({p.problem_id for p in a}) == len(a)


def test_limit_is_a_seeded_order_independent_subset():
    full = load_problems(_spec())
    picked = load_problems(_spec(limit=3, seed=1))
    assert len(picked) == 3 and {p.problem_id for p in picked} <= {p.problem_id for p in full}
    assert [p.problem_id for p in picked] == [p.problem_id for p in load_problems(_spec(limit=3, seed=1))]


def test_parquet_and_snapshot_directory_give_the_same_problems(tmp_path):
    import pandas as pd

    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    pd.DataFrame(rows).to_parquet(tmp_path / "lc.parquet")
    snapshot = tmp_path / "LeetCodeDataset"  # what `hf download newfacade/LeetCodeDataset` leaves
    snapshot.mkdir()
    shutil.copy(FIXTURE, snapshot / "LeetCodeDataset-train.jsonl")
    (snapshot / "LeetCodeDataset-test.jsonl").write_text(FIXTURE.read_text().splitlines()[0] + "\n")
    want = [p.problem_id for p in load_problems(_spec())]
    assert [p.problem_id for p in load_problems(DatasetSpec(source="leetcode", path=str(tmp_path / "lc.parquet")))] == want
    assert [p.problem_id for p in load_problems(DatasetSpec(source="leetcode", path=str(snapshot)))] == want
    test_split = load_problems(DatasetSpec(source="leetcode", path=str(snapshot), split="test"))
    assert [p.title for p in test_split] == ["two-sum"]
    with pytest.raises(ValueError, match="no split 'validation'"):
        load_problems(DatasetSpec(source="leetcode", path=str(snapshot), split="validation"))


def test_save_to_disk_copies_load(tmp_path):
    import datasets

    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "one"))
    datasets.DatasetDict({"train": datasets.Dataset.from_list(rows[1:]),
                          "test": datasets.Dataset.from_list(rows[:1])}).save_to_disk(str(tmp_path / "both"))
    assert len(load_problems(DatasetSpec(source="leetcode", path=str(tmp_path / "one")))) == 5
    assert [p.title for p in load_problems(DatasetSpec(source="leetcode", path=str(tmp_path / "both"), split="test"))] == ["two-sum"]


def test_missing_local_file_and_offline_hub_fail_clearly(monkeypatch, tmp_path):
    from huggingface_hub import constants

    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_problems(DatasetSpec(source="leetcode", path=str(tmp_path / "nope.jsonl")))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(DatasetUnavailable) as err:
        load_problems(DatasetSpec(source="leetcode"))
    msg = str(err.value)
    assert "newfacade/LeetCodeDataset" in msg and "hf download" in msg and "pipeline.yaml" in msg


def test_row_missing_fields_is_named():
    with pytest.raises(ValueError, match="two-sum.*entry_point"):
        leetcode.problem_from_row({"task_id": "two-sum", "problem_description": "x", "starter_code": "y",
                                   "test": "def check(c): pass", "prompt": "import math"})


# Wrong answers that still define the expected method, so only the tests can tell.
WRONG = {
    "two-sum": "class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]\n",
    "reverse-linked-list": "class Solution:\n    def reverseList(self, head):\n        return head\n",
    "maximum-depth-of-binary-tree": "class Solution:\n    def maxDepth(self, root):\n        return 1 if root else 0\n",
    "maximum-odd-binary-number": "class Solution:\n    def maximumOddBinaryNumber(self, s):\n        return ''.join(sorted(s, reverse=True))\n",
    "climbing-stairs": "class Solution:\n    def climbStairs(self, n):\n        return n\n",
}


def test_reference_completions_pass_and_wrong_ones_fail_in_the_sandbox():
    sandbox = pytest.importorskip("setrl.sandbox")
    from setrl.generation import program_from_completion

    problems = load_problems(_spec())
    jobs = []
    for p in problems:
        # the model answers in a fenced block; the sandbox gets the prelude separately
        answer = f"Here is my solution.\n```python\n{p.meta['reference_solution']}```\n"
        jobs.append(sandbox.job_from_problem(p, program_from_completion(p, answer), f"{p.title}/ref"))
        jobs.append(sandbox.job_from_problem(p, WRONG[p.title], f"{p.title}/wrong"))
    verdicts = {v.id: v for v in sandbox.run_jobs(jobs, workers=2, timeout_s=10.0)}
    for p in problems:
        ref, wrong = verdicts[f"{p.title}/ref"], verdicts[f"{p.title}/wrong"]
        assert ref.passed, (p.title, ref.status, ref.reason)
        assert not wrong.passed and wrong.status == "failed", (p.title, wrong.status, wrong.reason)

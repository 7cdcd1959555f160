"""LiveCodeBench loader and the restricted unpickler, on upstream-schema fixture rows; stdin and
functional problems through the real sandbox."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib

import pytest

from setrl.config import DatasetSpec
from setrl.data import livecodebench, load_problems
from setrl.data.safe_pickle import UnsafePickleError, decode_test_cases, loads_plain_string
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "livecodebench_sample.jsonl"


def _spec(**kw) -> DatasetSpec:
    return DatasetSpec(source="livecodebench", split="test", path=str(FIXTURE), **kw)


def _by_title(problems):
    return {p.title: p for p in problems}


def test_stdin_and_functional_rows_with_public_then_private_tests():
    problems = _by_title(load_problems(_spec()))
    assert len(problems) == 6
    stdin = problems["Reverse Words"]  # private tests compressed upstream
    assert stdin.test_style == "stdin" and stdin.entry_point == ""
    assert stdin.tests == [{"input": "2\nhello world\na b c\n", "output": "world hello\nc b a\n"},
                           {"input": "1\none\n", "output": "one\n"}, {"input": "1\nx y\n", "output": "y x\n"}]
    assert "standard input" in stdin.prompt and "```python block" in stdin.prompt
    plain = problems["Sum of Three"]  # private tests stored as plain JSON
    assert [t["output"] for t in plain.tests] == ["6\n", "60\n", "0\n"]
    func = problems["count-pairs-with-sum-divisible"]
    assert func.test_style == "functional" and func.entry_point == "countPairs"
    assert func.tests[0] == {"input": "[1, 2, 3, 4, 5]\n3", "output": "4"} and len(func.tests) == 3
    assert "def countPairs" in func.prompt and "```python block" in func.prompt
    assert func.meta == {**func.meta, "platform": "leetcode", "question_id": "3700", "contest_id": "weekly-contest-440",
                         "difficulty": "easy", "n_public_tests": 1}
    assert func.meta["release_date"].startswith("2025-03-09")
    assert all("from collections import *" in p.prelude for p in problems.values())
    json.dumps([p.to_dict() for p in problems.values()])  # storable as is


def test_release_after_keeps_problems_on_or_after_the_day():
    kept = load_problems(_spec(release_after="2025-02-01"))
    assert sorted(p.title for p in kept) == ["Reverse Words", "Two Sum", "count-pairs-with-sum-divisible",
                                             "largest-odd-binary-arrangement"]
    assert {p.title for p in load_problems(_spec(release_after="2025-03-16T00:00:00"))} == {
        "Two Sum", "largest-odd-binary-arrangement"}


def test_snapshot_directory_reads_every_release_file(tmp_path):
    lines = FIXTURE.read_text().splitlines(keepends=True)
    (tmp_path / "test.jsonl").write_text("".join(lines[:3]))  # release_v1
    (tmp_path / "test6.jsonl").write_text("".join(lines[3:]))  # a later release
    (tmp_path / "README.md").write_text("not data")
    got = load_problems(DatasetSpec(source="livecodebench", split="test", path=str(tmp_path)))
    assert sorted(p.problem_id for p in got) == sorted(p.problem_id for p in load_problems(_spec()))


def test_functional_row_without_func_name_is_refused():
    row = json.loads(FIXTURE.read_text().splitlines()[2])
    row["metadata"] = "{}"
    with pytest.raises(ValueError, match="3700.*func_name"):
        livecodebench.problem_from_row(row)


def _b64z(payload: bytes) -> str:
    return base64.b64encode(zlib.compress(payload)).decode()


def test_compressed_tests_round_trip_and_plain_json_passes_through():
    cases = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    assert decode_test_cases(_b64z(pickle.dumps(json.dumps(cases)))) == cases
    assert decode_test_cases(_b64z(pickle.dumps(json.dumps(cases).encode()))) == cases
    assert decode_test_cases(json.dumps(cases)) == cases
    assert decode_test_cases("") == []
    with pytest.raises(ValueError, match="neither JSON nor base64"):
        decode_test_cases("not base64 at all!")


class _RunsShell:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _EvalsCode:
    def __reduce__(self):
        return (eval, ("__import__('os').getpid()",))


def test_malicious_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    for protocol in (0, 2, pickle.HIGHEST_PROTOCOL):  # GLOBAL / STACK_GLOBAL opcodes + REDUCE
        blob = _b64z(pickle.dumps(_RunsShell(marker), protocol=protocol))
        with pytest.raises(UnsafePickleError, match="system"):
            decode_test_cases(blob)
        with pytest.raises(UnsafePickleError, match="eval"):
            decode_test_cases(_b64z(pickle.dumps(_EvalsCode(), protocol=protocol)))
    # a payload nested inside an innocent-looking list is refused just the same
    with pytest.raises(UnsafePickleError):
        loads_plain_string(pickle.dumps(["[]", _RunsShell(marker)]))
    assert not marker.exists()


def test_pickle_of_anything_but_a_string_is_refused():
    with pytest.raises(UnsafePickleError, match="list"):
        loads_plain_string(pickle.dumps([{"input": "1", "output": "1"}]))
    with pytest.raises(UnsafePickleError, match="only plain"):
        loads_plain_string(pickle.dumps({1, 2}, protocol=2))  # protocol 2 builds sets via builtins.set


CORRECT = {
    "Sum of Three": "print(sum(map(int, input().split())))\n",
    "Reverse Words": "t = int(input())\nfor _ in range(t):\n    print(' '.join(input().split()[::-1]))\n",
    "count-pairs-with-sum-divisible": (
        "class Solution:\n    def countPairs(self, nums: List[int], k: int) -> int:\n"
        "        return sum((a + b) % k == 0 for a, b in combinations(nums, 2))\n"),
    "minimum-coins-to-pay": (
        "class Solution:\n    def minCoins(self, amount):\n"
        "        return amount // 10 + amount % 10 // 5 + amount % 5\n"),
}
WRONG = {
    "Sum of Three": "a, b, c = map(int, input().split())\nprint(a + b)\n",
    "Reverse Words": "t = int(input())\nfor _ in range(t):\n    print(input())\n",
    "count-pairs-with-sum-divisible": "class Solution:\n    def countPairs(self, nums, k):\n        return len(nums)\n",
    "minimum-coins-to-pay": "class Solution:\n    def minCoins(self, amount):\n        return amount // 10\n",
}


def test_correct_programs_pass_and_wrong_ones_fail_in_the_sandbox():
    sandbox = pytest.importorskip("setrl.sandbox")
    from setrl.generation import program_from_completion

    problems = _by_title(load_problems(_spec()))
    jobs = []
    for title in CORRECT:
        p = problems[title]
        answer = f"```python\n{CORRECT[title]}```"
        jobs.append(sandbox.job_from_problem(p, program_from_completion(p, answer), f"{title}/ok"))
        jobs.append(sandbox.job_from_problem(p, WRONG[title], f"{title}/wrong"))
    verdicts = {v.id: v for v in sandbox.run_jobs(jobs, workers=2, timeout_s=10.0)}
    for title in CORRECT:
        ok, wrong = verdicts[f"{title}/ok"], verdicts[f"{title}/wrong"]
        assert ok.passed, (title, ok.status, ok.reason)
        assert not wrong.passed and wrong.status == "failed", (title, wrong.status, wrong.reason)

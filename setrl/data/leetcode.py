"""LeetCodeDataset (`newfacade/LeetCodeDataset`, v0.3.1 jsonl) -> `Problem`s of test style "check".

Upstream row (flat, human-eval shaped): task_id ("two-sum"), question_id, difficulty, tags,
problem_description, starter_code, estimated_date, prompt (the helper prelude: imports, ListNode,
TreeNode, list_node/tree_node/is_same_*), completion (reference solution), entry_point
("Solution().twoSum"), test ("def check(candidate): assert candidate(nums=[...], ...) == ..."),
input_output, query, response.

The entry point stays the expression upstream grades with: the harness evaluates
`check(Solution().twoSum)` after running prelude + candidate + test, exactly as upstream does.
"""

from __future__ import annotations

from setrl.config import DatasetSpec
from setrl.data.hub import iso_date, read_rows, subsample
from setrl.problem import Problem

HUB_ID = "newfacade/LeetCodeDataset"

INSTRUCTION = (
    "Solve the following LeetCode problem in Python 3.\n\n"
    "{description}\n\n"
    "Complete this starter code (keep the class and method signature):\n"
    "```python\n{starter}\n```\n\n"
    "Write your solution in a ```python block."
)


def build_prompt(description: str, starter_code: str) -> str:
    """The instruction the model sees; the program is the python block of its answer."""
    return INSTRUCTION.format(description=description.strip(), starter=starter_code.rstrip())


def problem_from_row(row: dict) -> Problem:
    """One upstream row -> Problem (the upstream `prompt` becomes the trusted prelude)."""
    missing = [k for k in ("task_id", "problem_description", "starter_code", "entry_point", "test", "prompt")
               if not row.get(k)]
    if missing:
        raise ValueError(f"LeetCodeDataset row {row.get('task_id', '?')}: missing fields {missing}")
    return Problem(
        source="leetcode",
        title=row["task_id"],
        prompt=build_prompt(row["problem_description"], row["starter_code"]),
        entry_point=row["entry_point"],
        test_style="check",
        tests=row["test"],
        prelude=row["prompt"],
        meta={
            "task_id": row["task_id"],
            "question_id": row.get("question_id"),
            "difficulty": row.get("difficulty"),
            "tags": list(row.get("tags") or []),
            "release_date": iso_date(row.get("estimated_date")),
            "platform": "leetcode",
            "statement": row["problem_description"],
            "starter_code": row["starter_code"],
            "reference_solution": row.get("completion"),
        },
    )


def load(spec: DatasetSpec) -> list[Problem]:
    """Problems of `spec.split` from `spec.path` (local file/dir) or the hub, subsampled to `spec.limit`."""
    rows = read_rows(spec.path or HUB_ID, spec.split)
    problems = [problem_from_row(r) for r in rows]
    return subsample(problems, spec.limit, spec.seed, key=lambda p: p.meta["task_id"])

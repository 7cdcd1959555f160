"""The one problem schema every stage uses: tiny tasks, LeetCodeDataset, LiveCodeBench, HumanEval.

A problem is what the model sees (`prompt`) plus what decides correctness (`tests`):
  - test_style "check":      tests is Python source defining `check(candidate)`; the harness
                             calls `check(<entry_point>)` (HumanEval / LeetCodeDataset style).
  - test_style "stdin":      tests is a list of {"input": str, "output": str}; the program reads
                             stdin and its stdout is compared (LiveCodeBench "stdin" problems).
  - test_style "functional": tests is a list of {"input": str, "output": str} where input holds one
                             JSON value per line (the positional arguments) and output one JSON
                             value (LiveCodeBench "functional" problems); `entry_point` names the
                             function (a method of class Solution when the code defines one).
`prelude` is trusted code run before the candidate (imports, helper classes such as ListNode).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

TestStyle = Literal["check", "stdin", "functional"]


def content_hash(*parts: Any, length: int = 16) -> str:
    """Stable short hex digest of JSON-serialisable parts (used for idempotent keys)."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


@dataclass(frozen=True)
class Problem:
    source: str
    title: str
    prompt: str
    entry_point: str
    test_style: TestStyle
    tests: Any
    prelude: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def problem_id(self) -> str:
        """Content hash: the same problem text and tests always get the same id."""
        return content_hash(self.source, self.prompt, self.entry_point, self.test_style, self.tests, self.prelude)

    def to_dict(self) -> dict:
        return {"problem_id": self.problem_id, **asdict(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "Problem":
        keys = ("source", "title", "prompt", "entry_point", "test_style", "tests", "prelude", "meta")
        return cls(**{k: d[k] for k in keys if k in d})

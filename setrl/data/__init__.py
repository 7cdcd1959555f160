"""Problem sources, all normalised to `setrl.problem.Problem`.

Each loader module defines `load(spec: DatasetSpec) -> list[Problem]`; `load_problems` picks the
module by `spec.source`. Modules are imported on first use so that loading the tiny family does
not import `datasets`.
"""

from __future__ import annotations

import importlib

from setrl.config import DatasetSpec
from setrl.problem import Problem

LOADERS = {
    "tiny": "setrl.data.tiny",
    "leetcode": "setrl.data.leetcode",
    "livecodebench": "setrl.data.livecodebench",
    "humaneval": "setrl.data.humaneval",
}


def load_problems(spec: DatasetSpec) -> list[Problem]:
    """Load the problems one `DatasetSpec` names (source, split, path, limit...)."""
    if spec.source not in LOADERS:
        raise ValueError(f"unknown data source '{spec.source}'; valid: {', '.join(LOADERS)}")
    return importlib.import_module(LOADERS[spec.source]).load(spec)

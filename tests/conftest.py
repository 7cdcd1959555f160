"""Shared fixtures: the repo root, and a fresh DuckDB store per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


@pytest.fixture
def store(tmp_path):
    from setrl.store import Store

    return Store(tmp_path / "test.duckdb")

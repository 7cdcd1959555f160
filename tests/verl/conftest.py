"""`make test-verl` sets SETRL_REQUIRE_VERL=1: there a missing verl is an install failure, not a skip."""

from __future__ import annotations

import importlib.util
import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("SETRL_REQUIRE_VERL") == "1" and importlib.util.find_spec("verl") is None:
        raise pytest.UsageError("SETRL_REQUIRE_VERL=1 but verl is not importable: run `make install-verl`")

"""Shared sandbox fixtures: one pool for the module (short timeouts keep the suite fast)."""

from __future__ import annotations

import os

import pytest

from setrl.sandbox import Job, Sandbox, isolation_available

SECRET_ENV = "SETRL_SANDBOX_TEST_SECRET"
SECRET = "sk-test-8f3e2a91c0d4"
TIMEOUT_S = 1.0

needs_isolation = pytest.mark.skipif(not isolation_available(), reason="bubblewrap isolation unavailable here")


@pytest.fixture(scope="module")
def sandbox():
    # The secret is in the parent's environment *before* the sandboxes start, as an API key would be.
    os.environ[SECRET_ENV] = SECRET
    try:
        with Sandbox(workers=2, timeout_s=TIMEOUT_S, memory_mb=512) as sb:
            yield sb
    finally:
        os.environ.pop(SECRET_ENV, None)


def check_job(id: str, code: str, test: str = "def check(candidate):\n    assert candidate(1) == 2\n",
              entry_point: str = "f", prelude: str = "") -> Job:
    return Job(id, code, "check", test, entry_point, prelude)


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (host view), from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found

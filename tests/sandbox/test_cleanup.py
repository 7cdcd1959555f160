"""Nothing outlives the sandbox: processes, temp dirs, cgroups; not even when the parent is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from setrl.sandbox import IsolationUnavailable, Sandbox, isolation
from setrl.sandbox.isolation import Isolation
from tests.sandbox.conftest import check_job, descendants, needs_isolation

REPO = Path(__file__).resolve().parents[2]


def _wait_gone(pids: set[int], seconds: float = 5.0) -> set[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pids = {p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1][:3]}
        if not pids:
            break
        time.sleep(0.05)
    return pids


@needs_isolation
def test_close_leaves_no_processes_cgroups_or_temp_dirs():
    before = descendants(os.getpid())
    with Sandbox(workers=2, timeout_s=0.5) as sb:
        verdicts = sb.run([check_job("daemon", "import os\nif os.fork() == 0:\n    os.setsid()\n    while True: pass\n"
                                     "def f(x):\n    return x + 1\n"), check_job("loop", "while True: pass")])
        assert verdicts[0].passed and verdicts[1].status == "timeout"
        assert descendants(os.getpid()) - before  # the sandboxes are running
    assert not _wait_gone(descendants(os.getpid()) - before)
    assert not list(isolation.PIDS_ROOT.glob(f"setrl-{os.getpid()}-*"))
    assert not list(Path("/tmp").glob(f"setrl-sandbox-{os.getpid()}-*"))


@needs_isolation
def test_killing_the_parent_kills_every_sandbox_process():
    script = textwrap.dedent("""
        import sys, threading
        from setrl.sandbox import Job, Sandbox
        sb = Sandbox(workers=2, timeout_s=60).__enter__()
        jobs = [Job(str(i), "while True: pass", "check", "def check(c): pass", "f") for i in range(2)]
        threading.Thread(target=sb.run, args=(jobs,), daemon=True).start()
        print("started", flush=True)
        threading.Event().wait()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 10
    while len(descendants(proc.pid)) < 4 and time.monotonic() < deadline:  # bwraps, runners, candidates
        time.sleep(0.05)
    family = descendants(proc.pid)
    assert len(family) >= 4
    groups = list(isolation.PIDS_ROOT.glob(f"setrl-{proc.pid}-*"))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not _wait_gone(family)
    deadline = time.monotonic() + 15  # the wrapper removes its sandbox's pids group (root hosts)
    while any(g.exists() for g in groups) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [g for g in groups if g.exists()]


def test_require_isolation_refuses_and_fallback_warns(monkeypatch):
    monkeypatch.setattr("setrl.sandbox.pool.probe", lambda: Isolation(None, False, "bwrap missing (test)"))
    with pytest.raises(IsolationUnavailable, match="bwrap missing"):
        Sandbox(require_isolation=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Sandbox(workers=1, timeout_s=1.0) as sb:
            [v] = sb.run([check_job("unisolated", "def f(x):\n    return x + 1\n")])
    assert any("ISOLATION UNAVAILABLE" in str(w.message) for w in caught)
    assert v.passed, v
    assert not list(Path("/tmp").glob(f"setrl-sandbox-{os.getpid()}-*"))

"""The trusted parent: a pool of sandbox pairs, one job at a time per pair, verdicts decided here.

Each worker is a pair of long-lived sandboxes (see isolation.py): a *runner* that forks one process
per program (inside_runner.py) and a *judge* that runs the trusted tests (inside_judge.py). For
"check" and "functional" jobs the parent hands each side one end of a fresh socketpair: the tests
call the candidate through it, as plain data. For "stdin" jobs the runner returns the program's
stdout and the comparison happens here, so expected outputs never enter a sandbox.

The verdict never rests on the program's exit code or on anything it can write: "passed" needs
the judge's report (a process no candidate code runs in) or an output match computed here, and
no limit hit measured by the runner from outside the program.
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from setrl.sandbox import wire
from setrl.sandbox.isolation import Isolation, IsolationUnavailable, PidsCgroup, inside_command, probe
from setrl.sandbox.jobs import Job, Verdict, outputs_match, validate

log = logging.getLogger(__name__)
START_TIMEOUT_S = 30.0
SLACK_S = 3.0  # parent-side backstop beyond the runner's own deadline; reached only if a sandbox wedges
JUDGE_BACKSTOP_S = 2.0


class _SandboxBroken(Exception):
    """A sandbox process died or stopped answering; the worker restarts it."""


class _Inside:
    """One sandboxed inside-script (runner or judge) and the parent's end of its control socket."""

    def __init__(self, script: str, iso: Isolation, max_pids: int):
        self.cgroup = PidsCgroup(max_pids) if iso.available and iso.pids_cgroup else None
        self.workdir = None if iso.available else tempfile.mkdtemp(prefix=f"setrl-sandbox-{os.getpid()}-")
        ours, theirs = socket.socketpair()
        cmd = inside_command(script, iso, theirs.fileno(), self.workdir or "")
        if self.cgroup:
            cmd = self.cgroup.wrap(cmd)
        # env={}: the sandbox itself must not carry the parent's secrets (readable via /proc/*/environ)
        self.proc = subprocess.Popen(cmd, env={}, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        theirs.close()
        self.sock = ours
        self.recv(time.monotonic() + START_TIMEOUT_S)

    def send(self, frame: dict, fds: tuple[int, ...] = ()) -> None:
        try:
            wire.send_frame(self.sock, frame, fds)
        except OSError as e:
            raise _SandboxBroken(f"sandbox gone: {e}; {self._stderr()}") from None

    def recv(self, deadline: float) -> dict:
        self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            reply, _ = wire.recv_frame(self.sock)
        except socket.timeout:
            raise _SandboxBroken("sandbox stopped answering") from None
        except (OSError, EOFError, ValueError) as e:
            raise _SandboxBroken(f"sandbox died ({type(e).__name__}); {self._stderr()}") from None
        return reply

    def _stderr(self) -> str:
        if self.proc.poll() is None:
            return "still running"
        return (self.proc.stderr.read() or b"").decode(errors="replace")[-500:]

    def close(self) -> None:
        """Kill the sandbox (bwrap takes its whole PID namespace with it) and remove its traces."""
        self.sock.close()
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.proc.stderr.close()
        if self.cgroup:
            self.cgroup.remove()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


class _Worker:
    """A runner + judge pair, (re)started on demand, running one job at a time."""

    def __init__(self, sb: "Sandbox"):
        self.sb = sb
        self.runner: _Inside | None = None
        self.judge: _Inside | None = None
        self.replace_runner = False

    def run(self, job: Job) -> Verdict:
        try:
            validate(job)
        except ValueError as e:
            return Verdict(str(job.id), False, "error", f"invalid job: {e}")
        try:
            if self.runner is None:
                self.runner = _Inside("inside_runner.py", self.sb.isolation, self.sb.max_procs)
                self.judge = _Inside("inside_judge.py", self.sb.isolation, self.sb.max_procs)
            verdict = self._run_stdin(job) if job.test_style == "stdin" else self._run_served(job)
        except _SandboxBroken as e:
            self.close()
            return Verdict(job.id, False, "sandbox_error", str(e)[:500])
        if self.replace_runner:  # the program tampered with the runner: a fresh one for the next job
            self.close()
        return verdict

    def _limits(self) -> dict:
        sb = self.sb
        return {"timeout_s": sb.timeout_s, "memory_mb": sb.memory_mb, "output_limit_mb": sb.output_limit_mb,
                "file_limit_mb": sb.file_limit_mb, "max_procs": sb.max_procs}

    def _deadline(self) -> float:
        return time.monotonic() + self.sb.timeout_s * 1.1 + 0.2 + SLACK_S

    def _runner_reply(self) -> dict:
        r = self.runner.recv(self._deadline())
        self.replace_runner = self.replace_runner or bool(r.get("replace_me"))
        return r

    def _run_stdin(self, job: Job) -> Verdict:
        wall = cpu = 0.0
        for i, case in enumerate(job.tests):
            self.runner.send({"code": job.code, "prelude": job.prelude, "entry_point": "", "stdin": case["input"],
                              **self._limits()})
            r = self._runner_reply()
            wall, cpu = wall + r["wall_s"], cpu + r["cpu_s"]
            if r["status"] != "exited":
                return Verdict(job.id, False, _program_status(r), f"{_describe(r)} on test {i}", wall, cpu)
            if r["exit_code"] != 0:
                return Verdict(job.id, False, "error", f"exit code {r['exit_code']} on test {i}{_last_line(r)}", wall, cpu)
            if not outputs_match(r["stdout"], case["output"]):
                return Verdict(job.id, False, "failed", f"wrong answer on test {i}", wall, cpu)
        return Verdict(job.id, True, "passed", f"all {len(job.tests)} tests passed", wall, cpu)

    def _run_served(self, job: Job) -> Verdict:
        mine, theirs = socket.socketpair()
        try:
            self.runner.send({"code": job.code, "prelude": job.prelude, "entry_point": job.entry_point,
                              **self._limits()}, (mine.fileno(),))
            self.judge.send({"style": job.test_style, "tests": job.tests, "prelude": job.prelude,
                             "entry_point": job.entry_point, "timeout_s": self.sb.timeout_s,
                             "memory_mb": self.sb.memory_mb}, (theirs.fileno(),))
        finally:
            mine.close()
            theirs.close()
        r = self._runner_reply()
        j = self.judge.recv(self._deadline() + JUDGE_BACKSTOP_S)
        wall, cpu = r["wall_s"], r["cpu_s"]
        if r["status"] in ("timeout", "output_limit"):
            return Verdict(job.id, False, r["status"], _describe(r), wall, cpu)
        if j.get("passed") is True:
            return Verdict(job.id, True, "passed", str(j.get("reason", "")), wall, cpu)
        status = "memory" if "memory" in (r["status"], j.get("status")) else str(j.get("status", "error"))
        if r["status"] == "signal" and status == "error":
            status = "signal"
        return Verdict(job.id, False, status, f"{str(j.get('reason', ''))[:300]}{_last_line(r)}", wall, cpu)

    def close(self) -> None:
        for inside in (self.runner, self.judge):
            if inside is not None:
                inside.close()
        self.runner = self.judge = None
        self.replace_runner = False


def _program_status(r: dict) -> str:
    return r["status"] if r["status"] != "exited" else "error"


def _describe(r: dict) -> str:
    return {"timeout": f"time limit exceeded ({r['wall_s']:.2f}s wall)",
            "output_limit": "output or file size limit exceeded",
            "memory": "memory limit exceeded",
            "signal": f"killed by signal {r['exit_code'] - 128}"}.get(r["status"], r["status"])


def _last_line(r: dict) -> str:
    """The program's last stderr line (usually the exception), printable characters only."""
    lines = [line for line in r.get("stderr", "").splitlines() if line.strip()]
    if not lines:
        return ""
    return " | " + "".join(c if c.isprintable() else "?" for c in lines[-1][:200])


class Sandbox:
    """Run untrusted programs against their tests. Use as a context manager; see the package doc."""

    def __init__(self, workers: int = 2, timeout_s: float = 3.0, memory_mb: int = 512,
                 require_isolation: bool = False, output_limit_mb: int = 16, file_limit_mb: int = 32,
                 max_procs: int = 64):
        if workers < 1 or timeout_s <= 0 or memory_mb < 64 or min(output_limit_mb, file_limit_mb) < 1 or max_procs < 4:
            raise ValueError("need workers >= 1, timeout_s > 0, memory_mb >= 64, output_limit_mb >= 1, "
                             "file_limit_mb >= 1 and max_procs >= 4")
        self.workers, self.timeout_s, self.memory_mb = workers, float(timeout_s), memory_mb
        self.output_limit_mb, self.file_limit_mb, self.max_procs = output_limit_mb, file_limit_mb, max_procs
        self.isolation = probe()
        if not self.isolation.available:
            if require_isolation:
                raise IsolationUnavailable(f"sandbox.require_isolation is set but {self.isolation.reason}")
            msg = (f"SANDBOX ISOLATION UNAVAILABLE ({self.isolation.reason}). Untrusted programs will run "
                   "with rlimits only: they can read and write your files and reach the network. "
                   "Set sandbox.require_isolation: true to refuse to run like this.")
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
            log.warning(msg)
            clean_stale_workdirs()
        self._tasks: queue.Queue = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def _start(self) -> None:
        # The threads live as long as the Sandbox: bwrap's --die-with-parent fires when the
        # *thread* that started it exits, so sandboxes are started from these threads only.
        with self._lock:
            if not self._threads:
                for k in range(self.workers):
                    t = threading.Thread(target=self._serve, name=f"sandbox-worker-{k}", daemon=True)
                    t.start()
                    self._threads.append(t)

    def _serve(self) -> None:
        worker = _Worker(self)
        try:
            while (task := self._tasks.get()) is not None:
                key, job, out = task
                try:
                    verdict = worker.run(job)
                except Exception as e:  # a bug here must not hang the caller waiting for this key
                    worker.close()
                    verdict = Verdict(str(getattr(job, "id", key)), False, "sandbox_error", f"{type(e).__name__}: {e}")
                out.put((key, verdict))
        finally:
            worker.close()

    def imap(self, jobs: Iterable[Job], window: int = 1024) -> Iterator[Verdict]:
        """Verdicts in job order, streamed as they are decided.

        At most `window` jobs are taken from `jobs` ahead of the next verdict due. A wide window
        matters: one slow program must not leave the other workers idle while order is restored.
        """
        self._start()
        out: queue.Queue = queue.Queue()
        it, ready = iter(jobs), {}
        submitted = emitted = 0
        exhausted = False
        while True:
            while not exhausted and submitted - emitted < max(window, self.workers):
                job = next(it, None)
                if job is None:
                    exhausted = True
                    break
                self._tasks.put((submitted, job, out))
                submitted += 1
            if exhausted and emitted == submitted:
                return
            while emitted not in ready:
                key, verdict = out.get()
                ready[key] = verdict
            yield ready.pop(emitted)
            emitted += 1

    def run(self, jobs: Iterable[Job], progress: bool = False) -> list[Verdict]:
        """All verdicts, in job order."""
        jobs = list(jobs)
        stream = self.imap(jobs)
        if progress:
            from rich.progress import track

            stream = track(stream, total=len(jobs), description="sandbox")
        return list(stream)

    def close(self) -> None:
        """Stop the workers; each kills its sandboxes (no process or temp dir outlives this)."""
        with self._lock:
            for _ in self._threads:
                self._tasks.put(None)
            for t in self._threads:
                t.join()
            self._threads = []

    def __enter__(self) -> "Sandbox":
        self._start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_jobs(jobs: Iterable[Job], workers: int = 2, timeout_s: float = 3.0, memory_mb: int = 512,
             require_isolation: bool = False, **kwargs) -> list[Verdict]:
    """Run jobs in a fresh Sandbox and return their verdicts in order."""
    with Sandbox(workers=workers, timeout_s=timeout_s, memory_mb=memory_mb,
                 require_isolation=require_isolation, **kwargs) as sb:
        return sb.run(jobs)


def clean_stale_workdirs() -> None:
    """Remove no-isolation work dirs of parents that were killed (their PID is in the name)."""
    for path in Path(tempfile.gettempdir()).glob("setrl-sandbox-*-*"):
        pid = path.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(path, ignore_errors=True)

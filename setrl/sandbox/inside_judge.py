"""The long-lived test judge that lives inside its own *judge* sandbox (standard library only).

The judge runs only trusted code: the dataset's prelude and tests. It never runs candidate code.
For each job it executes `check(candidate)` (or the functional cases) in a fresh namespace, where
`candidate` is a proxy: every call is sent as plain data over a socket to the candidate
process in the other sandbox, and the reply is decoded as plain data (see wire.from_tree).

Why a separate sandbox: the candidate cannot see this PID namespace, so it cannot signal, trace or
read the memory of the process holding the expected values, cannot walk its stack frames, cannot
monkeypatch its builtins and cannot write its result pipe. A verdict of "passed" means `check`
returned here, in a process no candidate code ever ran in.

Tests run in the judge process itself, not in a fork per job: a fork and exit cost more CPU here
than the rest of the job, and the code is trusted. So test code shares the process across jobs
(a test that changes global state, e.g. sys.setrecursionlimit, affects later jobs). A test that
never returns is caught by the parent's deadline, which replaces the whole judge sandbox.
"""

from __future__ import annotations

import builtins
import functools
import gc
import json
import os
import resource
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402
from inside_runner import LIBC, PR_SET_PDEATHSIG, set_non_dumpable  # noqa: E402

sys.path.pop(0)

class CandidateGone(BaseException):
    """The candidate broke the protocol (died, sent non-plain data). BaseException: tests' `except
    Exception` must not swallow it, and a swallowed one still fails the job (see _Calls.broken)."""


class _Calls:
    """The candidate's side of every call the tests make, as seen from here."""

    def __init__(self, chan: socket.socket, classes: dict[str, type]):
        self.chan, self.classes = chan, classes
        self.broken = ""  # why the protocol broke; non-empty means the job fails
        self.kind = "error"

    def proxy(self, name: str | None, label: str):
        def call(*args, **kwargs):
            return self.call(name, args, kwargs)

        call.__name__ = call.__qualname__ = label
        return call

    def call(self, name: str | None, args: tuple, kwargs: dict):
        if self.broken:
            raise CandidateGone(self.broken)
        try:
            request = {"f": name, "a": wire.to_tree(list(args), self.classes), "k": wire.to_tree(kwargs, self.classes)}
        except wire.NotPlainData as e:
            return self.fail(f"the test passes a non-plain argument ({e}); this job cannot be judged in isolation")
        try:
            wire.send_frame(self.chan, request)
            reply, _ = wire.recv_frame(self.chan)
            if not isinstance(reply, dict):
                raise wire.NotPlainData("malformed reply")
            if "x" in reply:
                return self.fail(f"returned a value that is not plain data ({str(reply['x'])[:200]})")
            error = reply.get("e")
            if error is None:
                value = wire.from_tree(reply["v"], self.classes)
                for key, tree in reply.get("w", []):
                    _write_back(args, kwargs, key, wire.from_tree(tree, self.classes))
        except wire.PeerClosed:
            return self.fail("the program exited or was killed before the tests finished")
        except (wire.NotPlainData, KeyError, TypeError, ValueError, IndexError) as e:
            return self.fail(f"returned a value that is not plain data ({e})"[:300])
        if error is not None:
            self.raise_candidate_error(error)
        return value

    def raise_candidate_error(self, err):
        name, msg = (str(err[0]), str(err[1])) if isinstance(err, list) and len(err) == 2 else ("Error", "")
        if name == "MemoryError":
            self.kind = "memory"
        cls = getattr(builtins, name, None)
        # Re-raise builtin exception types so tests that expect e.g. ValueError still work.
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            cls = RuntimeError
        raise cls(f"{name}: {msg}" if cls is RuntimeError else msg)

    def fail(self, reason: str):
        self.broken = reason
        raise CandidateGone(reason)


def _write_back(args: tuple, kwargs: dict, key, new) -> None:
    old = args[key] if isinstance(key, int) else kwargs[key]
    if type(old) is not type(new):
        raise wire.NotPlainData("an argument changed type")
    if isinstance(old, list):
        old[:] = new
    elif isinstance(old, (dict, set)):
        old.clear()
        old.update(new)
    elif hasattr(old, "__dict__"):
        vars(old).clear()
        vars(old).update(vars(new))


def _jsonish(v):
    """The value as JSON would carry it: LiveCodeBench's expected outputs have lists, not tuples."""
    if isinstance(v, (list, tuple)):
        return [_jsonish(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonish(x) for k, x in v.items()}
    return v


@functools.lru_cache(maxsize=512)
def _compiled(source: str, name: str):
    """Tests repeat across a problem's many rollouts: compile each source once."""
    return compile(source, name, "exec")


def judge_tests(job: dict, chan: socket.socket) -> dict:
    """Run the trusted tests against the remote candidate. Returns {"passed", "status", "reason"}."""
    try:
        hello, _ = wire.recv_frame(chan)
    except (wire.PeerClosed, wire.NotPlainData, ValueError):
        return {"passed": False, "status": "error", "reason": "the program exited before the tests ran"}
    if not isinstance(hello, dict) or not isinstance(hello.get("ready"), list):
        err = hello.get("error") if isinstance(hello, dict) else None
        kind = hello.get("kind") if isinstance(hello, dict) and hello.get("kind") == "memory" else "error"
        return {"passed": False, "status": kind, "reason": f"program failed to load: {str(err)[:300]}"}
    ns: dict = {"__name__": "__tests__"}
    try:
        return _run_tests(job, chan, hello, ns)
    finally:
        ns.clear()  # functions <-> globals cycles: freed now by refcount instead of by the cyclic GC


def _run_tests(job: dict, chan: socket.socket, hello: dict, ns: dict) -> dict:
    """The rest of judge_tests once the program has loaded: prelude, tests, verdict."""
    exec(_compiled(job["prelude"], "<prelude>"), ns)
    calls = _Calls(chan, {k: v for k, v in ns.items() if isinstance(v, type) and v.__module__ == "__tests__"})
    entry = calls.proxy(None, job["entry_point"].split(".")[-1] or "candidate")
    try:
        if job["style"] == "check":
            exec(_compiled(job["tests"], "<tests>"), ns)
            for name in hello["ready"]:  # helpers the tests use from the program (HumanEval/32 `poly`)
                if isinstance(name, str) and name not in ns and not hasattr(builtins, name):
                    ns[name] = calls.proxy(name, name)
            ns["check"](entry)
        else:
            for i, case in enumerate(job["tests"]):
                args = [json.loads(line) for line in case["input"].split("\n") if line.strip()]
                if _jsonish(entry(*args)) != json.loads(case["output"]):
                    return {"passed": False, "status": "failed", "reason": f"wrong answer on test {i}"}
    except CandidateGone:
        pass
    except AssertionError as e:
        return {"passed": False, "status": "failed", "reason": f"assertion failed{': ' + str(e)[:200] if str(e) else ''}"}
    except BaseException as e:
        if not calls.broken:
            return {"passed": False, "status": calls.kind if calls.kind == "memory" else "failed",
                    "reason": f"{type(e).__name__}: {str(e)[:200]}"}
    if calls.broken:
        return {"passed": False, "status": calls.kind, "reason": calls.broken}
    return {"passed": True, "status": "passed", "reason": "all tests passed"}


def main(argv: list[str]) -> None:
    args = dict(zip(argv[1::2], argv[2::2]))
    ctl = socket.socket(fileno=int(args["--ctl-fd"]))
    set_non_dumpable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.set_int_max_str_digits(0)
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # no bubblewrap: still die with the parent
    gc.freeze()  # the cyclic GC then never rescans the judge's own long-lived objects
    wire.send_frame(ctl, {"ready": True, "pid1": os.getpid() == 1})
    while True:
        try:
            job, fds = wire.recv_frame(ctl, max_fds=1)
        except wire.PeerClosed:
            return
        if resource.getrlimit(resource.RLIMIT_AS)[1] == resource.RLIM_INFINITY:  # first job: bound the judge
            mem = 2 * job["memory_mb"] * 1024 * 1024  # decoded return values live here
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        chan = socket.socket(fileno=fds[0])
        try:
            result = judge_tests(job, chan)
        except BaseException as e:
            result = {"passed": False, "status": "error", "reason": f"judge error: {type(e).__name__}: {str(e)[:200]}"}
        finally:
            chan.close()
        wire.send_frame(ctl, result)


if __name__ == "__main__":
    main(sys.argv)

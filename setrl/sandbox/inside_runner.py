"""The long-lived program runner that lives inside the *candidate* sandbox (standard library only).

Started by the trusted parent as `python -I -S inside_runner.py --ctl-fd N --workdir DIR`, inside
bubblewrap where available. It is PID 1 of that sandbox's PID namespace, so processes in the
namespace cannot signal it, and it is non-dumpable, so they cannot ptrace it or open its
/proc/<pid>/fd (where its control socket to the parent lives).

Per program: a "spare" child is forked ahead of time (between jobs, off the critical path); it
puts itself in its own session, closes every inherited fd, becomes nobody if it was root, and
waits for its job; then it sets the job's rlimits and runs the untrusted code. The runner watches
it from outside: the wall-clock deadline and the output cap are enforced here with SIGKILL to its
process group, then `kill(-1)` (safe only as PID 1, which it spares) sweeps up anything that
escaped the group (setsid daemons, double forks). The runner never holds expected outputs or test
code: those stay in the parent and in the judge sandbox.

What a candidate CAN still do to the runner, as the same uid: change its rlimits, nice value,
affinity or scheduling policy (prlimit/setpriority are allowed between same-uid processes). None
of that changes a report, but it could break the next job, so after every program the runner
compares these against their values at start and, if any changed, asks to be replaced.
"""

from __future__ import annotations

import ctypes
import gc
import json  # noqa: F401  (pre-imported so each forked candidate starts warm)
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402

sys.path.pop(0)  # candidate code must not import the sandbox's own modules by accident

EXIT_MEMORY = 86  # the candidate harness exits with this after a MemoryError
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
LIBC = ctypes.CDLL(None, use_errno=True)


# ---------------------------------------------------------------- inside the candidate process

def _set_limits(job: dict) -> None:
    mem = job["memory_mb"] * 1024 * 1024
    cpu = int(job["timeout_s"]) + 2  # backstop only: the runner's wall-clock kill comes first
    for res, value in ((resource.RLIMIT_AS, mem), (resource.RLIMIT_CPU, cpu),
                       (resource.RLIMIT_FSIZE, job["file_limit_mb"] * 1024 * 1024),
                       (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, 256),
                       (resource.RLIMIT_NPROC, job["max_procs"])):
        resource.setrlimit(res, (value, value))


def _resolve_entry(ns: dict, entry: str):
    """`f`, a method of class Solution (LiveCodeBench), or an expression like `Solution().f`."""
    if entry.isidentifier() and entry in ns:
        return ns[entry]
    if entry.isidentifier() and isinstance(ns.get("Solution"), type) and hasattr(ns["Solution"], entry):
        return getattr(ns["Solution"](), entry)
    return eval(entry, ns)


def unsafe_execute_stdin(job: dict) -> int:
    """Run untrusted code as a script reading stdin. Returns its exit status."""
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(compile(job["prelude"] + "\n" + job["code"], "<candidate>", "exec"), ns)
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except MemoryError:
        return EXIT_MEMORY
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        for stream in (sys.stdout, sys.stderr):  # os._exit follows: nothing else flushes them
            try:
                stream.flush()
            except BaseException:
                pass


def unsafe_execute_serve(job: dict, chan: socket.socket) -> int:
    """Run untrusted code, then answer the judge's calls on `chan` until it hangs up.

    Everything here is candidate-controlled once `exec` starts (it may monkeypatch this very
    module); the judge trusts none of it: it decodes replies as plain data only.
    """
    ns = {"__name__": "__candidate__", "__builtins__": __builtins__}
    try:
        exec(compile(job["prelude"], "<prelude>", "exec"), ns)
        prelude_classes = [k for k, v in ns.items() if isinstance(v, type) and v.__module__ == "__candidate__"]
        from_prelude = set(ns)  # the judge has its own trusted copies of these
        exec(compile(job["code"], "<candidate>", "exec"), ns)
        # encoded by name; the judge rebuilds them from its own trusted copy of the prelude
        classes = {k: ns[k] for k in prelude_classes if isinstance(ns.get(k), type)}
        fn = _resolve_entry(ns, job["entry_point"])
        names = [k for k, v in ns.items() if callable(v) and not k.startswith("__") and k not in from_prelude]
    except MemoryError:
        wire.send_frame(chan, {"error": "MemoryError while loading the program", "kind": "memory"})
        return EXIT_MEMORY
    except BaseException as e:
        wire.send_frame(chan, {"error": f"{type(e).__name__}: {e}"[:500], "kind": "error"})
        return 1
    wire.send_frame(chan, {"ready": names})
    while True:
        try:
            req, _ = wire.recv_frame(chan)
        except wire.PeerClosed:
            return 0
        target = fn if req["f"] is None else ns[req["f"]]
        args = wire.from_tree(req["a"], classes)
        kwargs = wire.from_tree(req["k"], classes)
        sent = dict(enumerate(req["a"])) | dict(req["k"]["d"])
        try:
            value = target(*args, **kwargs)
            reply = {"v": wire.to_tree(value, classes)}
            # arguments the call mutated in place travel back (LeetCode "modify nums in-place")
            after = [(i, wire.to_tree(a, classes)) for i, a in enumerate(args)]
            after += [(k, wire.to_tree(a, classes)) for k, a in kwargs.items()]
            reply["w"] = [[key, tree] for key, tree in after if tree != sent[key]]
        except MemoryError:
            reply = {"e": ["MemoryError", ""]}
        except wire.NotPlainData as e:
            reply = {"x": str(e)}
        except BaseException as e:
            reply = {"e": [type(e).__name__, str(e)[:300]]}
        wire.send_frame(chan, reply)


def drop_privileges() -> None:
    """Become nobody. Inside bubblewrap we already are (uid 65534, no capabilities); without it the
    runner may be host root, and the candidate must not be."""
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)


FD_LIMIT = 4096  # the runner holds no fd at or above this (see bound_fds); neither do candidates


def _close_fds_except(keep: set[int]) -> None:
    """Close every fd above 2 except `keep`: one close_range(2) call per gap (a loop of close(2)
    up to FD_LIMIT where the kernel or libc lacks close_range)."""
    low = 3
    for fd in sorted(k for k in keep if k >= low):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, FD_LIMIT)


def bound_fds(ctl_fd: int) -> int:
    """Make every fd this process holds, now and later, lower than FD_LIMIT; return ctl_fd's number.

    Closes whatever else was inherited, moves the control socket below the limit (a parent with
    thousands of open files hands it over as a high number) and lowers the soft RLIMIT_NOFILE to
    the limit, so that new fds are always allocated below it and _close_fds_except is exact.
    """
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != ctl_fd:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own directory fd
    if ctl_fd >= FD_LIMIT:
        low = os.dup(ctl_fd)  # the lowest free number: few are open
        os.close(ctl_fd)
        ctl_fd = low
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > FD_LIMIT:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, hard))
    return ctl_fd


def spare_process(ctl_fd: int, out_fd: int, err_fd: int, workdir: str) -> None:
    """A candidate forked before its job: confine itself, wait for the job, run it. Never returns.

    Everything that does not depend on the job happens before the job exists, so it is off the
    critical path; the job (code, limits) and its fds (stdin, channel to the judge) arrive on ctl.
    """
    try:
        os.setsid()  # its own process group, so the runner can kill everything it spawned at once
        if os.getppid() != 1:  # no PID namespace; in one, the kernel kills us when the runner dies
            LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        _close_fds_except({ctl_fd})  # the runner's control socket above all
        os.chdir(workdir)
        drop_privileges()
        ctl = socket.socket(fileno=ctl_fd)
        job, [fd] = wire.recv_frame(ctl, max_fds=1)
        ctl.close()
        served = "stdin" not in job
        os.dup2(fd, 3 if served else 0)
        _close_fds_except({3} if served else set())
        _set_limits(job)
        code = unsafe_execute_serve(job, socket.socket(fileno=3)) if served else unsafe_execute_stdin(job)
    except MemoryError:
        code = EXIT_MEMORY
    except BaseException:
        code = 1
    os._exit(code)


# ---------------------------------------------------------------- the runner (trusted)

def _wipe(path: str) -> None:
    """Remove everything under `path`, including entries a candidate made unreadable.

    Iterative (a candidate may nest directories deeper than the recursion limit) and without
    shutil, whose import maps zlib, bz2 and lzma into the runner: every fork copies the mappings.
    """
    stack, dirs = [os.path.join(path, name) for name in os.listdir(path)], []
    while stack:
        p = stack.pop()
        if os.path.isdir(p) and not os.path.islink(p):
            os.chmod(p, 0o700)
            dirs.append(p)
            stack.extend(os.path.join(p, name) for name in os.listdir(p))
        else:
            os.unlink(p)
    for d in reversed(dirs):  # children were listed after their parents
        os.rmdir(d)


def _stdin_fd(text: str) -> int:
    fd = os.memfd_create("stdin")
    os.write(fd, text.encode())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class Spare:
    """The runner's handle on a forked, waiting candidate process (see spare_process)."""

    def __init__(self, workdir: str):
        self.ctl, theirs = socket.socketpair()
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            spare_process(theirs.fileno(), out_w, err_w, workdir)
        for fd in (theirs.fileno(), out_w, err_w):
            os.close(fd)
        theirs.detach()
        self.pidfd = os.pidfd_open(self.pid)

    def start(self, job: dict, fds: tuple[int, ...]) -> bool:
        """Hand over the job; False if this spare died while waiting."""
        try:
            wire.send_frame(self.ctl, job, fds)
            return True
        except OSError:
            self.reap()
            return False
        finally:
            self.ctl.close()

    def reap(self):
        _kill_all(self.pid)
        _, wstatus, usage = os.wait4(self.pid, 0)
        _reap_orphans()
        for fd in (self.out_r, self.err_r, self.pidfd):
            os.close(fd)
        return wstatus, usage


def run_program(job: dict, chan_fd: int | None, workdir: str, spare: Spare) -> dict:
    """Start one candidate (the spare), watch it from outside, report status, output and times."""
    # stdin jobs get their input as fd 0; served jobs keep the runner's /dev/null and get the channel
    fds = (_stdin_fd(job["stdin"]),) if chan_fd is None else (chan_fd,)
    start = time.monotonic()
    while not spare.start(job, fds):
        spare = Spare(workdir)
    for fd in fds:
        os.close(fd)
    deadline = start + job["timeout_s"]
    poller = select.poll()
    for fd in (spare.out_r, spare.err_r, spare.pidfd):
        poller.register(fd, select.POLLIN)
    keep_stdout = chan_fd is None
    stdout, stderr, total, status, open_pipes = bytearray(), bytearray(), 0, None, {spare.out_r, spare.err_r}
    exited = False
    limit = job["output_limit_mb"] * 1024 * 1024
    while status is None and (not exited or open_pipes):
        remaining = deadline - time.monotonic() if not exited else 0.2
        if remaining <= 0:
            status = "timeout" if not exited else None
            break
        events = poller.poll(remaining * 1000)
        if not events and exited:
            break  # without a PID namespace an escaped process may hold a pipe open
        for fd, _ in events:
            if fd == spare.pidfd:
                exited = True
                poller.unregister(fd)
                continue
            data = os.read(fd, 1 << 16)
            if not data:
                poller.unregister(fd)
                open_pipes.discard(fd)
                continue
            total += len(data)
            if fd == spare.out_r and keep_stdout:
                stdout += data
            elif fd == spare.err_r:
                stderr = (stderr + data)[-4096:]
            if total > limit:
                status = "output_limit"
    wall = time.monotonic() - start
    wstatus, usage = spare.reap()
    code = os.waitstatus_to_exitcode(wstatus) if os.WIFEXITED(wstatus) else 128 + os.WTERMSIG(wstatus)
    if status is None:
        status = _status_from_exit(code)
    _wipe(workdir)
    return {"status": status, "exit_code": code, "stdout": stdout[:limit].decode(errors="replace"),
            "stderr": stderr.decode(errors="replace"), "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime}


def _status_from_exit(code: int) -> str:
    if code == EXIT_MEMORY:
        return "memory"
    if code == 128 + signal.SIGXCPU:
        return "timeout"
    if code == 128 + signal.SIGXFSZ:
        return "output_limit"
    return "signal" if code > 128 else "exited"


def _kill_all(pid: int) -> None:
    """Kill the candidate's relay (its nested namespace dies with it) and its process group."""
    for kill in (os.kill, os.killpg):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if os.getpid() == 1:  # only inside our own PID namespace is kill(-1) safe: it spares PID 1
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _reap_orphans() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


RLIMITS = [getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")]


def fingerprint() -> tuple:
    """What a same-uid process may change about us from outside (see the module docstring)."""
    limits = [resource.getrlimit(r) for r in RLIMITS]
    return limits, os.getpriority(os.PRIO_PROCESS, 0), os.sched_getaffinity(0), os.sched_getscheduler(0)


def set_non_dumpable() -> None:
    """Forbid ptrace, /proc/<pid>/mem and /proc/<pid>/fd of this process to same-uid processes."""
    LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


# Modules the datasets' preludes and typical solutions import (LiveCodeBench's and LeetCodeDataset's
# star-import blocks). Imported once here, each forked candidate finds them in sys.modules: a child
# that imports statistics, random, datetime & co. itself spends ~8 ms of CPU on it, against < 2 ms
# for the rest of a typical program's life. Standard library only; a missing one is skipped.
PRELOAD = ("bisect", "collections", "copy", "datetime", "decimal", "fractions", "functools", "heapq",
           "itertools", "math", "operator", "random", "re", "statistics", "string", "typing")


def warm_up_for_children(workdir: str) -> None:
    """Everything every candidate would otherwise redo after its fork, done once before forking.

    What a child does costs CPU twice: the work itself and the copy-on-write page faults it
    triggers in memory shared with the runner. So the runner sets up the candidates' environment,
    imports PRELOAD, and runs the compiler once (its first use in a process initialises state
    lazily: ~1 ms per child otherwise). SIGINT stays ignored in candidates as in the runner:
    nothing legitimate sends it, and restoring Python's handler per child costs ~0.1 ms.
    """
    os.environ.clear()
    os.environ.update(PATH="/usr/bin:/bin", HOME=workdir, TMPDIR=workdir, LANG="C.UTF-8")
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    exec(compile("def _warm(a, b=1):\n    return [x for x in a if x > b]\n_warm([1, 2])\n", "<warm>", "exec"), {})


def main(argv: list[str]) -> None:
    args = dict(zip(argv[1::2], argv[2::2]))
    ctl = socket.socket(fileno=bound_fds(int(args["--ctl-fd"])))
    workdir = args["--workdir"]
    set_non_dumpable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.set_int_max_str_digits(0)
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # no bubblewrap: still die with the parent
    # The candidate keeps this interpreter's sys.stdin/stdout/stderr objects: after dup2 they
    # read and write its own pipes, and creating new text wrappers per fork costs ~0.5 ms.
    assert (sys.stdin.fileno(), sys.stdout.fileno(), sys.stderr.fileno()) == (0, 1, 2)
    if os.geteuid() == 0:  # no bubblewrap, host root: candidates run as nobody and need the dir
        os.chown(workdir, 65534, 65534)
    clean = fingerprint()
    warm_up_for_children(workdir)
    gc.freeze()  # forked children then never write to (copy) the pages of objects made before now
    wire.send_frame(ctl, {"ready": True, "pid1": os.getpid() == 1})
    while True:
        spare = Spare(workdir)  # forked while the parent is busy elsewhere: off the critical path
        try:
            job, fds = wire.recv_frame(ctl, max_fds=1)
        except wire.PeerClosed:
            return
        result = run_program(job, fds[0] if fds else None, workdir, spare)
        result["replace_me"] = fingerprint() != clean
        wire.send_frame(ctl, result)
        if result["replace_me"]:
            return


if __name__ == "__main__":
    main(sys.argv)

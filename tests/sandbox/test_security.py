"""Hostile programs: none may pass, change anything outside, or disturb the jobs around them."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from setrl.sandbox import Job, Sandbox
from tests.sandbox.conftest import SECRET, SECRET_ENV, TIMEOUT_S, check_job, needs_isolation

pytestmark = needs_isolation

# Each attack's test asks for exactly what the attack tries to obtain, so only success would pass.
READ_SECRET = f'''
import os, glob
def f(x):
    found = os.environ.get("{SECRET_ENV}", "")
    for path in glob.glob("/proc/*/environ") + ["/proc/self/environ", "/proc/1/environ"]:
        try:
            data = open(path, "rb").read().decode(errors="replace")
        except OSError:
            continue
        if "{SECRET_ENV}" in data:
            found = data.split("{SECRET_ENV}=")[1].split("\\0")[0]
    return found
'''

WALK_FRAMES = '''
import sys, builtins, gc
def f(x):
    frame = sys._getframe()
    while frame is not None:                      # rewrite every caller's state
        frame.f_globals["check"] = lambda c: None
        frame.f_globals["passed"] = True
        frame = frame.f_back
    builtins.AssertionError = type("Nope", (Exception,), {})
    for obj in gc.get_objects():                  # append "passed" to any result list
        if type(obj) is list and not obj:
            obj.append("passed")
    def skip(frame, event, arg):                  # jump past every assert of the caller
        return skip
    sys.settrace(skip)
    return x + 1000
'''

FORGE_PROTOCOL = '''
import json, os, struct
def f(x):
    msg = json.dumps({"passed": True, "status": "passed", "reason": "forged", "ready": []}).encode()
    for fd in range(0, 64):
        try:
            os.write(fd, struct.pack(">I", len(msg)) + msg)
        except OSError:
            pass
    os._exit(0)
'''

ALWAYS_EQUAL = '''
class E:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
class I(int):
    def __eq__(self, other): return True
def f(x):
    return E() if x == 1 else I(0)
'''


def test_hostile_programs_fail_and_bystanders_pass(sandbox, tmp_path):
    outside_file = tmp_path / "outside.txt"
    outside_file.write_text("top secret file")
    host_targets = [tmp_path / "pwned", Path("/work/main/PWNED_BY_SANDBOX"), Path("/tmp/PWNED_BY_SANDBOX")]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    port = listener.getsockname()[1]
    connections = []

    def accept():
        end = time.monotonic() + 5
        while time.monotonic() < end:
            try:
                connections.append(listener.accept())
            except OSError:
                pass

    threading.Thread(target=accept, daemon=True).start()
    wants = lambda value: f"def check(candidate):\n    assert candidate(1) == {value!r}\n"  # noqa: E731
    attacks = {
        "env-secret": check_job("env-secret", READ_SECRET, wants(SECRET)),
        "read-file": check_job("read-file", f"def f(x):\n    return open({str(outside_file)!r}).read()\n", wants("top secret file")),
        "write-outside": check_job("write-outside", "def f(x):\n    for p in %r:\n        try:\n            open(p, 'w').write('x')\n"
                                   "        except OSError:\n            pass\n    return 'wrote'\n" % [str(p) for p in host_targets],
                                   wants("impossible")),
        "tcp-connect": check_job("tcp-connect", f"import socket\ndef f(x):\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=0.5)\n"
                                 "    s.sendall(b'hi')\n    return 'connected'\n", wants("connected")),
        "fork-bomb": check_job("fork-bomb", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"),
        "alloc-8g": check_job("alloc-8g", "x = bytearray(8 << 30)\ndef f(x):\n    return 2\n"),
        "print-100mb": check_job("print-100mb", "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))\n"
                                 "def f(x):\n    return 2\n"),
        "loop-python": check_job("loop-python", "while True:\n    pass\n"),
        "loop-c": check_job("loop-c", "sum(range(10 ** 15))\n"),
        "loop-catch-all": check_job("loop-catch-all", "def f(x):\n    while True:\n        try:\n            while True:\n"
                                    "                pass\n        except BaseException:\n            pass\n"),
        "os-exit": check_job("os-exit", "import os\nos._exit(0)\n"),
        "sys-exit": check_job("sys-exit", "import sys\nsys.exit(0)\n"),
        "exit-in-call": check_job("exit-in-call", "import os\ndef f(x):\n    os._exit(0)\n"),
        "walk-frames": check_job("walk-frames", WALK_FRAMES),
        "forge-protocol": check_job("forge-protocol", FORGE_PROTOCOL, wants("impossible")),
        "always-equal": check_job("always-equal", ALWAYS_EQUAL, "def check(c):\n    assert c(1) == 2\n    assert c(2) == 3\n"),
        "always-equal-int": check_job("always-equal-int", ALWAYS_EQUAL, "def check(c):\n    assert c(2) == 3\n"),
        "kill-parent": check_job("kill-parent", "import os, signal\ndef f(x):\n    for pid in (os.getppid(), 1, -1):\n"
                                 "        try:\n            os.kill(pid, signal.SIGKILL)\n        except OSError:\n            pass\n    return 2\n",
                                 "def check(c):\n    assert c(1) == 3\n"),
    }
    attacks["stdin-secret"] = Job("stdin-secret", READ_SECRET + "\nprint(f(0))\n", "stdin", [{"input": "", "output": SECRET}])
    good = [check_job(f"good-{i}", "def f(x):\n    return x + 1\n") for i in range(len(attacks))]
    jobs = [job for pair in zip(attacks.values(), good) for job in pair]
    verdicts = {v.id: v for v in sandbox.run(jobs)}
    for name in attacks:
        assert not verdicts[name].passed, verdicts[name]
    for g in good:
        assert verdicts[g.id].passed, verdicts[g.id]
    assert not connections
    assert not any(p.exists() for p in host_targets)
    assert verdicts["alloc-8g"].status == "memory"
    assert verdicts["print-100mb"].status == "output_limit"
    for name in ("loop-python", "loop-c", "loop-catch-all", "fork-bomb"):
        assert verdicts[name].status == "timeout", verdicts[name]
        assert verdicts[name].wall_s <= 1.1 * TIMEOUT_S + 0.2
    listener.close()


def test_timeout_is_enforced_from_outside_in_wall_time(sandbox):
    start = time.monotonic()
    [v] = sandbox.run([check_job("c-loop", "def f(x):\n    return sum(range(10 ** 15))\n")])
    elapsed = time.monotonic() - start
    assert v.status == "timeout" and elapsed <= 1.1 * TIMEOUT_S + 0.2 + 0.3  # + the job's own start-up


def test_no_capabilities_unprivileged_and_read_only(sandbox):
    probe = '''
import os
def f(x):
    status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
    writable = []
    for d in ("/", "/usr", "/etc", "/opt/setrl-sandbox", "/dev/shm", "/proc/sys"):
        try:
            open(os.path.join(d, "probe"), "w").close()
            writable.append(d)
        except OSError:
            pass
    open("probe-in-cwd", "w").write("ok")  # the private temp dir is writable
    return [status["CapEff"].strip(), os.getuid(), writable, sorted(os.environ)]
'''
    test = "def check(c):\n    assert c(1) == ['0000000000000000', 65534, [], ['HOME', 'LANG', 'PATH', 'TMPDIR']]\n"
    [v] = sandbox.run([check_job("caps", probe, test)])
    assert v.passed, v


def test_temp_files_do_not_leak_to_the_next_job():
    # Deep, unreadable, read-only and symlinked entries: the runner must remove all of them
    # between jobs (one worker, so the reader runs in the writer's sandbox).
    writer = check_job("writer", (
        "import os\n"
        "open('/tmp/note', 'w').write('from a previous job')\n"
        "path = '/tmp/deep'\n"
        "for _ in range(300):\n"
        "    os.mkdir(path)\n"
        "    path += '/d'\n"
        "os.symlink('/', '/tmp/deep/root-link')\n"
        "os.symlink('/tmp/deep', '/tmp/loop')\n"
        "os.chmod('/tmp/note', 0)\n"
        "for level in range(300, 0, -1):\n"
        "    os.chmod('/tmp/deep' + '/d' * (level - 1), 0)\n"
        "def f(x):\n    return 2\n"))
    reader = check_job("reader", "import os\ndef f(x):\n    return sorted(os.listdir('/tmp'))\n",
                       "def check(c):\n    assert c(1) == []\n")
    with Sandbox(workers=1, timeout_s=TIMEOUT_S) as sb:
        verdicts = sb.run([writer, reader, writer, reader])
    assert [v.status for v in verdicts] == ["passed"] * 4, verdicts


def test_tampering_with_the_runner_only_costs_a_restart(sandbox):
    tamper = ("import resource, os\ndef f(x):\n    try:\n        resource.prlimit(1, resource.RLIMIT_NOFILE, (8, 8))\n"
              "    except OSError:\n        pass\n    return 2\n")
    jobs = [check_job("tamper", tamper)] + [check_job(f"after-{i}", "def f(x):\n    return x + 1\n") for i in range(4)]
    verdicts = sandbox.run(jobs)
    assert all(v.passed for v in verdicts[1:]), verdicts


def test_candidates_hold_only_their_own_fds():
    # A parent with thousands of open files hands the runner its control socket as a high fd
    # number; no candidate may inherit it (or anything but stdio and its channel to the judge).
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 6000:
        pytest.skip("needs RLIMIT_NOFILE >= 6000 to open 5000 files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 6000) if soft != resource.RLIM_INFINITY else soft, hard))
    held = [os.open("/dev/null", os.O_RDONLY) for _ in range(5000)]
    try:
        code = "import os\ndef f(x):\n    return sorted(int(n) for n in os.listdir('/proc/self/fd'))\n"
        with Sandbox(workers=1, timeout_s=TIMEOUT_S) as sb:
            [v] = sb.run([check_job("fds", code, "def check(c):\n    assert c(1) == [0, 1, 2, 3, 4]\n")])
        assert v.passed, v  # 3: the channel to the judge; 4: the listing's own directory fd
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

"""How sandbox processes are launched: bubblewrap when it works here, otherwise loudly without.

A sandbox is `bwrap ... python -I -S -B <inside script>` started with an EMPTY environment (a secret
in bwrap's own environment would be readable through /proc/<pid>/environ), as uid 65534 in a new
user namespace with no capabilities, new network/PID/IPC/UTS namespaces, a read-only view of /usr
and the Python install, a private size-capped tmpfs on /tmp, and nothing of the repository or
$HOME except the three stdlib-only files it runs. When the host is root, RLIMIT_NPROC does not
bind (the sandbox's uid maps to host root), so a pids cgroup per sandbox caps fork bombs.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSIDE_FILES = ("wire.py", "inside_runner.py", "inside_judge.py")
MOUNT = "/opt/setrl-sandbox"
PIDS_ROOT = Path("/sys/fs/cgroup/pids")
TMPFS_MB = 128
_counter = itertools.count()


class IsolationUnavailable(RuntimeError):
    """require_isolation is set but bubblewrap cannot sandbox here."""


@dataclass(frozen=True)
class Isolation:
    """What this host can do. `bwrap` None means programs run WITHOUT isolation."""

    bwrap: str | None
    pids_cgroup: bool
    reason: str

    @property
    def available(self) -> bool:
        return self.bwrap is not None


def python_binary() -> str:
    """The base interpreter (not the venv's): the inside scripts need only the stdlib."""
    return os.path.realpath(os.path.join(sys.base_prefix, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}"))


def bwrap_args(bwrap: str) -> list[str]:
    """The bubblewrap flags shared by every sandbox (see the module docstring for why each)."""
    args = [bwrap, "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
            "--cap-drop", "ALL", "--die-with-parent", "--as-pid-1", "--new-session", "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--setenv", "HOME", "/tmp",
            "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):  # e.g. pyenv under /root: bind only the install, read-only
        args += ["--ro-bind", prefix, prefix]
    for name in INSIDE_FILES:
        args += ["--ro-bind", str(HERE / name), f"{MOUNT}/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMPFS_MB << 20), "--tmpfs", "/tmp",
             "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp", "--"]
    return args


@functools.lru_cache(maxsize=1)
def probe() -> Isolation:
    """Check once per process whether bubblewrap (and a pids cgroup) works here."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Isolation(None, False, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    cmd = bwrap_args(bwrap) + [python_binary(), "-I", "-S", "-c", "import os; assert os.getpid() == 1"]
    try:
        proc = subprocess.run(cmd, env={}, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Isolation(None, False, f"bubblewrap failed to start: {e}")
    if proc.returncode != 0:
        return Isolation(None, False, f"bubblewrap probe failed: {proc.stderr.decode(errors='replace')[:300]}")
    return Isolation(bwrap, _pids_cgroup_works(), "")


def isolation_available() -> bool:
    """True when programs will run inside bubblewrap sandboxes."""
    return probe().available


def _pids_cgroup_works() -> bool:
    if os.geteuid() != 0 or not PIDS_ROOT.is_dir():
        return False  # non-root hosts: RLIMIT_NPROC (set inside) counts per user namespace
    path = PIDS_ROOT / f"setrl-{os.getpid()}-probe"
    try:
        path.mkdir()
        (path / "pids.max").write_text("8")
        path.rmdir()
        return True
    except OSError:
        return False


# $0 is the group's directory, $1 its pids.max, the rest the sandbox command. The shell creates
# the group (so no group exists that no shell will remove) and runs the sandbox as its child, so
# that it outlives the sandbox and can remove the (by then empty) group. On TERM (the parent died)
# it kills everything in the group but itself and bwrap; bwrap then reaps its child and exits, so
# no zombie waits for the host's init to reap it (a zombie keeps a cgroup-v1 group busy). If the
# parent dies before the signal is armed, the sandbox still ends: its control socket closes.
_CGROUP_SHELL = """leave() {
    [ -d "$0" ] || return 0
    others=$(grep -vx -e "$$" -e "${child:-0}" "$0/cgroup.procs")
    if [ -n "$others" ]; then kill -9 $others 2>/dev/null; else kill -9 ${child:-} 2>/dev/null; fi
    wait
    echo $$ > "$0/../cgroup.procs"
    for _ in $(seq 200); do rmdir "$0" 2>/dev/null && break; sleep 0.05; done
}
trap 'leave; exit 143' TERM
mkdir "$0" && echo "$1" > "$0/pids.max" && echo $$ > "$0/cgroup.procs" || exit 1
shift
"$@" &
child=$!
wait $child
status=$?
leave
exit $status
"""


class PidsCgroup:
    """A cgroup-v1 pids group capping how many tasks one sandbox may have (fork bombs stop)."""

    def __init__(self, max_pids: int):
        clean_stale_cgroups()
        self.path = PIDS_ROOT / f"setrl-{os.getpid()}-{next(_counter)}"
        self.max_pids = max_pids

    def wrap(self, cmd: list[str]) -> list[str]:
        """Prefix `cmd` with a shell that creates this group and enters it before bwrap forks
        anything, and removes it when the sandbox ends, even when the parent is SIGKILLed: setpriv
        gives the shell a parent-death signal, on which it kills the sandbox and removes the group.
        (When the parent closes a sandbox it kills the shell too, then removes the group itself.)"""
        shell = ["/bin/sh", "-c", _CGROUP_SHELL, str(self.path), str(self.max_pids), *cmd]
        setpriv = shutil.which("setpriv")
        return [setpriv, "--pdeathsig", "TERM", *shell] if setpriv else shell

    def remove(self) -> None:
        for _ in range(50):  # the kernel empties a group asynchronously after its tasks die
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


def clean_stale_cgroups() -> None:
    """Remove groups left by a parent that was killed (its PID is in the name)."""
    for path in PIDS_ROOT.glob("setrl-*-*"):
        pid = int(path.name.split("-")[1])
        if not Path(f"/proc/{pid}").exists():
            try:
                path.rmdir()
            except OSError:
                pass


def inside_command(script: str, iso: Isolation, ctl_fd: int, workdir: str) -> list[str]:
    """The command line that starts `script` (runner or judge), sandboxed when possible."""
    tail = ["-I", "-S", "-B"]
    if iso.available:
        return bwrap_args(iso.bwrap) + [python_binary(), *tail, f"{MOUNT}/{script}", "--ctl-fd", str(ctl_fd), "--workdir", "/tmp"]
    return [python_binary(), *tail, str(HERE / script), "--ctl-fd", str(ctl_fd), "--workdir", workdir]

"""The kernel supervisor: the parent of one kernel, so that nothing the kernel starts outlives it.

A kernel's children may leave its process group (`setsid`), lose their parent (a double fork) or
ignore SIGHUP (`nohup`): killing the kernel's process group misses them, and PR_SET_PDEATHSIG only
reaches the kernel itself. GuardedProvisioner (provisioner.py) therefore starts this small program,
which starts the kernel:

- it is a child subreaper (PR_SET_CHILD_SUBREAPER): every orphan of the kernel's tree is reparented
  to it instead of to init, so the whole tree stays below it and can be found from it;
- where the machine allows (cgroup v2 with `cgroup.kill`, Linux >= 5.14, and the server's cgroup
  writable: root, or a cgroup delegated to the user), the kernel starts in a cgroup of its own, a
  child of the server's; every process the kernel starts is in it, and one write kills them all,
  even a tree that forks as fast as it is killed;
- when the kernel exits, when it is asked to end (SIGTERM or SIGHUP: GuardedProvisioner.kill), and
  when the server dies (PR_SET_PDEATHSIG gives it SIGTERM), it kills the cgroup and SIGKILLs every
  descendant until none is left, reaps them, removes the cgroup and exits as the kernel did (its
  exit code, or killed by the same signal), so `poll()` and exit codes describe the kernel;
- the kernel runs in its own session, as jupyter_client starts kernels; SIGINT (how jupyter_client
  interrupts a signal-mode kernel: it signals the process group of the process it started) and
  SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to the kernel's process group, which is what
  jupyter_client would have signalled without a supervisor;
- the kernel gets PR_SET_PDEATHSIG (SIGKILL) from this process, so even a supervisor killed with
  SIGKILL leaves no kernel behind (the kernel's other descendants are then only ended by the cgroup,
  which GuardedProvisioner kills as a last resort).

One thread; signals are blocked and taken one at a time with sigwaitinfo. Standard library only, run
isolated and without site (`python -I -S`) and without contextlib: it adds 10-75 ms to a kernel start
on a loaded 2-core machine and holds ~10 MB RSS (~4 MB private) per kernel (docs/benchmarks.md).
Linux only (elsewhere the provisioner starts kernels directly).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from collections.abc import Callable

from context_kernel.lifeline import become_subreaper, descendants, die_with_parent

END = frozenset({signal.SIGTERM, signal.SIGHUP})
FORWARD = frozenset({signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2})
WATCHED = END | FORWARD | {signal.SIGCHLD}
CGROUP_PREFIX = "ck-kernel-"


def command(kernel_argv: list[str], cgroup: str | None) -> list[str]:
    """The argv that runs `kernel_argv` under a supervisor (in the `cgroup` directory it makes, if any)."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    boot = (f"import sys; sys.path.insert(0, {package_root!r}); "
            "from context_kernel.kernels.supervisor import main; main()")
    return [sys.executable, "-I", "-S", "-c", boot, *(["--cgroup", cgroup] if cgroup else []), "--", *kernel_argv]


def cgroup_directory(path: str | None = None) -> str | None:
    """Where the cgroup v2 `path` (default: this process's own) is mounted; None without cgroup v2."""
    try:
        if path is None:
            with open("/proc/self/cgroup") as f:
                path = next((line[3:].strip() for line in f if line.startswith("0::")), None)
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    if path is None:
        return None
    for fields in mounts:
        # id parent dev root mountpoint options [optional...] - fstype source superoptions
        if "-" not in fields or fields[fields.index("-") + 1] != "cgroup2":
            continue
        root, mountpoint = fields[3], fields[4]
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return os.path.normpath(os.path.join(mountpoint, os.path.relpath(path, root)))
    return None


def new_cgroup_path(name: str) -> str | None:
    """Where a kernel's cgroup `name` would go: under this process's cgroup (None without cgroup v2)."""
    parent = cgroup_directory()
    return os.path.join(parent, CGROUP_PREFIX + name) if parent else None


def _write(path: str, text: str) -> None:
    """Write a cgroup control file; a cgroup that is gone or not ours to write is no error here."""
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError:
        pass


def _quietly(call: Callable[..., object], *args: object) -> None:
    """`call(*args)` for a signal or a removal whose target may be gone already."""
    try:  # noqa: SIM105 - contextlib would add ~5 ms (a third) to the supervisor's start
        call(*args)
    except OSError:
        pass


def kill_cgroup(path: str) -> None:
    """SIGKILL every process in the cgroup at `path` (nothing if it is gone or cannot be written)."""
    _write(os.path.join(path, "cgroup.kill"), "1")


def end_cgroup(path: str, timeout: float = 2.0) -> None:
    """SIGKILL every process in the cgroup at `path`, wait (at most `timeout` s) until none is left, and
    remove it. The wait is event-driven: `cgroup.events` notifies every change of `populated`."""
    kill_cgroup(path)
    deadline = time.monotonic() + timeout
    try:
        with open(os.path.join(path, "cgroup.events")) as events:
            poller = select.poll()
            poller.register(events, select.POLLPRI)
            while "populated 1" in events.read() and (left := deadline - time.monotonic()) > 0:
                poller.poll(left * 1000)
                events.seek(0)
    except OSError:
        pass
    _quietly(os.rmdir, path)


def _make_cgroup(path: str | None) -> str | None:
    """Make the kernel's cgroup; None if this machine does not let us (the tree walk alone then ends it)."""
    if path is None:
        return None
    try:
        os.mkdir(path)  # fails without cgroup v2, without write access here (not root, no delegation)
    except OSError:
        return None
    if not os.path.exists(os.path.join(path, "cgroup.kill")):  # Linux < 5.14
        _quietly(os.rmdir, path)
        return None
    return path


def _start(argv: list[str], cgroup: str | None) -> int:
    supervisor = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:  # the kernel, between fork and exec
        os.setsid()
        die_with_parent(signal.SIGKILL, parent=supervisor)
        if cgroup is not None:
            _write(os.path.join(cgroup, "cgroup.procs"), "0")  # "0": the writing process
        for signum in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; exec would keep that
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.execvp(argv[0], argv)
    except BaseException as exc:  # noqa: BLE001 - whatever it was, the log says it and the kernel "exits" 127
        _quietly(os.write, 2, f"context-kernel supervisor: cannot start {argv[0]!r}: {exc}\n".encode())
    os._exit(127)


def _reap(kernel: int, status: int | None) -> int | None:
    """Reap every child that has exited; the kernel's wait status once it is among them."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == kernel:
            status = code


def _end_tree(kernel: int, status: int | None, cgroup: str | None) -> int | None:
    """SIGKILL the cgroup and every descendant until none is left; reap them all. Returns the kernel's status."""
    if cgroup is not None:
        kill_cgroup(cgroup)
    me = os.getpid()
    while pids := descendants(me):
        for pid in pids:
            _quietly(os.kill, pid, signal.SIGKILL)
        try:  # all of them are dying: this returns as soon as one of our children has
            pid, code = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == kernel:
            status = code
        status = _reap(kernel, status)
    if cgroup is not None:
        end_cgroup(cgroup)  # empty by now, unless something outside our tree was moved into it
    return status


def _exit_as(status: int | None) -> None:
    """Exit the way the kernel did: the same code, or killed by the same signal (without a core file)."""
    if status is not None and os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if signum != signal.SIGKILL:  # which cannot be caught, so needs no resetting
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # a signal that does not end a process
    os._exit(os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else 1)


def main(argv: list[str] | None = None) -> None:
    """`[--cgroup DIR] -- KERNEL_ARGV...`: run the kernel; return only by exiting as it did."""
    args = sys.argv[1:] if argv is None else argv
    split = args.index("--")
    options = dict(zip(args[:split:2], args[1:split:2], strict=True))
    kernel_argv = args[split + 1:]
    # Blocked before anything starts: a signal that comes early waits for the loop below.
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    become_subreaper()
    cgroup = _make_cgroup(options.get("--cgroup"))
    kernel = _start(kernel_argv, cgroup)
    status: int | None = None
    while status is None:
        signum = signal.sigwaitinfo(WATCHED).si_signo
        if signum == signal.SIGCHLD:
            status = _reap(kernel, status)
        elif signum in END:
            break
        else:
            _quietly(os.killpg, kernel, signum)
    _exit_as(_end_tree(kernel, status, cgroup))

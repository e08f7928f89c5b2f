"""Answer now, record later: how a hook under overload lets its client go before its recording is done.

A client waits for the hook process to exit. When the machine is overloaded (a burst of parallel tool
calls, every core busy) a hook that extracts, redacts and spools inline makes its agent wait for
CPU time it cannot get: 100 hooks at once on two busy cores answered after up to 15 s. So a hook that
is already late when its answer is ready (`overloaded`) writes the answer, lets go of the client's
pipes and forks (`detach`): the parent exits at once, and the child does the recording at the lowest
CPU priority, behind the hooks still answering. It spools exactly what an inline recording would
(redacted with the hook's own environment), so ingestion does not know the difference.

A child records while it holds a lock on a marker file in `spool/deferred/`; `wait_for_deferred`
waits on those locks (tests, benchmarks, a PreCompact that wants every event in its snapshot). A
child that dies mid-way releases its lock with its last file descriptor and its marker is removed by
the next waiter; its one call's events are lost, as they would be had the hook been killed.

Standard library only: this runs in every hook.
"""

from __future__ import annotations

import os
import time

from ..datadir import open_private, private_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook's first step
if TYPE_CHECKING:
    from collections.abc import Callable

try:
    import fcntl
except ImportError:  # Windows: no fork either; hooks record inline there
    fcntl = None  # type: ignore[assignment]  # the module is optional: checked before each use

# A hook whose answer is ready later than this after its process started is on an overloaded machine
# (serially the whole hook takes ~0.1-0.2 s): recording inline would keep its client waiting longer still.
DEFER_AFTER_S = 0.3
# The deferred recording runs at the lowest priority, so hooks still answering get the CPU first.
DEFERRED_NICENESS = 19


DEFERRED_DIR = "spool/deferred"


def deferred_dir(home: str | os.PathLike[str]) -> str:
    return os.path.join(home, *DEFERRED_DIR.split("/"))


def process_age() -> float | None:
    """Seconds since this process started (Linux), None where the system does not say.

    The age, not the time since `main` began, is what the client has waited: under overload the
    interpreter's start and the imports take most of it.
    """
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        started_ticks = int(stat.rsplit(b")", 1)[1].split()[19])  # field 22 of proc(5); fields here start at 3
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def overloaded(age_s: float, defer_after_s: float = DEFER_AFTER_S) -> bool:
    """Whether a hook this old when its answer is ready should record in the background."""
    return fcntl is not None and hasattr(os, "fork") and age_s >= defer_after_s


def detach(home: str | os.PathLike[str], niceness: int = DEFERRED_NICENESS) -> Callable[[], None] | None:
    """Let the client go and continue in a child at the lowest priority.

    Call it after the answer is written and flushed. The parent never returns: it exits, and with it
    the last holder of the client's stdout and stderr (the child's are /dev/null). The child gets the
    function to call once its recording is spooled. None when no child could be made: the caller
    then records inline (the client has its answer, but waits for the exit).
    """
    assert fcntl is not None, "overloaded() says False without flock"
    try:
        marker = os.path.join(private_dir(home, DEFERRED_DIR), str(os.getpid()))
        fd = open_private(marker, os.O_WRONLY | os.O_TRUNC)
    except OSError:
        return None
    fcntl.flock(fd, fcntl.LOCK_EX)  # shared with the child by fork: released when the child is done
    # Before the fork, so that the child never holds the client's pipes: they reach EOF with our exit.
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(null, std)
    os.close(null)
    try:
        child = os.fork()
    except OSError:
        _release(marker, fd)
        return None
    if child:
        os._exit(0)  # the client stops waiting here: the answer was flushed by the caller
    import contextlib  # the child's: the client is answered

    # A process group of its own: a Ctrl-C for the client's group is not for us. Not a session of its
    # own (setsid): with autogroup scheduling (Linux's default) each session is a group that gets as
    # much CPU as the client's whole session, and the nice value below would mean nothing.
    with contextlib.suppress(OSError):  # else it stays in the client's group, as an inline recording would
        os.setpgid(0, 0)
    with contextlib.suppress(OSError):  # a lower priority is a courtesy: without it the recording still happens
        os.nice(niceness)
    return lambda: _release(marker, fd)


def _release(marker: str, fd: int) -> None:
    import contextlib  # in the child, or when no child was made: off the first step

    with contextlib.suppress(FileNotFoundError):
        os.unlink(marker)
    os.close(fd)


def wait_for_deferred(home: str | os.PathLike[str], timeout_s: float) -> bool:
    """Block until every recording deferred so far is spooled (or its child died); False on timeout."""
    if fcntl is None:
        return True
    end = time.monotonic() + timeout_s
    folder = deferred_dir(home)
    while True:
        try:
            markers = [os.path.join(folder, name) for name in sorted(os.listdir(folder))]
        except FileNotFoundError:
            return True
        if not markers:
            return True
        for marker in markers:
            if not _wait_for_marker(marker, end - time.monotonic()):
                return False


def _wait_for_marker(marker: str, timeout_s: float) -> bool:
    try:
        fd = os.open(marker, os.O_RDONLY)
    except FileNotFoundError:
        return True
    import threading  # only waiters need it, never a hook

    # flock has no timeout: a helper thread takes the lock, and this one waits for it with one.
    got = threading.Event()
    guard = threading.Lock()
    abandoned = False

    def take() -> None:
        assert fcntl is not None
        fcntl.flock(fd, fcntl.LOCK_EX)
        with guard:
            if abandoned:
                os.close(fd)
            else:
                got.set()

    threading.Thread(target=take, daemon=True, name="deferred-recording").start()
    if not got.wait(max(0.0, timeout_s)):
        with guard:
            if not got.is_set():
                abandoned = True  # the helper closes the file once it gets the lock
                return False
    try:
        # Locked, so its child is gone. One that finished unlinked the marker first; one that died
        # left it behind: remove it, unless the name now leads to a new marker.
        opened, named = os.fstat(fd), os.stat(marker)
        if (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino):
            os.unlink(marker)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)
    return True

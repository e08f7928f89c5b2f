"""How a process we start dies with the process that started it: one implementation for all of them.

Linux's PR_SET_PDEATHSIG delivers a signal to a process when its parent exits, however the parent
exits (SIGKILL included), so a killed server leaves no kernel behind and a killed kernel no cell
process. It is asked for in the child between fork and exec (`preexec_fn`), or by a process for
itself (the server, for the client that started it). PR_SET_CHILD_SUBREAPER makes a process the
new parent of every orphan below it, so a tree can be found, and ended, from its root (the kernel
supervisor, kernels/supervisor.py). Elsewhere both do nothing. Standard library only: kernel
processes import it too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_prctl: Callable[..., int] | None
try:  # looked up at import: between fork and exec (other threads running) no dlopen is safe
    _prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _prctl = None


def die_with_parent(signum: int = signal.SIGKILL, parent: int | None = None) -> None:
    """Ask for `signum` when the parent exits (a `preexec_fn`, or called by a process for itself).

    With `parent` (the parent's pid, taken before the fork), a parent that already exited before the
    request was made counts too: the signal is sent at once.

    Linux sends the signal when the *thread* that forked the child ends, not only the process: spawn
    from the event loop's thread or from a thread that outlives the child (semantic/embed_process.py).
    """
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if parent is not None and os.getppid() != parent:
            os.kill(os.getpid(), signum)


def become_subreaper() -> bool:
    """Become the parent of every orphan among this process's descendants; False where unsupported."""
    return _prctl is not None and _prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def descendants(pid: int) -> list[int]:
    """All processes below pid, parents first (one scan of /proc; Linux only)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(b")", 1)[1].split()[1])  # the name in () may hold spaces
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found.extend(kids)
        todo.extend(kids)
    return found


def cell_child_setup() -> None:
    """`preexec_fn` of the processes a kernel runs cells in: die with the kernel, and start with the
    default SIGINT (ipykernel ignores it, and children inherit that), so an interrupt reaches them."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)

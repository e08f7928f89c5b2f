"""How a process we start dies with the process that started it: one implementation for all of them.

Linux's PR_SET_PDEATHSIG delivers a signal to a process when its parent exits, however the parent
exits (SIGKILL included), so a killed server leaves no kernel behind and a killed kernel no cell
process. It is asked for in the child between fork and exec (`preexec_fn`), or by a process for
itself (the server, for the client that started it). Elsewhere it does nothing. Standard library
only: kernel processes import it too.
"""

from __future__ import annotations

import ctypes
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1

_prctl: Callable[..., int] | None
try:  # looked up at import: between fork and exec (other threads running) no dlopen is safe
    _prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _prctl = None


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Ask for `signum` when the parent exits (a `preexec_fn`, or called by a process for itself)."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def cell_child_setup() -> None:
    """`preexec_fn` of the processes a kernel runs cells in: die with the kernel, and start with the
    default SIGINT (ipykernel ignores it, and children inherit that), so an interrupt reaches them."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)

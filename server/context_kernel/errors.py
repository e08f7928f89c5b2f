"""The error vocabulary of context-kernel. Adapters map library errors to these with `raise ... from exc`.

Each error carries fields a caller can act on, and a `hint`: what the agent should do next.
"""

from __future__ import annotations


class ContextKernelError(Exception):
    """Base of every error we raise on purpose."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        if hint:
            self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n{self.hint}" if self.hint else self.message


class InvalidRequest(ContextKernelError):
    """The arguments cannot be acted on (unknown language, bad timeout, empty code)."""


class PathRefused(InvalidRequest):
    """A path resolves outside the project directory (symlinks included) or does not exist."""

    def __init__(self, message: str, *, path: str, resolved: str | None = None, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.path = path
        self.resolved = resolved


class Denied(InvalidRequest):
    """A deny rule from the user's Claude Code settings forbids this command, code or path."""

    # The message (from security.deny) already says what to do instead.

    def __init__(self, message: str, *, rule: str, source: str = "") -> None:
        super().__init__(message)
        self.rule = rule
        self.source = source


class KernelError(ContextKernelError):
    """Something went wrong with a kernel process."""


class KernelUnavailable(KernelError):
    """No kernelspec or runtime for the language; `install` says what to install."""

    def __init__(self, message: str, *, language: str, install: str = "") -> None:
        super().__init__(message, hint=install)
        self.language = language
        self.install = install


class KernelStartFailed(KernelError):
    """The kernel process did not come up (crashed or did not answer in time)."""

    def __init__(self, message: str, *, kernel_name: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.kernel_name = kernel_name
        self.log_tail = log_tail


class KernelDied(KernelError):
    """The kernel process exited while a cell ran (segfault, os._exit, OOM kill)."""

    def __init__(self, message: str, *, kernel_name: str, exit_code: int | None) -> None:
        super().__init__(message)
        self.kernel_name = kernel_name
        self.exit_code = exit_code


class PoolExhausted(KernelError):
    """The configured maximum of live kernels is reached and none is idle to evict."""


class StoreError(ContextKernelError):
    """The SQLite store failed (locked beyond retries, corrupt, disk full)."""


MAX_CONCURRENCY = 8


def check_batch(count: int, limit: int, concurrency: int, *, noun: str, example: str) -> None:
    """Refuse an empty or oversized batch, or a concurrency outside 1..8, saying what to pass."""
    if count == 0:
        raise InvalidRequest(f"no {noun} given", hint=f"pass {example}")
    if count > limit:
        raise InvalidRequest(f"{count} {noun} is more than {limit} in one call", hint="split the batch")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise InvalidRequest(f"concurrency must be 1..{MAX_CONCURRENCY}, not {concurrency}")

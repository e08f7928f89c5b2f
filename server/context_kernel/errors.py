"""The error vocabulary of context-kernel. Adapters map library errors to these with `raise ... from exc`.

Each error carries fields a caller can act on, and a `hint`: what the agent should do next. The
MCP edge (`tools/server.py`) is the one place that turns them into results: an `isError` result
whose text is the message, then the hint. Code that fails *inside* a kernel is not an error here:
it is the cell's output, returned as data.

    ContextKernelError                 every error we raise on purpose (message + hint)
    ├── InvalidRequest                 the arguments cannot be acted on
    │   ├── PathRefused                a path escapes the project or does not exist
    │   └── Denied                     a deny rule in the user's Claude Code settings forbids it
    ├── KernelError                    a kernel process misbehaved
    │   ├── KernelUnavailable          no kernelspec or runtime for the language
    │   ├── KernelStartFailed          the kernel did not come up
    │   ├── KernelRestartFailed        an interrupted kernel could not be restarted
    │   └── PoolExhausted              every kernel slot is busy
    ├── StoreError                     SQLite failed (locked beyond retries, corrupt, disk full)
    ├── ReplayError                    a notebook cannot be replayed here (notebooks/replay.py)
    ├── SemanticUnavailable            the embedding model cannot run: extra missing, file tampered
    └── FetchError                     a URL could not be fetched or indexed (web/errors.py)
        ├── FetchBlocked               the address rules refuse the URL or an address it resolves to
        ├── FetchTooLarge              the body is over the size cap
        ├── FetchTimeout               a phase of the fetch took too long
        ├── FetchUnreachable           no connection (DNS, refused, TLS)
        ├── FetchHTTPError             a 4xx or 5xx answer
        ├── FetchTooManyRedirects      the redirect chain is over the limit
        └── UnsupportedContent         the body is binary: nothing to index as text

A kernel that dies while a cell runs is not an exception: the cell's outcome says so
(`died`), the reply is an error result, and the pool replaces the kernel.
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

    def __init__(self, message: str, *, kernel_name: str, log_tail: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.kernel_name = kernel_name
        self.log_tail = log_tail


class KernelRestartFailed(KernelError):
    """An interrupt did not stop the cell and the restart that followed failed too; the kernel is replaced."""

    def __init__(self, message: str, *, kernel_name: str) -> None:
        super().__init__(message, hint="call again: a new kernel starts (its state is lost)")
        self.kernel_name = kernel_name


class PoolExhausted(KernelError):
    """The configured maximum of live kernels is reached and none is idle to evict."""


class StoreError(ContextKernelError):
    """The SQLite store failed (locked beyond retries, corrupt, disk full)."""

    hint = "check the data dir (CONTEXT_KERNEL_HOME): free disk space, permissions; `context-kernel doctor` tests it"


class ReplayError(ContextKernelError):
    """An exported notebook cannot be replayed here: it names no kernel, a part is missing, or a
    kernel it needs is not installed."""


class SemanticUnavailable(ContextKernelError):
    """The semantic extra cannot run: not installed (`missing`) or its model files are refused (`broken`).

    Search goes on lexically; doctor and ctx_index's reply carry the message and the hint.
    """

    def __init__(self, message: str, *, state: str, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.state = state

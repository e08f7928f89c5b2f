"""ck-bash: a Jupyter kernel over one persistent bash; a warm cell costs bash ~0.4 ms.

Launched as ``python -m context_kernel.kernel_processes.bash -f {connection_file}``. The shell
itself (how a cell runs, ends, is interrupted, and how a dead shell is replaced) lives in
``bash_shell``; this module speaks the Jupyter protocol: stream messages coalesced from raw
output, ExitCode / KeyboardInterrupt errors, SIGINT handling, and a lean startup.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import signal
import sys
from collections.abc import Callable
from typing import Any

from ipykernel._version import kernel_protocol_version
from ipykernel.kernelbase import Kernel

from context_kernel.kernel_processes.bash_shell import BashShell, CellOutcome
from context_kernel.kernel_processes.iopub_flow import FlowControlledApp, StreamWindow

FLUSH_DELAY = 0.005  # s output may wait to be coalesced with more
FLUSH_SIZE = 64 * 1024  # bytes that force an immediate stream message
RESET_NOTE = (
    "a new shell was started: unexported variables, functions, aliases and options are gone;"
    " the working directory and exported variables were kept"
)


class StreamBatcher:
    """Turns raw stdout/stderr chunks into few stream messages (every 5 ms or 64 KiB).

    Streams are decoded incrementally as UTF-8 (invalid bytes become U+FFFD, characters
    split across reads stay whole) and flushed in the order their pending text arrived.
    """

    def __init__(self, send: Callable[[str, str], None], loop: asyncio.AbstractEventLoop):
        self._send = send
        self._loop = loop
        self._decoders = {
            name: codecs.getincrementaldecoder("utf-8")("replace") for name in ("stdout", "stderr")
        }
        self._pending: dict[str, list[str]] = {}
        self._size = 0
        self._timer: asyncio.TimerHandle | None = None

    def feed(self, name: str, data: bytes) -> None:
        text = self._decoders[name].decode(data)
        if text:
            self._pending.setdefault(name, []).append(text)
            self._size += len(data)
        if self._size >= FLUSH_SIZE:
            self.flush()
        elif self._pending and self._timer is None:
            self._timer = self._loop.call_later(FLUSH_DELAY, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending, self._size = self._pending, {}, 0
        for name, parts in pending.items():
            self._send(name, "".join(parts))

    def close(self) -> None:
        for name, decoder in self._decoders.items():
            tail = decoder.decode(b"", final=True)
            if tail:
                self._pending.setdefault(name, []).append(tail)
        self.flush()


class BashKernel(Kernel):
    implementation = "ck-bash"
    implementation_version = "0.1.0"
    banner = "bash (context-kernel): one persistent shell; cd, variables and functions persist"
    language_info = {  # noqa: RUF012 - ipykernel's Kernel reads it as a plain class attribute
        "name": "bash",
        "mimetype": "text/x-sh",
        "file_extension": ".sh",
        "pygments_lexer": "bash",
        "codemirror_mode": "shell",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending_interrupt = False
        self._handler_count = 0  # tells a late SIGINT from one for the current request
        # ipykernel sleeps 0.5 ms per cell so OutStream prints reach iopub before the reply;
        # our stream messages are queued on iopub before the reply is built
        self._execute_sleep = 0.0
        self._window = StreamWindow(self.iopub_thread)
        self._shell = BashShell()
        self._shell.start()  # now, so bash is warm by the first cell
        atexit.register(self._shell.close)

    @property
    def kernel_info(self) -> dict[str, Any]:
        # the base property imports ipykernel.debugger (~40 ms) only to advertise debugpy
        return {
            "protocol_version": kernel_protocol_version,
            "implementation": self.implementation,
            "implementation_version": self.implementation_version,
            "language_info": {**self.language_info, "version": self._shell.version},
            "banner": self.banner,
            "help_links": [],
            "supported_features": [],
        }

    # -- SIGINT: ipykernel would raise KeyboardInterrupt anywhere in the event loop -------

    def pre_handler_hook(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._handler_count += 1
        self._pending_interrupt = False
        self.saved_sigint_handler = signal.signal(signal.SIGINT, self._on_sigint)

    def post_handler_hook(self) -> None:
        signal.signal(signal.SIGINT, self.saved_sigint_handler)

    def _on_sigint(self, signum: int, frame: object) -> None:
        # a signal handler runs between bytecodes: defer the work to the loop, and wake it
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._interrupt, self._handler_count)

    def _interrupt(self, handler_count: int) -> None:
        if handler_count != self._handler_count:
            return  # meant for a request that has finished since
        if not self._shell.interrupt():
            self._pending_interrupt = True  # arrived before the cell reached bash

    # -- execution -----------------------------------------------------------------------

    async def do_execute(
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
        *,
        cell_meta: dict[str, Any] | None = None,
        cell_id: str | None = None,
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        if self._pending_interrupt:
            return self._error("KeyboardInterrupt", "interrupted", ["KeyboardInterrupt"])
        meta = (self.get_parent().get("metadata") or {}).get("context_kernel") or {}
        file_path = meta.get("file_path") if isinstance(meta, dict) else None
        batcher = StreamBatcher(self._send_stream if not silent else _discard, loop)
        try:
            outcome = await self._shell.run(
                code,
                batcher.feed,
                file_path=file_path if isinstance(file_path, str) else None,
                gate=self._window,
            )
        except OSError as exc:  # no shell could be started: answer rather than leave a hang
            self.log.exception("ck-bash: running a cell failed")
            return self._error(type(exc).__name__, str(exc), [f"{type(exc).__name__}: {exc}"])
        finally:
            batcher.close()
        return self._reply(outcome, silent)

    def _send_stream(self, name: str, text: str) -> None:
        self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})
        self._window.queued()

    def _reply(self, outcome: CellOutcome, silent: bool) -> dict[str, Any]:
        note = [f"{outcome.restarted}; {RESET_NOTE}"] if outcome.restarted else []
        # the server reads this to tell the agent what an interrupt or timeout cost
        report = {"context_kernel": {"state_lost": True, "note": note[0]}} if note else {}
        if outcome.interrupted:
            return {**self._error("KeyboardInterrupt", "interrupted", ["KeyboardInterrupt", *note]), **report}
        if outcome.status != 0:
            code = str(outcome.status)
            return {**self._error("ExitCode", code, [f"ExitCode: {code}", *note]), **report}
        if note and not silent:  # e.g. `exit 0`: not an error, but the agent must know
            self._send_stream("stderr", f"[ck-bash] {note[0]}\n")
        return {
            "status": "ok",
            "execution_count": self.execution_count,
            "payload": [],
            "user_expressions": {},
            **report,
        }

    def _error(self, ename: str, evalue: str, traceback: list[str]) -> dict[str, Any]:
        content = {"ename": ename, "evalue": evalue, "traceback": traceback}
        self.send_response(self.iopub_socket, "error", content)
        return {"status": "error", "execution_count": self.execution_count, **content}

    async def do_is_complete(self, code: str) -> dict[str, Any]:
        return {"status": "complete"}

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:
        self._shell.close()
        return {"status": "ok", "restart": restart}


def _discard(name: str, text: str) -> None:
    """Stream sink for silent cells."""


class BashKernelApp(FlowControlledApp):
    def init_pdb(self) -> None:
        """Skip: it swaps in IPython's pdb (and imports it) for Python code we never run."""

    def init_io(self) -> None:
        super().init_io()
        # ipykernel's OutStream forwards Python prints, which this kernel has none of, and
        # every flush of it (four per cell) waits on the iopub thread: ~0.5 ms a cell.
        # Stray prints go to the kernel's own stdout/stderr, i.e. the server's log.
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__


def main() -> None:
    # capture_fd_output=False: do not hijack fds 1/2 into iopub (see init_io)
    BashKernelApp.launch_instance(kernel_class=BashKernel, capture_fd_output=False)


if __name__ == "__main__":
    main()

"""ck-bash: a Jupyter kernel over one persistent bash; a warm cell costs bash ~0.4 ms.

Launched as ``python -m context_kernel.kernel_processes.bash -f {connection_file}``. The shell
itself (how a cell runs, ends, is interrupted, and how a dead shell is replaced) lives in
``bash_shell``; the Jupyter protocol in ``lean_kernel`` (no ipykernel: its machinery cost a cell
2-4 ms and a start ~0.3 s); this module turns cells into Jupyter output: stream messages
coalesced from raw output, ExitCode / KeyboardInterrupt errors, the state-lost report.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import logging
from collections.abc import Callable
from typing import Any, ClassVar

from context_kernel.kernel_processes.bash_shell import BashShell, CellOutcome
from context_kernel.kernel_processes.lean_kernel import LeanKernel, Request, launch

FLUSH_DELAY = 0.005  # s output may wait to be coalesced with more
FLUSH_SIZE = 64 * 1024  # bytes that force an immediate stream message
log = logging.getLogger("context_kernel.ck_bash")
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


class BashKernel(LeanKernel):
    implementation = "ck-bash"
    implementation_version = "0.1.0"
    banner = "bash (context-kernel): one persistent shell; cd, variables and functions persist"
    language_info: ClassVar[dict[str, Any]] = {
        "name": "bash",
        "mimetype": "text/x-sh",
        "file_extension": ".sh",
        "pygments_lexer": "bash",
        "codemirror_mode": "shell",
    }

    def __init__(self, connection: dict[str, Any]) -> None:
        super().__init__(connection)
        self._shell = BashShell()
        self._shell.start()  # now, so bash is warm by the first cell
        self._closed = False
        atexit.register(self.shutdown, False)

    def kernel_info(self) -> dict[str, Any]:
        info = super().kernel_info()
        return {**info, "language_info": {**self.language_info, "version": self._shell.version}}

    def interrupt(self) -> None:
        self._shell.interrupt()

    # -- execution -----------------------------------------------------------------------

    async def execute(self, request: Request) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        meta = request.metadata.get("context_kernel") or {}
        file_path = meta.get("file_path") if isinstance(meta, dict) else None
        batcher = StreamBatcher(self._send_stream if not request.silent else _discard, loop)
        cwd = self._shell.cwd  # where the cell's relative paths start: the server reads its files from them
        try:
            outcome = await self._shell.run(
                request.code,
                batcher.feed,
                file_path=file_path if isinstance(file_path, str) else None,
                gate=self.iopub,
            )
        except OSError as exc:  # no shell could be started: answer rather than leave a hang
            log.exception("ck-bash: running a cell failed")
            return self._error(type(exc).__name__, str(exc), [f"{type(exc).__name__}: {exc}"])
        finally:
            batcher.close()
        content = self._reply_content(outcome, request.silent)
        if cwd is not None:
            content["context_kernel"] = {**content.get("context_kernel", {}), "cwd": cwd}
        return content

    def _send_stream(self, name: str, text: str) -> None:
        self.publish("stream", {"name": name, "text": text})

    def _reply_content(self, outcome: CellOutcome, silent: bool) -> dict[str, Any]:
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
        self.publish("error", content)
        return {"status": "error", "execution_count": self.execution_count, **content}

    def is_complete(self, code: str) -> dict[str, Any]:
        return {"status": "complete"}

    def shutdown(self, restart: bool) -> None:
        if not self._closed:
            self._closed = True
            self._shell.close()


def _discard(name: str, text: str) -> None:
    """Stream sink for silent cells."""


def main() -> None:
    launch(BashKernel)


if __name__ == "__main__":
    main()

"""A kernel's log file: its own stdout and stderr, written without secrets.

A kernel's stdout and stderr cannot be the server's (in stdio mode our stdout is the MCP wire), so
they go to `logs/kernel-<name>-<id>.log`, where doctor and a failed start read them. What lands
there is more than the kernel's own messages: ipykernel echoes every fd-level write of the code to
it (a subprocess's output, C extensions, `os.system`), so a token a command printed would be kept
on disk as it was. The kernel writes into a pipe instead; a thread reads it, redacts each complete
line (`redact_output`, line by line: a flood of output costs 35 ms per MB) and appends it to the file.

The write end stays open for the kernel's whole life (jupyter_client's restart launches the new
process with the same stdout); `close` ends the pump once the kernel is gone.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from pathlib import Path

from ..datadir import open_private, private_dir
from ..security.redact import redact_output

MAX_LINE = 64 * 1024
"""A line longer than this is redacted and written in pieces (a flood without newlines)."""
WHOLE_LIMIT = 4 * 1024
READ_SIZE = 64 * 1024


class KernelLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        private_dir(path.parent)
        self._file = os.fdopen(open_private(path, os.O_WRONLY | os.O_APPEND), "ab")  # the pump thread closes it
        self._read, self._write = os.pipe()
        self._wake_read, self._wake_write = os.pipe()
        self._closed = False
        self._thread = threading.Thread(target=self._pump, name=f"log-{path.stem}", daemon=True)
        self._thread.start()

    @property
    def fd(self) -> int:
        """What the kernel process gets as its stdout and stderr."""
        return self._write

    def close(self, timeout: float = 2.0) -> None:
        """The kernel is gone: write what it left in the pipe and stop (bounded: a process the kernel
        left behind may still hold the pipe open). Never raises."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")
        with contextlib.suppress(OSError):
            os.close(self._write)
        self._thread.join(timeout)
        if not self._thread.is_alive():  # else it may still select on them: leave them to it
            for fd in (self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _pump(self) -> None:
        pending = b""
        try:
            while True:
                ready, _, _ = select.select([self._read, self._wake_read], [], [])
                if self._read in ready:
                    chunk = os.read(self._read, READ_SIZE)
                    if not chunk:
                        break  # every writer has closed the pipe
                    pending = self._write_lines(pending + chunk)
                    continue
                pending = self._write_lines(pending + self._leftover())  # woken by close()
                break
        except OSError:
            pass  # the file or the pipe went away: nothing more can be logged
        finally:
            with contextlib.suppress(OSError):
                if pending:
                    self._append(pending)
            with contextlib.suppress(OSError):
                os.close(self._read)
            with contextlib.suppress(OSError):
                self._file.close()

    def _leftover(self) -> bytes:
        """What is still in the pipe once close() was called, without waiting for more."""
        os.set_blocking(self._read, False)
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._read, READ_SIZE):
                data += chunk
        return data

    def _write_lines(self, data: bytes) -> bytes:
        """Append the complete lines of `data` (or all of it, when one line grew too long); return the rest."""
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) >= MAX_LINE:
            cut = len(data)
        if cut:
            self._append(data[:cut])
        return data[cut:]

    def _append(self, data: bytes) -> None:
        text = redact_output(data.decode("utf-8", "replace"), whole_limit=WHOLE_LIMIT)
        self._file.write(text.encode("utf-8"))
        self._file.flush()

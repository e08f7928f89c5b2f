"""Remote kernels outlive a killed server unless someone ends them: this process is that someone.

A local kernel dies with the server (lifeline.py's parent-death signal); a kernel on a gateway is
another machine's process and would run on, paid for, after a SIGKILL of the server. So the server
starts this small process (its own session: a Ctrl-C or a kill of the server's process group does
not reach it) and tells it over a pipe which kernel ids it holds (`+id`, `-id`). When the pipe
closes — the server exited, however it exited — it DELETEs every id it still holds, then exits.

The first line is the gateway (URL, headers, timeout) as JSON, so the token never shows in `ps`.
Standard library only: it must start fast and need nothing the server's environment lacks.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from typing import IO
from urllib.parse import quote


class Reaper:
    """The server's side: starts the process on the first remote kernel, tells it ids as they come and go."""

    def __init__(self, url: str, headers: dict[str, str], timeout_s: float) -> None:
        self._config = json.dumps({"url": url, "headers": headers, "timeout": timeout_s})
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _write(self, line: str) -> None:
        with self._lock:
            if self._proc is None:
                self._proc = subprocess.Popen(  # our own module, by absolute interpreter
                    [sys.executable, "-m", "context_kernel.kernels.gateway_reaper"],
                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                self._send(self._config)
            self._send(line)

    def _send(self, line: str) -> None:
        stdin: IO[bytes] | None = self._proc.stdin if self._proc else None
        if stdin is None:
            return
        with contextlib.suppress(OSError):  # a dead reaper must not fail a kernel start
            stdin.write(line.encode() + b"\n")
            stdin.flush()

    def track(self, kernel_id: str) -> None:
        self._write(f"+{kernel_id}")

    def forget(self, kernel_id: str) -> None:
        self._write(f"-{kernel_id}")

    def close(self, timeout: float = 15.0) -> None:
        """Server exit: the pipe closes, the reaper ends what is left and exits (waited for, bounded)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)


def _delete(url: str, headers: dict[str, str], timeout: float, kernel_id: str) -> None:
    request = urllib.request.Request(f"{url}/api/kernels/{quote(kernel_id)}", method="DELETE", headers=headers)
    with contextlib.suppress(urllib.error.URLError, OSError), urllib.request.urlopen(request, timeout=timeout):
        pass


def main() -> int:
    config = json.loads(sys.stdin.readline() or "{}")
    url, headers, timeout = config.get("url", ""), config.get("headers", {}), float(config.get("timeout", 30))
    held: set[str] = set()
    for raw in sys.stdin:
        line = raw.strip()
        if line.startswith("+"):
            held.add(line[1:])
        elif line.startswith("-"):
            held.discard(line[1:])
    threads = [threading.Thread(target=_delete, args=(url, headers, timeout, kid)) for kid in held]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 5)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ck-javascript and ck-typescript kernels: one warm node process per kernel.

An ipykernel Kernel that keeps a node child running ``node_driver.js`` (next to this
file); cells run in node's global context, so variables persist. Launched as
``python -m context_kernel.kernels.own.node --language typescript -f {connection_file}``.

Why not deno/ijavascript/tslab: see bench/kernel_roundtrip_js.py. In short, we need
every byte of output before ``status: idle`` and a SIGINT that stops a cell without
losing the session; this kernel guarantees the first with an end marker written to
stdout and stderr after each cell, and the second with vm's breakOnSigint.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import ctypes
import json
import os
import secrets
import signal
import socket
import sys
import time
from collections.abc import Callable
from subprocess import DEVNULL
from typing import Any

from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel
from traitlets import Unicode
from traitlets.config import Config

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_driver.js")
FLUSH_DELAY = 0.05  # seconds output may wait to be coalesced with more
FLUSH_SIZE = 32 * 1024  # characters that force an immediate stream message
MARK_WAIT = 2.0  # seconds to wait for a cell's end markers once node has replied
INTERRUPT_GRACE = 2.0  # seconds node gets to stop a cell after SIGINT before it is killed
START_TIMEOUT = 30.0
IDLE_OUTPUT_CAP = 256 * 1024  # characters kept from output printed between cells
PR_SET_PDEATHSIG = 1
LANGUAGES = {
    "javascript": {"name": "javascript", "file_extension": ".js",
                   "mimetype": "text/javascript", "pygments_lexer": "javascript"},
    "typescript": {"name": "typescript", "file_extension": ".ts",
                   "mimetype": "text/typescript", "pygments_lexer": "typescript"},
}


def typescript_dir() -> str:
    """Where kernels/install.d/20-javascript.sh puts the npm `typescript` package."""
    return os.path.join(sys.prefix, "share", "context-kernel", "npm", "node_modules", "typescript")


def _child_setup() -> None:
    """preexec_fn: node dies with the kernel (even on SIGKILL) and starts with default SIGINT."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Output:
    """Turns node's stdout/stderr bytes into coalesced iopub stream messages.

    Between cells (timers that fire late) text is kept, up to a cap, and sent at the
    start of the next cell: a message sent then would arrive after `idle`, and the
    server would drop it.
    """

    def __init__(self, send: Callable[[str, str], None]) -> None:
        self._send = send
        self._buffers: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._size = 0
        self._dropped = 0
        self._timer: asyncio.TimerHandle | None = None
        self.live = False  # a cell is running: flush on the timer

    def add(self, name: str, text: str) -> None:
        if not text:
            return
        if not self.live and self._size >= IDLE_OUTPUT_CAP:
            self._dropped += len(text)
            return
        self._buffers[name].append(text)
        self._size += len(text)
        if not self.live:
            return
        if self._size >= FLUSH_SIZE:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_DELAY, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._dropped:
            self._buffers["stderr"].append(f"[{self._dropped} characters printed between cells dropped]\n")
            self._dropped = 0
        for name, parts in self._buffers.items():
            if parts:
                text = "".join(parts)
                parts.clear()
                self._send(name, text)
        self._size = 0


class NodeProcess:
    """One node child: its pipes, the control socket and the end-of-cell markers."""

    def __init__(self, output: _Output) -> None:
        self._output = output
        self._token = secrets.token_hex(8)
        self._mark = f"\0ck-end:{self._token}\0".encode()
        self._marks = {"stdout": 0, "stderr": 0}
        self._mark_event = asyncio.Event()
        self._cells = 0
        self._pumps: list[asyncio.Task[None]] = []
        self.proc: asyncio.subprocess.Process | None = None
        self.info: dict[str, Any] = {}

    async def start(self) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ, CK_NODE_MARK=self._token, CK_NODE_CTL_FD=str(theirs.fileno()),
                   CK_NODE_TYPESCRIPT=typescript_dir())
        try:
            self.proc = await asyncio.create_subprocess_exec(
                "node", "--enable-source-maps", DRIVER,
                stdin=DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                pass_fds=[theirs.fileno()], env=env, start_new_session=True,
                preexec_fn=_child_setup,
            )
        finally:
            theirs.close()
        self._reader, self._writer = await asyncio.open_unix_connection(sock=ours)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._pumps = [asyncio.ensure_future(self._pump("stdout", self.proc.stdout)),
                       asyncio.ensure_future(self._pump("stderr", self.proc.stderr))]
        line = await asyncio.wait_for(self._reader.readline(), START_TIMEOUT)
        if not line:
            raise RuntimeError("node exited while starting: see the kernel's stderr")
        self.info = json.loads(line)

    async def _pump(self, name: str, reader: asyncio.StreamReader) -> None:
        """Forward one pipe, counting end markers; text after a marker belongs to later."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = b""
        while chunk := await reader.read(65536):
            pending += chunk
            while (at := pending.find(self._mark)) >= 0:
                self._output.add(name, decoder.decode(pending[:at]))
                pending = pending[at + len(self._mark):]
                self._marks[name] += 1
                self._mark_event.set()
            keep = _marker_prefix_len(pending, self._mark)
            self._output.add(name, decoder.decode(pending[: len(pending) - keep]))
            pending = pending[len(pending) - keep:]
        self._output.add(name, decoder.decode(pending, final=True))
        self._marks[name] = sys.maxsize  # EOF: nothing more will come
        self._mark_event.set()

    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one cell; return node's reply once all of the cell's output has been read.

        The reply is {"status": "exited"} when node went away during the cell.
        """
        self._cells += 1
        self._writer.write(json.dumps(request).encode() + b"\n")
        await self._writer.drain()
        line = await self._reader.readline()
        if not line:
            await self._wait_marks(sys.maxsize)
            return {"status": "exited"}
        await self._wait_marks(self._cells)
        return json.loads(line)

    async def _wait_marks(self, count: int) -> None:
        deadline = time.monotonic() + MARK_WAIT
        while min(self._marks.values()) < count and (left := deadline - time.monotonic()) > 0:
            self._mark_event.clear()
            try:
                await asyncio.wait_for(self._mark_event.wait(), left)
            except asyncio.TimeoutError:
                break

    def signal(self, signum: int) -> None:
        """Send a signal to node's process group (node and anything the cell started)."""
        if self.proc is not None and self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass

    async def stop(self) -> int | None:
        """Kill node and its group; return its exit status."""
        self.signal(signal.SIGKILL)
        if self.proc is None:
            return None
        status = await asyncio.wait_for(self.proc.wait(), START_TIMEOUT)
        await asyncio.wait(self._pumps, timeout=MARK_WAIT)
        for task in self._pumps:
            task.cancel()
        self._writer.close()
        return status


def _marker_prefix_len(data: bytes, mark: bytes) -> int:
    """Length of the longest tail of data that could be the start of a marker."""
    for size in range(min(len(data), len(mark) - 1), 0, -1):
        if mark.startswith(data[-size:]):
            return size
    return 0


class NodeKernel(Kernel):
    implementation = "context_kernel.node"
    implementation_version = "0.1.0"
    language_name = Unicode("javascript", config=True, help="javascript or typescript")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.language_name not in LANGUAGES:
            raise ValueError(f"unknown language {self.language_name!r}; one of {sorted(LANGUAGES)}")
        self._output = _Output(self._send_stream)
        self._node: NodeProcess | None = None
        self._starting: asyncio.Future[NodeProcess] | None = None
        self._sigint_at: float | None = None
        # installed once: ipykernel's per-message default_int_handler would raise
        # KeyboardInterrupt inside the event loop instead of reaching node
        signal.signal(signal.SIGINT, self._on_sigint)
        atexit.register(self._kill_node)

    @property
    def language_info(self) -> dict[str, Any]:  # type: ignore[override]
        return LANGUAGES[self.language_name]

    @property
    def banner(self) -> str:  # type: ignore[override]
        return f"context-kernel {self.language_name} kernel (node; state persists between cells)"

    @property
    def kernel_info(self) -> dict[str, Any]:
        info = super().kernel_info
        info["supported_features"] = []
        return info

    def start(self) -> None:
        super().start()
        self.io_loop.add_callback(self._ensure_node)  # warm: node starts before the first cell

    def pre_handler_hook(self) -> None:
        """Keep our SIGINT handler (see __init__)."""

    def post_handler_hook(self) -> None:
        """Keep our SIGINT handler (see __init__)."""

    def _on_sigint(self, signum: int, frame: object) -> None:
        # runs between bytecodes of the main thread: only record and forward
        self._sigint_at = time.monotonic()
        if self._node is not None:
            self._node.signal(signal.SIGINT)

    async def _ensure_node(self) -> NodeProcess:
        if self._node is not None and self._node.proc and self._node.proc.returncode is None:
            return self._node
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start_node())
        try:
            return await asyncio.shield(self._starting)
        finally:
            if self._starting.done():
                self._starting = None

    async def _start_node(self) -> NodeProcess:
        node = NodeProcess(self._output)
        await node.start()
        self._node = node
        return node

    def _send_stream(self, name: str, text: str) -> None:
        self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    async def do_execute(  # type: ignore[override]
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
        self._sigint_at = None
        self._output.live = True
        self._output.flush()  # what timers printed since the last cell
        try:
            reply = await self._execute(code)
        finally:
            self._output.flush()
            self._output.live = False
        if reply.get("result") is not None and not silent:
            self.send_response(self.iopub_socket, "execute_result", {
                "execution_count": self.execution_count,
                "data": {"text/plain": reply["result"]}, "metadata": {}})
        if reply["status"] == "error":
            content = {k: reply[k] for k in ("ename", "evalue", "traceback")}
            if not silent:
                self.send_response(self.iopub_socket, "error", content)
            return {"status": "error", "execution_count": self.execution_count, **content}
        return {"status": "ok", "execution_count": self.execution_count,
                "payload": [], "user_expressions": {}}

    async def _execute(self, code: str) -> dict[str, Any]:
        try:
            node = await self._ensure_node()
        except (OSError, RuntimeError, asyncio.TimeoutError) as exc:
            return _error("KernelSetupError", f"cannot start node: {exc}")
        request = {"code": code, "language": self.language_name}
        meta = (self.get_parent().get("metadata") or {}).get("context_kernel") or {}
        if meta.get("file_path"):
            path = os.path.abspath(os.path.expanduser(str(meta["file_path"])))
            if not os.path.isfile(path) or not os.access(path, os.R_OK):
                return _error("FileNotFoundError", f"cannot read file_path {path!r}")
            request["file"] = path
        task = asyncio.ensure_future(node.run(request))
        while not (await asyncio.wait({task}, timeout=0.1))[0]:
            if self._sigint_at is not None and time.monotonic() - self._sigint_at > INTERRUPT_GRACE:
                # node's event loop is stuck (a busy loop after an await or in a timer)
                task.cancel()
                await node.stop()
                self._node = None
                return _error("KeyboardInterrupt", "interrupted; node did not stop, so it was "
                              "restarted: all variables were lost")
        reply = task.result()
        if reply["status"] == "exited":
            status = await node.stop()
            self._node = None
            if status == 0:
                self._send_stream("stderr", "[node exited; the next cell starts a fresh runtime]\n")
                return {"status": "ok"}
            return _error("ExitCode", str(status), [f"ExitCode: {status} (node exited; "
                          "the next cell starts a fresh runtime, variables were lost)"])
        return reply

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:  # type: ignore[override]
        if self._node is not None:
            await self._node.stop()
            self._node = None
        return {"status": "ok", "restart": restart}

    def _kill_node(self) -> None:
        if self._node is not None:
            self._node.signal(signal.SIGKILL)


def _error(ename: str, evalue: str, traceback: list[str] | None = None) -> dict[str, Any]:
    return {"status": "error", "ename": ename, "evalue": evalue,
            "traceback": traceback if traceback is not None else [f"{ename}: {evalue}"]}


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``--language javascript|typescript`` is ours; the rest goes to IPKernelApp."""
    args = list(sys.argv[1:] if argv is None else argv)
    language = "javascript"
    for at, arg in enumerate(args):
        if arg == "--language" and at + 1 < len(args):
            language = args[at + 1]
            del args[at : at + 2]
            break
        if arg.startswith("--language="):
            language = arg.split("=", 1)[1]
            del args[at]
            break
    config = Config()
    config.NodeKernel.language_name = language
    IPKernelApp.launch_instance(argv=args, kernel_class=NodeKernel, config=config)


if __name__ == "__main__":
    main()

"""The ck-javascript and ck-typescript kernels: one warm node process per kernel.

An ipykernel Kernel that keeps a node child running ``node_driver.js`` (next to this
file); cells run in node's global context, so variables persist. Launched as
``python -m context_kernel.kernel_processes.node --language typescript -f {connection_file}``.

Why not deno/ijavascript/tslab: see bench/kernel_roundtrip_js.py. In short, we need
every byte of output before ``status: idle`` and a SIGINT that stops a cell without
losing the session; this kernel guarantees the first with an end marker written to
stdout and stderr after each cell, and the second with vm's breakOnSigint.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import signal
import sys
import time
from typing import Any

from ipykernel.kernelbase import Kernel
from traitlets import Unicode
from traitlets.config import Config

from context_kernel.kernel_processes.iopub_flow import FlowControlledApp, StreamWindow
from context_kernel.kernel_processes.node_process import MARK_WAIT, NodeProcess, Output, killpg

INTERRUPT_GRACE = 2.0  # seconds node gets to stop a cell after SIGINT before it is killed
NOT_STOPPED = "the cell did not stop on the interrupt, so node was restarted: all variables are gone"
EXITED = "the next cell starts a fresh node: all variables are gone"
SHUTDOWN_WAIT_S = 10.0  # stopping node on its own loop from the control thread; then it is killed
LANGUAGES = {
    "javascript": {
        "name": "javascript",
        "file_extension": ".js",
        "mimetype": "text/javascript",
        "pygments_lexer": "javascript",
    },
    "typescript": {
        "name": "typescript",
        "file_extension": ".ts",
        "mimetype": "text/typescript",
        "pygments_lexer": "typescript",
    },
}


class NodeKernel(Kernel):
    implementation = "context_kernel.node"
    implementation_version = "0.1.0"
    language_name = Unicode("javascript", config=True, help="javascript or typescript")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.language_name not in LANGUAGES:
            raise ValueError(f"unknown language {self.language_name!r}; one of {sorted(LANGUAGES)}")
        self._window = StreamWindow(self.iopub_thread)
        self._output = Output(self._send_stream, self._window.room)
        self._node: NodeProcess | None = None
        self._starting: asyncio.Future[NodeProcess] | None = None
        self._sigint_at: float | None = None
        self._cell_parent: dict[str, Any] = {}
        self._silent = False  # a silent request broadcasts no output
        # installed once: ipykernel's per-message default_int_handler would raise
        # KeyboardInterrupt inside the event loop instead of reaching node
        signal.signal(signal.SIGINT, self._on_sigint)
        atexit.register(self._kill_node)

    @property
    def language_info(self) -> dict[str, Any]:  # type: ignore[override]  # per language: a property
        return LANGUAGES[self.language_name]

    @property
    def banner(self) -> str:  # type: ignore[override]  # ipykernel declares a class attribute
        return f"context-kernel {self.language_name} kernel (node; state persists between cells)"

    @property
    def kernel_info(self) -> dict[str, Any]:
        info: dict[str, Any] = super().kernel_info
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
        # one start at a time: the warm-up and the first cell may both get here
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._start_node())
        return await asyncio.shield(self._starting)

    async def _start_node(self) -> NodeProcess:
        node = NodeProcess(self._output)
        await node.start()
        self._node = node
        return node

    def _send_stream(self, name: str, text: str) -> None:
        # explicit parent: pumps and flush timers run outside the request's context,
        # where get_parent() would name an older cell (or none)
        if self._silent or self.session is None:
            return
        self.session.send(
            self.iopub_socket,
            "stream",
            {"name": name, "text": text},
            parent=self._cell_parent,
            ident=self._topic("stream"),
        )
        self._window.queued()

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
        self._sigint_at = None
        self._cell_parent = self.get_parent()
        self._silent = silent
        self._output.begin_cell()
        try:
            reply = await self._execute(code)
        finally:
            self._output.flush()
        if reply.get("result") is not None and not silent:
            self.send_response(
                self.iopub_socket,
                "execute_result",
                {
                    "execution_count": self.execution_count,
                    "data": {"text/plain": reply["result"]},
                    "metadata": {},
                },
            )
        # the server reads this to tell the agent what an interrupt or timeout cost
        report = {"context_kernel": reply["context_kernel"]} if "context_kernel" in reply else {}
        if reply["status"] == "error":
            content = {k: reply[k] for k in ("ename", "evalue", "traceback")}
            if not silent:
                self.send_response(self.iopub_socket, "error", content)
            return {"status": "error", "execution_count": self.execution_count, **content, **report}
        return {
            "status": "ok",
            "execution_count": self.execution_count,
            "payload": [],
            "user_expressions": {},
            **report,
        }

    async def _execute(self, code: str) -> dict[str, Any]:
        try:
            node = await self._ensure_node()
        except (OSError, RuntimeError, TimeoutError) as exc:
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
                return _state_lost(_error("KeyboardInterrupt", NOT_STOPPED), NOT_STOPPED)
        reply = task.result()
        if reply["status"] == "exited":
            status = await node.stop(grace=MARK_WAIT)
            self._node = None
            if status == 0:
                self._send_stream("stderr", f"[node exited (status 0); {EXITED}]\n")
                return _state_lost({"status": "ok"}, EXITED)
            error = _error("ExitCode", str(status), [f"ExitCode: {status} (node exited; {EXITED})"])
            return _state_lost(error, EXITED)
        return reply

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:
        node, self._node = self._node, None
        if node is None:
            return {"status": "ok", "restart": restart}
        loop = node.loop
        if loop is None or loop is asyncio.get_running_loop() or loop.is_closed():
            await node.stop()
        else:
            # ipykernel answers shutdown_request on the control thread's loop, but node's pipes
            # belong to the shell loop: stop it there, and kill it outright if that loop is stuck.
            stopping = asyncio.run_coroutine_threadsafe(node.stop(), loop)
            try:
                await asyncio.wait_for(asyncio.wrap_future(stopping), SHUTDOWN_WAIT_S)
            except (TimeoutError, RuntimeError):
                if node.proc is not None:
                    killpg(node.proc.pid, signal.SIGKILL)
        return {"status": "ok", "restart": restart}

    def _kill_node(self) -> None:
        if self._node is not None and self._node.proc is not None:
            killpg(self._node.proc.pid, signal.SIGKILL)


def _state_lost(reply: dict[str, Any], note: str) -> dict[str, Any]:
    """reply, marked for the server: node was replaced, so the cell's variables did not survive."""
    return {**reply, "context_kernel": {"state_lost": True, "note": note}}


def _error(ename: str, evalue: str, traceback: list[str] | None = None) -> dict[str, Any]:
    return {
        "status": "error",
        "ename": ename,
        "evalue": evalue,
        "traceback": traceback if traceback is not None else [f"{ename}: {evalue}"],
    }


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``--language javascript|typescript`` is ours; the rest goes to IPKernelApp."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--language", default="javascript", choices=sorted(LANGUAGES))
    ours, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    config = Config()
    config.NodeKernel.language_name = ours.language
    FlowControlledApp.launch_instance(argv=rest, kernel_class=NodeKernel, config=config)


if __name__ == "__main__":
    main()

"""The ck-javascript and ck-typescript kernels: one warm node process per kernel.

A `lean_kernel` kernel (no ipykernel: its threads, traitlets and Session cost a cell milliseconds
and a start ~0.3 s of imports) that keeps a node child running ``node_driver.js`` (next to
this file); cells run in node's global context, so variables persist. Launched as
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
from typing import Any, ClassVar

from context_kernel.kernel_processes.lean_kernel import LeanKernel, Request, launch
from context_kernel.kernel_processes.node_process import MARK_WAIT, NodeProcess, Output, killpg

INTERRUPT_GRACE = 2.0  # seconds node gets to stop a cell after SIGINT before it is killed
NOT_STOPPED = "the cell did not stop on the interrupt, so node was restarted: all variables are gone"
EXITED = "the next cell starts a fresh node: all variables are gone"
SHUTDOWN_WAIT_S = 10.0  # for node to be stopped on a shutdown_request; then it is killed outright
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


class NodeKernel(LeanKernel):
    """The kernel for one language (a subclass per language sets `language`)."""

    implementation = "context_kernel.node"
    implementation_version = "0.1.0"
    language: ClassVar[str] = "javascript"

    def __init__(self, connection: dict[str, Any]) -> None:
        super().__init__(connection)
        self._output = Output(self._send_stream, self._room)
        self._node: NodeProcess | None = None
        self._starting: asyncio.Future[NodeProcess] | None = None
        self._sigint_at: float | None = None
        self._wake: asyncio.Future[None] | None = None  # resolved by an interrupt of the running cell
        self._cell: Request | None = None  # the parent of stream messages; None: a silent cell's are dropped
        atexit.register(self.shutdown, False)

    async def run(self) -> None:
        # warm: node starts while the client connects, before the first cell
        self._starting = asyncio.ensure_future(self._start_node())
        self._starting.add_done_callback(_retrieve)  # a failed start is reported by the first cell
        await super().run()

    def interrupt(self) -> None:
        # SIGINT (or interrupt_request) during a cell: node's breakOnSigint or its SIGINT listener ends it
        self._sigint_at = time.monotonic()
        if self._node is not None:
            self._node.signal(signal.SIGINT)
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

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

    async def _room(self) -> None:
        """Return once iopub's backlog has room: until then node's pipes are not read (see lean_iopub)."""
        if not self.iopub.full:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not done.done():
                done.set_result(None)

        self.iopub.when_room(wake)
        await done

    def _send_stream(self, name: str, text: str) -> None:
        # explicit parent: pumps and flush timers run outside `execute`
        if self._cell is not None and not self._cell.silent:
            self.publish("stream", {"name": name, "text": text}, self._cell.message)

    # -- execution -----------------------------------------------------------------------

    async def execute(self, request: Request) -> dict[str, Any]:
        self._sigint_at = None
        self._cell = request
        self._output.begin_cell()
        try:
            reply = await self._run_cell(request)
        finally:
            self._output.flush()
        if reply.get("result") is not None and not request.silent:
            self.publish("execute_result", {
                "execution_count": self.execution_count,
                "data": {"text/plain": reply["result"]},
                "metadata": {},
            })
        # the server reads this to tell the agent what an interrupt or timeout cost
        report = {"context_kernel": reply["context_kernel"]} if "context_kernel" in reply else {}
        if reply["status"] == "error":
            content = {k: reply[k] for k in ("ename", "evalue", "traceback")}
            if not request.silent:
                self.publish("error", content)
            return {"status": "error", "execution_count": self.execution_count, **content, **report}
        return {
            "status": "ok",
            "execution_count": self.execution_count,
            "payload": [],
            "user_expressions": {},
            **report,
        }

    async def _run_cell(self, request: Request) -> dict[str, Any]:
        try:
            node = await self._ensure_node()
        except (OSError, RuntimeError, TimeoutError) as exc:
            return _error("KernelSetupError", f"cannot start node: {exc}")
        cell: dict[str, Any] = {"code": request.code, "language": self.language}
        meta = request.metadata.get("context_kernel") or {}
        file_path = meta.get("file_path") if isinstance(meta, dict) else None
        if file_path:
            path = os.path.abspath(os.path.expanduser(str(file_path)))
            if not os.path.isfile(path) or not os.access(path, os.R_OK):
                return _error("FileNotFoundError", f"cannot read file_path {path!r}")
            cell["file"] = path
        task = asyncio.ensure_future(node.run(cell))
        if not await self._finished(task):
            # node's event loop is stuck (a busy loop after an await or in a timer)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await node.stop()
            self._node = None
            return _state_lost(_error("KeyboardInterrupt", NOT_STOPPED), NOT_STOPPED)
        try:
            reply = task.result()
        except OSError:  # the control socket broke: node went away between cells
            reply = {"status": "exited"}
        if reply["status"] == "exited":
            status = await node.stop(grace=MARK_WAIT)
            self._node = None
            if status == 0:
                self._send_stream("stderr", f"[node exited (status 0); {EXITED}]\n")
                return _state_lost({"status": "ok"}, EXITED)
            error = _error("ExitCode", str(status), [f"ExitCode: {status} (node exited; {EXITED})"])
            return _state_lost(error, EXITED)
        return reply

    async def _finished(self, task: asyncio.Future[dict[str, Any]]) -> bool:
        """Wait for the cell; False if it has not ended INTERRUPT_GRACE s after the last SIGINT."""
        loop = asyncio.get_running_loop()
        try:
            while not task.done():
                left = None if self._sigint_at is None else self._sigint_at + INTERRUPT_GRACE - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._wake = loop.create_future()
                waiting: set[asyncio.Future[Any]] = {task, self._wake}
                await asyncio.wait(waiting, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._wake = None
        return True

    # -- shutdown ------------------------------------------------------------------------

    async def release(self, restart: bool) -> None:
        node, self._node = self._node, None
        if node is None:
            return
        try:
            await asyncio.wait_for(node.stop(), SHUTDOWN_WAIT_S)
        except TimeoutError:
            if node.proc is not None:
                killpg(node.proc.pid, signal.SIGKILL)

    def shutdown(self, restart: bool) -> None:
        # no loop here (at exit, or the launcher is gone): kill node's group outright
        if self._node is not None and self._node.proc is not None:
            killpg(self._node.proc.pid, signal.SIGKILL)


class JavaScriptKernel(NodeKernel):
    language = "javascript"
    language_info = LANGUAGES["javascript"]
    banner = "context-kernel javascript kernel (node; state persists between cells)"


class TypeScriptKernel(NodeKernel):
    language = "typescript"
    language_info = LANGUAGES["typescript"]
    banner = "context-kernel typescript kernel (node; state persists between cells)"


KERNELS: dict[str, type[NodeKernel]] = {"javascript": JavaScriptKernel, "typescript": TypeScriptKernel}


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a background start's exception as seen (the first cell reports it)."""
    if not future.cancelled():
        future.exception()


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
    """Entry point: ``--language javascript|typescript`` picks the kernel; ``-f`` is lean_kernel's."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--language", default="javascript", choices=sorted(KERNELS))
    ours, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    launch(KERNELS[ours.language], rest)


if __name__ == "__main__":
    main()

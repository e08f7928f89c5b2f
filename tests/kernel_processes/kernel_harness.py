"""One way to drive a real kernel in these tests: jupyter_client's AsyncKernelManager and client, as the
server drives them (kernels/backend.py).

`Kernel.start(name)` starts a kernelspec (with an optional environment and working directory) on ipc
sockets in a private short directory, its stdout and stderr in a log there; `run` sends one cell and
collects its iopub messages up to `status: idle`, then its execute_reply; `stop` asks the kernel to shut
down (it cleans up after itself), `stop_now` kills it. Every wait has a deadline: START_TIMEOUT for a start,
the kernel's `cell_timeout` for a cell, STOP_TIMEOUT for a stop.

The conftest's `start_kernel` fixture starts kernels that are stopped after the test; module-wide kernels
use `running()`.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
from jupyter_client import AsyncKernelClient, AsyncKernelManager

START_TIMEOUT = 60.0  # seconds for a kernel to answer kernel_info
CELL_TIMEOUT = 30.0  # seconds for one cell, idle and reply included (a kernel may set its own)
STOP_TIMEOUT = 30.0  # seconds for a shutdown (jupyter_client kills a kernel that does not exit in 5 s)
OUTPUTS = ("stream", "error", "execute_result")


@dataclass
class Cell:
    """What one execute_request produced: its iopub messages in order, and its reply."""

    msg_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # monotonic arrival of each message
    reply: dict[str, Any] = field(default_factory=dict)  # the execute_reply's content, once it came
    ended: float | None = None  # monotonic arrival of `status: idle`

    def of_type(self, msg_type: str) -> list[dict[str, Any]]:
        return [m["content"] for m in self.messages if m["msg_type"] == msg_type]

    @property
    def streams(self) -> list[tuple[str, str]]:
        """(name, text) of each stream message."""
        return [(c["name"], c["text"]) for c in self.of_type("stream")]

    @property
    def stream_times(self) -> list[float]:
        return [t for m, t in zip(self.messages, self.arrivals, strict=True) if m["msg_type"] == "stream"]

    def stream(self, name: str = "stdout") -> str:
        return "".join(text for stream, text in self.streams if stream == name)

    @property
    def stdout(self) -> str:
        return self.stream("stdout")

    @property
    def stderr(self) -> str:
        return self.stream("stderr")

    @property
    def errors(self) -> list[dict[str, Any]]:
        return self.of_type("error")

    @property
    def error(self) -> dict[str, Any] | None:
        """The last error message's content, if any."""
        return self.errors[-1] if self.errors else None

    def value(self) -> str:
        """The text/plain of the cell's one execute_result."""
        (result,) = self.of_type("execute_result")
        return str(result["data"]["text/plain"])


# A trigger looks at the cell so far and the message just added to it.
Trigger = Callable[[Cell, dict[str, Any]], bool]


def stdout_has(text: str) -> Trigger:
    return lambda cell, msg: text in cell.stdout


def stream_named(name: str) -> Trigger:
    return lambda cell, msg: msg["msg_type"] == "stream" and msg["content"]["name"] == name


def any_output(cell: Cell, msg: dict[str, Any]) -> bool:
    return bool(msg["msg_type"] == "stream")


def busy(cell: Cell, msg: dict[str, Any]) -> bool:
    return bool(msg["msg_type"] == "status" and msg["content"]["execution_state"] == "busy")


class Kernel:
    """A started kernel and its client; `strays` keeps output that arrived for a cell no longer read."""

    def __init__(self, name: str, km: AsyncKernelManager, kc: AsyncKernelClient, where: Path, log: IO[bytes],
                 cell_timeout: float, stop_on_error: bool) -> None:
        self.name = name
        self.km = km
        self.kc = kc
        self.where = where
        self.cell_timeout = cell_timeout
        self.stop_on_error = stop_on_error
        self.strays: list[dict[str, Any]] = []
        self._log = log

    @classmethod
    async def start(cls, name: str, *, env: dict[str, str] | None = None, cwd: Path | None = None,
                    cell_timeout: float = CELL_TIMEOUT, stop_on_error: bool = True) -> Kernel:
        """Start kernelspec `name`; `env` replaces the environment, `cwd` defaults to the private directory."""
        # Unix socket paths must stay under ~107 bytes: a short private directory, not pytest's tmp_path
        # (and not the default "kernel-ipc" prefix in the cwd, shared with every other kernel).
        where = Path(tempfile.mkdtemp(prefix="ck-test-"))
        km = AsyncKernelManager(kernel_name=name, transport="ipc", ip=str(where / "k"))
        log = (where / "kernel.log").open("wb")
        options: dict[str, Any] = {"stdout": log, "stderr": log, "cwd": str(cwd or where)}
        if env is not None:
            options["env"] = env
        try:
            await km.start_kernel(**options)
        except BaseException:
            log.close()
            shutil.rmtree(where, ignore_errors=True)
            raise
        kernel = cls(name, km, km.client(), where, log, cell_timeout, stop_on_error)
        kernel.kc.start_channels()
        try:
            with anyio.fail_after(START_TIMEOUT):
                await kernel.kc.wait_for_ready(timeout=START_TIMEOUT)
        except BaseException as exc:
            text = kernel.log_text()
            await kernel.stop_now()
            if isinstance(exc, Exception):
                raise RuntimeError(f"kernel {name} did not start: {exc!r}\nits log:\n{text}") from exc
            raise
        return kernel

    @property
    def pid(self) -> int:
        """The kernel process's pid (not its children's)."""
        return int(self.km.provisioner.pid)  # type: ignore[union-attr]

    def log_text(self) -> str:
        self._log.flush()
        return (self.where / "kernel.log").read_text(errors="replace")

    def send(self, code: str, metadata: dict[str, Any] | None = None) -> Cell:
        """Send one execute_request; the returned cell is filled by `collect`."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": self.stop_on_error}
        msg = self.kc.session.msg("execute_request", content, metadata=metadata or {})
        self.kc.shell_channel.send(msg)
        return Cell(msg["header"]["msg_id"])

    async def collect(self, cell: Cell, *, until: Trigger | None = None, interrupt_when: Trigger | None = None,
                      timeout: float | None = None) -> Cell:
        """Read this cell's iopub messages up to idle, then its reply (matched by msg_id: wait_for_ready may
        leave late kernel_info replies on the shell channel). `until`: return as soon as it holds, before
        the end. `interrupt_when`: interrupt the kernel once, on the first message for which it holds."""
        limit = self.cell_timeout if timeout is None else timeout
        try:
            with anyio.fail_after(limit):
                while cell.ended is None:
                    msg = await self.kc.get_iopub_msg()
                    if msg["parent_header"].get("msg_id") != cell.msg_id:
                        if msg["msg_type"] in OUTPUTS:
                            self.strays.append(msg)
                        continue
                    cell.messages.append(msg)
                    cell.arrivals.append(time.monotonic())
                    if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                        cell.ended = cell.arrivals[-1]
                    if interrupt_when is not None and interrupt_when(cell, msg):
                        interrupt_when = None
                        await self.km.interrupt_kernel()
                    if until is not None and until(cell, msg):
                        return cell
                while not cell.reply:
                    reply = await self.kc.get_shell_msg()
                    if reply["parent_header"].get("msg_id") == cell.msg_id:
                        cell.reply = reply["content"]
        except TimeoutError:
            raise TimeoutError(f"{self.name}: no end of the cell in {limit} s; streams so far: "
                               f"{cell.streams!r}") from None
        return cell

    async def run(self, code: str, metadata: dict[str, Any] | None = None, *,
                  interrupt_when: Trigger | None = None, timeout: float | None = None) -> Cell:
        """Execute one cell and collect all of it."""
        return await self.collect(self.send(code, metadata), interrupt_when=interrupt_when, timeout=timeout)

    async def interrupt(self) -> None:
        await self.km.interrupt_kernel()

    async def stop(self) -> None:
        """A shutdown_request, so the kernel cleans up after itself; then the private directory goes."""
        await self._shutdown(now=False)

    async def stop_now(self) -> None:
        """SIGKILL: the kernel gets no chance to clean up."""
        await self._shutdown(now=True)

    async def _shutdown(self, now: bool) -> None:
        self.kc.stop_channels()
        try:
            if self.km.has_kernel:  # (a test may have stopped it already)
                with anyio.fail_after(STOP_TIMEOUT):
                    await self.km.shutdown_kernel(now=now)
        finally:
            self._log.close()
            shutil.rmtree(self.where, ignore_errors=True)


# The conftest's `start_kernel` fixture: `await start_kernel(name, **options)`.
StartKernel = Callable[..., Awaitable[Kernel]]


@asynccontextmanager
async def running(name: str, **options: Any) -> AsyncIterator[Kernel]:
    """A kernel for the block (options as for `Kernel.start`), stopped after it."""
    kernel = await Kernel.start(name, **options)
    try:
        yield kernel
    finally:
        await kernel.stop()

"""One live Jupyter kernel: start, execute, interrupt, restart, shutdown.

Built on jupyter_client's AsyncKernelManager over the `ipc` transport (TCP makes ipykernel warn
and costs a port per channel). The pool owns instances of this class; the execution runner is
the only caller of `execute`/`next_output`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import anyio
import zmq
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager

from ..datadir import private_dir
from ..errors import KernelRestartFailed, KernelStartFailed, KernelUnavailable
from ..log_files import kernel_log
from .file_access import EXPRESSION as FILES_EXPRESSION
from .file_access import EXPRESSION_KEY as FILES_KEY
from .file_access import files_from_reply
from .file_log import FileLog
from .kernel_log import KernelLog
from .languages import language_for_kernel
from .provisioner import GuardedProvisioner
from .quirks import logs_files, setup_code, tracks_files
from .wire_channels import WireChannels

RECEIVE_QUEUE_MESSAGES = 128


# How long the silent request for an errored cell's files may take.
FILES_WAIT_S = 5.0
# How long a started kernel may take to describe its language.
LANGUAGE_INFO_WAIT_S = 5.0


class Kernel(Protocol):
    """What the pool, the runner and doctor use of a kernel, wherever it runs: JupyterKernel below (a
    child of this server) or kernels/gateway_kernel.py's GatewayKernel (on a kernel gateway)."""

    kernel_name: str
    language_name: str
    sees_server_files: bool
    language_info: dict[str, Any]
    """The kernel's kernel_info language_info ({} where unknown): written into exported notebooks."""
    """False on a gateway: ctx_execute_file sends the file's content, the kernel cannot open the path."""

    @property
    def instance_id(self) -> str: ...
    @property
    def pid(self) -> int | None: ...
    def cwd_replaced(self) -> bool: ...
    async def start(self, timeout: float) -> None: ...
    async def run_silent(self, code: str, timeout: float) -> dict[str, Any] | None: ...
    async def files_touched(self, reply_content: dict[str, Any]) -> dict[str, str]: ...
    def log_tail(self, limit: int = 2000) -> str: ...
    def execute(self, code: str, metadata: dict[str, Any] | None = None) -> str: ...
    async def next_iopub(self, timeout: float) -> dict[str, Any] | None: ...
    async def shell_reply(self, msg_id: str, timeout: float) -> dict[str, Any] | None: ...
    async def answer_input_requests(self) -> int: ...
    async def is_alive(self) -> bool: ...
    async def exit_code(self) -> int | None: ...
    async def interrupt(self) -> None: ...
    async def restart(self, timeout: float) -> None: ...
    async def drain(self) -> None: ...
    async def shutdown(self, now: bool = False) -> None: ...


class _GuardedKernelManager(AsyncKernelManager):
    """AsyncKernelManager that always launches through GuardedProvisioner."""

    async def _async_pre_start_kernel(self, **kw: Any) -> Any:
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or str(uuid.uuid4())
            self.provisioner = GuardedProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)


class JupyterKernel:
    """A kernel process plus its client. Not safe for concurrent executes: the pool serialises them."""

    def __init__(
        self,
        kernel_name: str,
        *,
        cwd: Path,
        env: dict[str, str],
        runtime_dir: Path,
        log_dir: Path,
        spec_manager: KernelSpecManager | None = None,
        prepare: Callable[[], object] | None = None,
        prune_logs: Callable[[], object] | None = None,
    ) -> None:
        """`prune_logs`: called on a worker thread once this kernel's log is made, so that the logs
        stay within the retention (log_files.py) however many kernels a server starts."""
        self.kernel_name = kernel_name
        self.instance_id = uuid.uuid4().hex[:12]
        self._cwd = cwd
        self._cwd_identity: tuple[int, int] | None = None  # (device, inode) of cwd when started
        self._env = env
        self._runtime_dir = runtime_dir
        self._log_path = kernel_log(log_dir, kernel_name, self.instance_id)
        self._prune_logs = prune_logs
        self._spec_manager = spec_manager or KernelSpecManager()
        self._km: AsyncKernelManager | None = None
        self._kc: Any = None
        self._wire: WireChannels | None = None
        self._log: KernelLog | None = None
        self.language_name: str = kernel_name
        self.sees_server_files = True
        # An ipykernel reports the files each cell opened (kernels/file_access.py).
        self.tracks_files = False
        # An R kernel logs them instead (kernels/file_log.py).
        self._file_log: FileLog | None = None
        self._setup: str | None = None
        self.language_info: dict[str, Any] = {}
        # Blocking work before the kernelspec is read (the project python's probe and kernelspec,
        # kernels/python_env.py); it raises KernelUnavailable when the kernel cannot run.
        self._prepare = prepare

    def cwd_replaced(self) -> bool:
        """Pool calls this before each lease: is the project directory not the one this kernel started in?"""
        if self._cwd_identity is None:
            return False
        try:
            now = os.stat(self._cwd)
        except OSError:
            return False  # gone for now: the cell will say what it cannot find
        return (now.st_dev, now.st_ino) != self._cwd_identity

    @property
    def pid(self) -> int | None:
        """The process the provisioner started: on Linux the kernel's supervisor (kernels/supervisor.py)."""
        prov = self._km.provisioner if self._km else None
        return getattr(prov, "pid", None)

    async def start(self, timeout: float) -> None:
        """Pool calls this on first use of a (session, kernel) pair; waits until the kernel answers."""
        if self._prepare is not None:
            await anyio.to_thread.run_sync(self._prepare)
        try:
            spec = self._spec_manager.get_kernel_spec(self.kernel_name)
        except NoSuchKernel as exc:
            lang = language_for_kernel(self.kernel_name)
            raise KernelUnavailable(
                f"no Jupyter kernel named {self.kernel_name!r} is installed",
                language=lang.name if lang else self.kernel_name,
                install=(lang.install if lang else "install the kernel, then check: context-kernel doctor"),
            ) from exc
        self.language_name = spec.language or self.kernel_name
        with contextlib.suppress(OSError):
            found = os.stat(self._cwd)
            self._cwd_identity = (found.st_dev, found.st_ino)
        private_dir(self._runtime_dir)
        private_dir(self._log_path.parent)
        # The kernel's own stdout/stderr go to a log file, redacted on the way (kernels/kernel_log.py):
        # in stdio mode our stdout is the MCP wire, and ipykernel echoes fd-level writes to its
        # inherited stdout. Opening it is well under a millisecond; the start itself takes ~1 s.
        self._log = KernelLog(self._log_path)
        if self._prune_logs is not None:
            await anyio.to_thread.run_sync(self._prune_logs)
        km = _GuardedKernelManager(
            kernel_name=self.kernel_name,
            kernel_spec_manager=self._spec_manager,
            transport="ipc",
            connection_file=str(self._runtime_dir / f"kernel-{self.instance_id}.json"),
        )
        km.ip = str(self._socket_prefix())
        km.shutdown_wait_time = 3.0
        self._km = km
        try:
            with anyio.fail_after(timeout):
                await km.start_kernel(
                    env=self._env, cwd=str(self._cwd), stdout=self._log.fd, stderr=self._log.fd, stdin=None
                )
                kc = km.client()
                # Bound what waits in our receive queue (ipykernel messages are capped at ~64 KB by
                # kernels/quirks.py): the kernel's own send queue holds the rest, so the server's memory
                # stays small during a print flood.
                kc.context.setsockopt(zmq.RCVHWM, RECEIVE_QUEUE_MESSAGES)
                kc.start_channels()
                self._kc = kc
                self._wire = WireChannels(kc)
                await kc.wait_for_ready(timeout=timeout)
                self.language_info = await self._language_info()
                files_log = self._runtime_dir / f"files-{self.instance_id}.log"
                self._setup = setup_code(list(spec.argv), spec.language or "", files_log)
                if self._setup:
                    await self.run_silent(self._setup, timeout)
                    self.tracks_files = tracks_files(list(spec.argv))
                    if logs_files(spec.language or ""):
                        self._file_log = FileLog(files_log)
        except (TimeoutError, RuntimeError, OSError) as exc:
            await self.shutdown(now=True)  # first: the log is complete once the kernel is gone
            tail = self.log_tail()
            raise KernelStartFailed(
                f"kernel {self.kernel_name!r} did not start: {exc or type(exc).__name__}"
                + (f"\nkernel log:\n{tail}" if tail else ""),
                kernel_name=self.kernel_name,
                log_tail=tail,
            ) from exc

    def _socket_prefix(self) -> Path:
        # Unix socket paths are limited to ~107 bytes; a deep CONTEXT_KERNEL_HOME would overflow.
        prefix = self._runtime_dir / f"k-{self.instance_id}"
        if len(str(prefix)) > 80:
            short = Path(tempfile.gettempdir()) / f"ck-{os.getuid()}"
            short.mkdir(mode=0o700, exist_ok=True)
            prefix = short / f"k-{self.instance_id}"
        return prefix

    async def _language_info(self) -> dict[str, Any]:
        """The kernel's own language_info (its kernel_info_reply): the export writes it whole, so JupyterLab
        opens the notebook without rewriting it (a partial one marks the notebook modified)."""
        reply = await self.shell_reply(self._kc.kernel_info(), timeout=LANGUAGE_INFO_WAIT_S)
        info = reply["content"].get("language_info") if reply else None
        return dict(info) if isinstance(info, dict) else {}

    async def run_silent(self, code: str, timeout: float,
                         user_expressions: dict[str, str] | None = None) -> dict[str, Any] | None:
        """Run setup code that the agent never sees and the record does not keep; returns the reply."""
        msg = self._kc.session.msg("execute_request", {
            "code": code, "silent": True, "store_history": False, "user_expressions": user_expressions or {},
            "allow_stdin": False, "stop_on_error": False,
        })
        self._kc.shell_channel.send(msg)
        return await self.shell_reply(str(msg["header"]["msg_id"]), timeout)

    @property
    def _channels(self) -> WireChannels:
        if self._wire is None:
            raise RuntimeError(f"kernel {self.kernel_name!r} is not started")
        return self._wire

    def log_tail(self, limit: int = 2000) -> str:
        try:
            data = self._log_path.read_bytes()[-limit:]
        except OSError:
            return ""
        return data.decode("utf-8", "replace").strip()

    def execute(self, code: str, metadata: dict[str, Any] | None = None) -> str:
        """Runner calls this to send one cell; returns the msg_id that tags its outputs."""
        content = {
            "code": code, "silent": False, "store_history": True,
            # allow_stdin: `input()` asks over the stdin channel and the runner answers an empty
            # line (without it ipykernel raises StdinNotImplementedError).
            "user_expressions": {FILES_KEY: FILES_EXPRESSION} if self.tracks_files else {},
            "allow_stdin": True, "stop_on_error": False,
        }
        return self._channels.execute(content, metadata)

    async def files_touched(self, reply_content: dict[str, Any]) -> dict[str, str]:
        """Runner calls this after a cell: {path: "r" or "w"} it opened, from its execute_reply, or (ipykernel
        evaluates no user expression after an error) from one silent request; an R kernel's from its log;
        {} for other kernels."""
        if self._file_log is not None:
            return await anyio.to_thread.run_sync(self._file_log.since_last)
        if not self.tracks_files:
            return {}
        found = files_from_reply(reply_content)
        if found is None and reply_content.get("status") != "ok":
            reply = await self.run_silent("", FILES_WAIT_S, {FILES_KEY: FILES_EXPRESSION})
            found = files_from_reply(reply["content"]) if reply else None
        return found or {}

    async def next_iopub(self, timeout: float) -> dict[str, Any] | None:
        """Runner calls this to read the next IOPub message (any parent); None after `timeout` seconds."""
        return await self._channels.next_iopub(timeout)

    async def shell_reply(self, msg_id: str, timeout: float) -> dict[str, Any] | None:
        """Runner calls this after `idle` to read the execute_reply of `msg_id` (status, counts)."""
        with anyio.move_on_after(timeout):
            while True:
                msg = await self._channels.next_shell(timeout)
                if msg is None:
                    return None
                if msg.get("parent_header", {}).get("msg_id") == msg_id:
                    return msg
        return None

    async def answer_input_requests(self) -> int:
        """Runner calls this while a cell is silent: code waiting for stdin gets an empty line.

        Cells are sent with allow_stdin=True (ipykernel asks only then; IRkernel asks anyway), so
        `input()`, `readline()` and `read` get an empty line instead of blocking until the timeout.
        """
        answered = 0
        channel = self._kc.stdin_channel
        while await channel.msg_ready():
            msg = await channel.get_msg(timeout=0)
            if msg["header"]["msg_type"] == "input_request":
                self._kc.input("")
                answered += 1
        return answered

    async def is_alive(self) -> bool:
        return bool(self._km is not None and await self._km.is_alive())

    async def exit_code(self) -> int | None:
        prov = self._km.provisioner if self._km else None
        return await prov.poll() if prov is not None else None

    async def interrupt(self) -> None:
        """Runner calls this on timeout or output cap: SIGINT (or the kernel's interrupt message)."""
        if self._km is not None:
            await self._km.interrupt_kernel()

    async def restart(self, timeout: float) -> None:
        """Runner calls this when an interrupt did not bring the kernel back: state is lost."""
        assert self._km is not None
        try:
            with anyio.fail_after(timeout):
                await self._km.restart_kernel(now=True)
                await self._kc.wait_for_ready(timeout=timeout)
            await self.drain()
            if self._setup:  # a new process: without its setup, output could lag and files go unrecorded
                await self.run_silent(self._setup, timeout)
        except (TimeoutError, RuntimeError, OSError) as exc:
            raise KernelRestartFailed(
                f"kernel {self.kernel_name!r} could not be restarted after an interrupt: {exc or type(exc).__name__}",
                kernel_name=self.kernel_name,
            ) from exc

    async def drain(self) -> None:
        """Drop queued messages left by an interrupted or restarted cell."""
        for channel in (self._kc.iopub_channel, self._kc.shell_channel):
            while await channel.msg_ready():
                await channel.get_msg(timeout=0)

    async def shutdown(self, now: bool = False) -> None:
        """Pool calls this on cull, discard and server exit. Never raises."""
        if self._kc is not None:
            with contextlib.suppress(Exception):  # shutdown must always finish
                self._kc.stop_channels()
            self._kc = self._wire = None
        # Taken, not read: a second shutdown at the same time (a background cell's end while the server exits)
        # finds none, instead of a manager the first one clears under it.
        km, self._km = self._km, None
        if km is not None:
            try:
                with anyio.fail_after(10):
                    await km.shutdown_kernel(now=now)
            except Exception:  # noqa: BLE001 - a kernel that will not shut down is killed instead
                provisioner = km.provisioner
                with contextlib.suppress(Exception):
                    if provisioner is not None:
                        await provisioner.kill()
        if self._log is not None:
            await anyio.to_thread.run_sync(self._log.close)
            self._log = None
        if self._file_log is not None:
            with contextlib.suppress(OSError):
                self._file_log.path.unlink()
        for leftover in self._socket_prefix().parent.glob(f"k-{self.instance_id}*"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)

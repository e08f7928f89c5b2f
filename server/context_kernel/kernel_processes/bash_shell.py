"""The one persistent bash behind the ck-bash kernel, and how a cell runs in it.

Bash runs interactive (``-i``) but fed from a pipe: only an interactive bash answers SIGINT
by abandoning the whole command line and going back to reading input, which is what stops
a cell promptly while keeping the shell (cwd, variables, functions, aliases) alive. Each
cell arrives as one command line that writes the code to a file and sources it at top level
(so ``declare``, heredocs and syntax errors stay inside the cell), with stdin from /dev/null
and stdout/stderr redirected to two FIFOs the kernel reads. The end of a cell is reported
on a third FIFO that cell output never reaches, so no output can be mistaken for it.
Redirections are reopened for every cell, so a cell that closes or redirects its fds cannot
break the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from context_kernel.kernels.file_content import shell_preamble
from context_kernel.lifeline import cell_child_setup, descendants

INTERRUPT_GRACE = 0.5  # s after SIGINT before every process of the cell gets SIGINT itself
INTERRUPT_KILL = 2.0  # s after SIGINT before the shell is killed and replaced
READ_SIZE = 65536
FIRST_READ = 0.002  # s into a cell before its output is read as it comes
EMBED_LIMIT = 16384  # characters of cell code sent inline to bash rather than by file
_DIR_PREFIX = "ck-bash-"
# Around what background jobs printed since the last cell, which comes with the next one.
BETWEEN_CELLS = "[ck-bash] printed by background jobs between cells:\n"
BETWEEN_CELLS_END = "[ck-bash] end of the background output; this cell's output follows\n"

OutputSink = Callable[[str, bytes], None]  # (stream name, raw bytes)


class OutputGate(Protocol):
    """Says when the output sink is full: the cell's pipes are then not read, so its writes wait."""

    @property
    def full(self) -> bool: ...

    def when_room(self, callback: Callable[[], None]) -> None: ...


_ESCAPES = {i: f"\\x{i:02x}" for i in range(32)} | {
    ord("\\"): "\\\\",
    ord("'"): "\\'",
    ord("\n"): "\\n",
    127: "\\x7f",
    0: "",
}


def _ansi_c(text: str) -> str:
    """text as the inside of a bash $'...' word (NUL bytes, which bash cannot hold, dropped)."""
    return text.translate(_ESCAPES)


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _remove_stale_dirs() -> None:
    """Remove scratch dirs of ck-bash kernels that died without shutting down."""
    for path in glob.glob(os.path.join(tempfile.gettempdir(), _DIR_PREFIX + "*-*")):
        pid = os.path.basename(path)[len(_DIR_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(path, ignore_errors=True)


@dataclass
class CellOutcome:
    status: int  # exit status of the cell's last command (128+n when killed by signal n)
    interrupted: bool = False
    restarted: str = ""  # why the shell was replaced during this cell; "" if it was not


class BashShell:
    """One bash process and the FIFOs it talks through; replaced when it dies."""

    def __init__(self, bash: str | None = None) -> None:
        self._bash = bash or shutil.which("bash") or "/bin/bash"
        _remove_stale_dirs()
        self._dir = tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-")
        names = ("out", "err", "status", "cell", "state", "version")
        paths = {n: os.path.join(self._dir, n) for n in names}
        self._fds: dict[str, int] = {}
        for name in ("out", "err", "status"):
            os.mkfifo(paths[name], 0o600)
            # O_RDWR: the kernel is a writer too, so the FIFO never reports EOF between cells
            self._fds[name] = os.open(paths[name], os.O_RDWR | os.O_NONBLOCK)
        self._cell_path, self._state_path = paths["cell"], paths["state"]
        self._version_path = paths["version"]
        self._cell_prefix = f"{self._cell_path}: ".encode()  # bash's errors name the file
        q = {n: shlex.quote(p) for n, p in paths.items()}
        self._q_cell, self._q_status = q["cell"], q["status"]
        self._redirects = f"</dev/null >{q['out']} 2>{q['err']}"
        # cwd and exported variables, rewritten after each cell and when bash exits, so a
        # replacement shell can start where the old one stopped (the file is sourced before
        # any user alias exists, so a plain `builtin cd` in it is safe)
        self._snapshot = (
            "{ \\builtin export -p; \\builtin printf 'builtin cd -- %q\\n' \"$PWD\"; }"
            f" >|{q['state']} 2>/dev/null"
        )
        self._token = os.urandom(6).hex()
        self._seq = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._pidfd = -1
        self._done: asyncio.Future[CellOutcome] | None = None
        self._tag = b""
        self._status_buf = b""
        self._interrupted = False
        self._kill_reason = ""
        self._kill_cwd: str | None = None

    @property
    def version(self) -> str:
        """bash's version, once the first shell has written it ("" before)."""
        try:
            with open(self._version_path, encoding="utf-8") as f:
                return f.read().partition("(")[0]
        except OSError:
            return ""

    # -- process lifecycle -------------------------------------------------------------

    def start(self, restore: bool = False) -> None:
        """Spawn bash; with restore, resume the cwd and exported variables of the last one."""
        restore = restore and os.path.exists(self._state_path)
        self._proc = subprocess.Popen(
            [self._bash, "--noprofile", "--norc", "--noediting", "-i"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,  # top-level noise only: prompts, job notices
            stderr=subprocess.DEVNULL,
            env={} if restore else None,  # the snapshot brings the exported variables back
            preexec_fn=cell_child_setup,
        )
        try:
            self._pidfd = os.pidfd_open(self._proc.pid)
        except (AttributeError, OSError):
            self._pidfd = -1  # no pidfd: death is noticed by polling (see run)
        init = [
            "PS1= PS2= PS3= PROMPT_COMMAND=; \\builtin unset MAILCHECK HISTFILE",
            "\\builtin set +o history +H +m",
            f'\\builtin printf %s "$BASH_VERSION" >|{shlex.quote(self._version_path)}',
            f"\\builtin trap {shlex.quote(self._snapshot)} EXIT",
        ]
        if restore:
            init.append(f"\\builtin . {shlex.quote(self._state_path)} 2>/dev/null")
            if self._kill_cwd:
                init.append(f"\\builtin cd -- {shlex.quote(self._kill_cwd)} 2>/dev/null")
        self._kill_cwd = None
        self._send("\n".join(init) + "\n")

    def _send(self, line: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        with contextlib.suppress(OSError):  # bash is gone: its pidfd (or the poll) says so
            os.write(self._proc.stdin.fileno(), line.encode())

    def _reap(self) -> int:
        """Wait for the dead bash, release its handles, return its Popen returncode."""
        assert self._proc is not None
        code = self._proc.wait()
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1
        return code

    def close(self) -> None:
        """Kill bash and everything it started; remove the FIFOs. Called at kernel shutdown."""
        if self._proc is not None and self._proc.poll() is None:
            _signal_all([self._proc.pid, *descendants(self._proc.pid)], signal.SIGKILL)
        if self._proc is not None:
            self._reap()
            self._proc = None
        for fd in self._fds.values():
            os.close(fd)
        self._fds = {}
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- running a cell ----------------------------------------------------------------

    @property
    def cwd(self) -> str | None:
        """The shell's working directory now (from /proc), or None when there is no shell or no /proc."""
        try:
            return os.readlink(f"/proc/{self._proc.pid}/cwd") if self._proc is not None else None
        except OSError:
            return None

    async def run(
        self,
        code: str,
        on_output: OutputSink,
        file_path: str | None = None,
        gate: OutputGate | None = None,
    ) -> CellOutcome:
        """Run one cell to its end, feeding raw output to on_output as it arrives (while gate has room)."""
        assert self._proc is not None
        loop = asyncio.get_running_loop()
        if self._proc.poll() is not None:  # died between cells, e.g. a background `kill $$`
            self._reap()
            self.start(restore=True)
            on_output("stderr", b"[ck-bash] the shell had exited; a new one was started\n")
        self._forward_between_cells(on_output)
        self._seq += 1
        self._tag = f"{self._token}:{self._seq}".encode()
        self._interrupted = False
        self._kill_reason = ""
        preamble = shell_preamble(file_path, in_kernel=True) if file_path else ""
        if len(code) <= EMBED_LIMIT:  # bash writes the file: one write to its stdin in all
            load = f"\\builtin printf %s $'{_ansi_c(code)}' >|{self._q_cell}; "
        else:  # bash parses a long $'...' word slowly (~0.3 s per MB)
            with open(self._cell_path, "w", encoding="utf-8", errors="replace") as f:
                f.write(code)
            load = ""
        done: asyncio.Future[CellOutcome] = loop.create_future()
        self._done = done
        self._send(
            # `set -e` and `set -x` last for the cell that sets them: errexit is reset inside
            # the group, as the whole group failing under it would exit the shell, and xtrace
            # would trace this wrapper (the reset itself is traced to /dev/null). The snapshot
            # comes after the status line, out of the cell's round trip.
            f"{load}__ck_s=1; {{ {preamble}\\. {self._q_cell}; "
            f"{{ __ck_s=$?; \\builtin set +ex; }} 2>/dev/null; }} {self._redirects}; "
            # a cell that closed the fd bash saved its stdin in leaves it reading /dev/null:
            # it would exit at the next read and lose the next cell; exit now, blamed on this one
            f'[[ -p /dev/fd/0 ]] || \\builtin exit "$__ck_s"; '
            f"\\builtin printf '%s %s\\n' {self._tag.decode()} \"$__ck_s\" >{self._q_status}; "
            f"{self._snapshot}\n"
        )
        status_fd = self._fds["status"]
        loop.add_reader(status_fd, self._read_status)
        poller = None
        if self._pidfd >= 0:
            loop.add_reader(self._pidfd, self._on_exit, on_output)
        else:
            poller = loop.call_later(0.1, self._poll_exit, on_output)
        # output is read from FIRST_READ on, or when the cell ends: a quick cell then costs
        # one wakeup, and coalescing delays output by a few ms anyway
        readers = {self._fds["out"]: "stdout", self._fds["err"]: "stderr"}

        def read(fd: int, name: str) -> None:
            if self._pump(fd, name, on_output, gate=gate) or gate is None:
                return

            def resume() -> None:
                if not done.done():
                    loop.add_reader(fd, read, fd, name)

            loop.remove_reader(fd)  # the sink is full: the cell's writes wait until it has room
            gate.when_room(resume)

        def start_reading() -> None:
            for fd, name in readers.items():
                loop.add_reader(fd, read, fd, name)

        reading = loop.call_later(FIRST_READ, start_reading)
        try:
            return await done
        finally:
            reading.cancel()
            for fd in (*readers, status_fd):
                loop.remove_reader(fd)
            if self._pidfd >= 0:
                loop.remove_reader(self._pidfd)
            if poller is not None:
                poller.cancel()
            for fd, name in readers.items():
                self._pump(fd, name, on_output)  # whatever the cell wrote before it ended
            self._done = None

    def _forward_between_cells(self, on_output: OutputSink) -> None:
        """What background jobs printed since the last cell: marked, so it is not taken for this cell's."""
        held: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        self._pump(self._fds["out"], "stdout", lambda name, data: held[name].append(data))
        self._pump(self._fds["err"], "stderr", lambda name, data: held[name].append(data))
        for name, parts in held.items():
            if parts:
                text = b"".join(parts)
                end = b"" if text.endswith(b"\n") else b"\n"
                on_output(name, BETWEEN_CELLS.encode() + text + end + BETWEEN_CELLS_END.encode())

    def _pump(
        self, fd: int, name: str, on_output: OutputSink, limit: int = 1 << 20,
        gate: OutputGate | None = None,
    ) -> bool:
        """Read what is there (bounded, so a background writer cannot hold the loop).

        False when it stopped because the gate is full.
        """
        total = 0
        while total < limit:
            if gate is not None and gate.full:
                return False
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                return True
            if not data:
                return True
            total += len(data)
            if self._cell_prefix in data:  # "bash: /tmp/ck-bash-1-x/cell: line 2: ..."
                data = data.replace(self._cell_prefix, b"")
            on_output(name, data)
        return True

    def _read_status(self) -> None:
        try:
            self._status_buf += os.read(self._fds["status"], READ_SIZE)
        except BlockingIOError:
            return
        *lines, self._status_buf = self._status_buf.split(b"\n")
        for line in lines:  # stale lines of earlier cells (a late interrupt) are skipped
            tag, _, code = line.partition(b" ")
            if tag == self._tag and self._done is not None and not self._done.done():
                status = int(code) if code.strip().isdigit() else 1
                self._done.set_result(CellOutcome(status, interrupted=self._interrupted))

    def _poll_exit(self, on_output: OutputSink) -> None:
        loop = asyncio.get_running_loop()
        if self._proc is not None and self._proc.poll() is not None:
            self._on_exit(on_output)
        elif self._done is not None and not self._done.done():
            loop.call_later(0.1, self._poll_exit, on_output)

    def _on_exit(self, on_output: OutputSink) -> None:
        """bash died during a cell (exit, set -e, a signal, or we killed it): replace it."""
        loop = asyncio.get_running_loop()
        if self._pidfd >= 0:
            loop.remove_reader(self._pidfd)
        code = self._reap()
        self._read_status()  # it may have finished the cell just before dying
        if self._done is None or self._done.done():
            with contextlib.suppress(OSError):  # else the next run tries again
                self.start(restore=True)
            return
        if self._kill_reason:
            why = self._kill_reason
        elif code < 0:
            why = f"the shell was killed by {signal.Signals(-code).name}"
        else:
            why = f"the shell exited with status {code}"
        status = 128 - code if code < 0 else code
        try:
            self.start(restore=True)
        except OSError as exc:  # the next run tries again
            why += f"; starting a new shell failed: {exc}"
        self._done.set_result(CellOutcome(status, self._interrupted, why))

    # -- interrupting ------------------------------------------------------------------

    def interrupt(self) -> bool:
        """Stop the running cell (the kernel got SIGINT). False if no cell is running.

        jupyter_client signals the kernel's whole process group, bash and the cell's
        commands included, so usually bash has already abandoned the cell; the status line
        sent here is what it then reads next. Processes that escaped the group, or ignore
        SIGINT, get escalation: SIGINT to each, then the shell is killed and replaced.
        """
        if self._done is None or self._done.done():
            return False
        self._interrupted = True
        tag = self._tag.decode()
        # set +ex: the abandoned command line did not get to reset the options either
        self._send(f"\\builtin set +ex; \\builtin printf '%s 130\\n' {tag} >{self._q_status}\n")
        loop = asyncio.get_running_loop()
        loop.call_later(INTERRUPT_GRACE, self._escalate, self._tag, False)
        loop.call_later(INTERRUPT_KILL, self._escalate, self._tag, True)
        return True

    def _escalate(self, tag: bytes, kill: bool) -> None:
        if tag != self._tag or self._done is None or self._done.done() or self._proc is None:
            return
        pid = self._proc.pid
        if not kill:
            _signal_all([pid, *descendants(pid)], signal.SIGINT)
            return
        try:
            self._kill_cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            self._kill_cwd = None
        self._kill_reason = "the cell did not stop on the interrupt, so the shell was killed"
        _signal_all([pid, *descendants(pid)], signal.SIGKILL)  # _on_exit restarts it

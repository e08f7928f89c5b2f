"""A local provisioner whose kernels, and everything they start, cannot outlive the kernel or the server.

Orphaned processes pinning a CPU are the reference system's most reported bug. jupyter_client's
LocalProvisioner starts each kernel in its own session and kills its process group; a process a
cell starts with `setsid`, a double fork or `nohup` escapes that. On Linux we start the kernel under
a supervisor (kernels/supervisor.py: a child subreaper, with a cgroup of the kernel's own where the
machine allows) that ends the kernel's whole tree when the kernel exits, when we kill it, and when
the server dies (PR_SET_PDEATHSIG), however the server dies. The provisioner's process is the
supervisor: its exit status is the kernel's, and the interrupts jupyter_client sends it are
forwarded to the kernel's process group, so poll, interrupt and exit codes are unchanged; killing
it means asking it to end the tree. Elsewhere the kernel is started directly and killing it kills
its process group.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import uuid
from typing import Any

from jupyter_client.provisioning.local_provisioner import LocalProvisioner

from ..lifeline import descendants, die_with_parent
from . import supervisor

SUPERVISED = sys.platform.startswith("linux")


class GuardedProvisioner(LocalProvisioner):
    """LocalProvisioner that starts the kernel under a supervisor and ends the kernel's whole tree."""

    cgroup: str | None = None  # the kernel's cgroup directory, if the supervisor could make one

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        if SUPERVISED:
            self.cgroup = supervisor.new_cgroup_path(uuid.uuid4().hex[:12])
            cmd = supervisor.command(cmd, self.cgroup)
        # The supervisor is told of our death by SIGTERM (it then ends the tree); a kernel without
        # one simply dies.
        kwargs.setdefault("preexec_fn", functools.partial(
            die_with_parent, signal.SIGTERM if SUPERVISED else signal.SIGKILL, os.getpid()))
        return await super().launch_kernel(cmd, **kwargs)

    async def send_signal(self, signum: int) -> None:
        if SUPERVISED and signum == signal.SIGKILL:  # a SIGKILLed supervisor could end nothing
            await self.kill()
        else:
            await super().send_signal(signum)

    async def kill(self, restart: bool = False) -> None:
        """Ask the supervisor to end the tree (it SIGKILLs everything, then exits as the killed kernel
        would); jupyter_client then waits for it to exit, and `cleanup` forces what did not."""
        if not SUPERVISED:
            self._kill_group()
            await super().kill(restart=restart)
        elif self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        self._force_end()
        await super().cleanup(restart=restart)

    def _force_end(self) -> None:
        """What is left after the kernel ended: without a supervisor, what the kernel left in its process
        group; with one, a supervisor that did not exit when asked (its cgroup, its descendants and
        itself are killed), and the cgroup of one that was killed (by a cell, say) before it could."""
        if not SUPERVISED:
            self._kill_group()
            return
        process = self.process
        if process is not None and process.poll() is None:
            if self.cgroup:
                supervisor.kill_cgroup(self.cgroup)
            for pid in descendants(process.pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            self._kill_group()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1.0)  # SIGKILLed: a moment
        if self.cgroup:
            supervisor.end_cgroup(self.cgroup, timeout=1.0)  # a supervisor that ended removed it already

    def _kill_group(self) -> None:
        pgid = getattr(self, "pgid", None)
        if pgid and pgid != os.getpgid(0):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)

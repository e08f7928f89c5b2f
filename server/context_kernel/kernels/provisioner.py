"""A local provisioner whose kernels cannot outlive the server.

Orphaned processes pinning a CPU are the reference system's most reported bug. jupyter_client's
LocalProvisioner starts each kernel in its own session; we add two guarantees:
- the kernel gets SIGKILL when the server dies, however it dies (Linux PR_SET_PDEATHSIG);
- killing a kernel kills its whole process group, so its children go too.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Any

from jupyter_client.provisioning.local_provisioner import LocalProvisioner

from ..lifeline import die_with_parent


class GuardedProvisioner(LocalProvisioner):
    """LocalProvisioner plus parent-death signal and process-group kill."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        kwargs.setdefault("preexec_fn", die_with_parent)
        return await super().launch_kernel(cmd, **kwargs)

    async def kill(self, restart: bool = False) -> None:
        self._kill_group()
        await super().kill(restart=restart)

    async def cleanup(self, restart: bool = False) -> None:
        # After a clean shutdown request the kernel may have left children behind.
        self._kill_group()
        await super().cleanup(restart=restart)

    def _kill_group(self) -> None:
        pgid = getattr(self, "pgid", None)
        if pgid and pgid != os.getpgid(0):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)

"""The data dir's log files, and how long they stay: the records' retention, applied to `logs/`.

`logs/` holds one file per kernel started (`kernel-<name>-<instance>.log`: the kernel's own stdout
and stderr, which a failed start quotes) and the hooks' one-line reports (`hooks.log`, moved to
`hooks.log.1` at 1 MB). The server itself logs to stderr, which its client keeps.

The rule is the records' (store/retention.py): a log last written longer ago than the retention's
days goes, as the records of sessions idle that long do, and of the kernel logs only the newest
`max_kernel_logs` stay. It is applied by the retention pass (at start, then daily) and each time a
kernel starts, since that is when a log is added: a server that starts kernels all day long keeps no
more kernel logs than the cap allows.
"""

from __future__ import annotations

import time
from pathlib import Path

KERNEL_LOG_GLOB = "kernel-*.log"
DAY_S = 86_400.0


def kernel_log(log_dir: Path, kernel_name: str, instance_id: str) -> Path:
    """Where a kernel's stdout and stderr go."""
    return log_dir / f"kernel-{kernel_name}-{instance_id}.log"


def prune_logs(log_dir: Path, days: float, max_kernel_logs: int, now: float | None = None) -> int:
    """Delete the logs last written more than `days` ago (0: none) and the kernel logs beyond the newest
    `max_kernel_logs` (0: no cap); returns how many were deleted. Blocking: run it off the event loop."""
    now = time.time() if now is None else now
    found = []
    try:
        entries = list(log_dir.iterdir())
    except OSError:
        return 0  # no logs yet
    for path in entries:
        try:
            if path.is_file():
                found.append((path.stat().st_mtime, path))
        except OSError:
            continue  # gone meanwhile (another server's pass)
    kernel_rank = 0
    removed = 0
    for mtime, path in sorted(found, reverse=True):  # newest first
        too_old = days > 0 and mtime < now - days * DAY_S
        too_many = False
        if path.match(KERNEL_LOG_GLOB):
            too_many = max_kernel_logs > 0 and kernel_rank >= max_kernel_logs
            kernel_rank += 1
        if too_old or too_many:
            try:
                path.unlink()
                removed += 1
            except OSError:
                continue  # gone already (another server pruned it) or not ours to delete
    return removed

"""The prewarmed kernels in ctx_doctor: how many wait, how long, and their memory (read from /proc)."""

from __future__ import annotations

from ..lifeline import descendants
from .checks import Check


def prewarmed_check(spares: list[tuple[str, int | None, float]]) -> Check:
    """ctx_doctor's line for the kernels started ahead of the first call that no session took yet."""
    if not spares:
        return Check("OK", "prewarmed kernels", "none idle (every one started ahead was taken by a call, or none was)")
    parts = []
    for name, pid, idle_s in spares:
        rss = 0
        for proc in [pid, *descendants(pid)] if pid is not None else []:
            try:
                with open(f"/proc/{proc}/status", encoding="ascii", errors="replace") as f:
                    rss += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
            except OSError:
                continue  # gone meanwhile
        parts.append(f"{name} (idle {idle_s:.0f} s, {rss / 1024:.0f} MB RSS)")
    return Check("OK", "prewarmed kernels", f"{len(spares)} idle, waiting for a session's first call: "
                 + ", ".join(parts))


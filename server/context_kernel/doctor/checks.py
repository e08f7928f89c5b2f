"""What doctor's checks are made of: a check line, the line of code each language is tested with, and how
kernels are made for it (doctor/__init__.py for local kernels, doctor/gateway.py for a gateway's)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..kernels.backend import Kernel

# Kernel checks run a few at a time: twelve kernels starting at once on a 2-core machine time out.
KERNEL_CHECK_CONCURRENCY = 3



@dataclass
class Check:
    level: Literal["OK", "WARN", "FAIL"]
    subject: str
    detail: str

    def line(self) -> str:
        return f"[{self.level}] {self.subject}: {self.detail}"


async def run_hello(kernel: Kernel, start_timeout_s: float, code: str) -> tuple[str | None, float]:
    """Start `kernel`, run `code` (which prints `ok`) and shut it down: (None, seconds) when it printed
    ok, else (what it printed or raised instead, seconds). A kernel that cannot start raises
    ContextKernelError."""
    from ..execution.runner import run_quietly

    began = time.monotonic()
    try:
        await kernel.start(start_timeout_s)
        collector, outcome = await run_quietly(kernel, code, time.monotonic() + 60)
        out = collector.stdout.render().strip()
        if outcome is not None and out == "ok":
            return None, time.monotonic() - began
        detail = out or collector.stderr_text.strip() or (collector.error or {}).get("evalue", "no output")
        return str(detail), time.monotonic() - began
    finally:
        await kernel.shutdown(now=True)

"""`context-kernel replay --gateway-url`: run an exported notebook's cells on a kernel gateway.

nbclient drives a local kernel manager; on a gateway the same kernel client the server uses
(kernels/gateway_kernel.py) runs each cell through the server's own runner, and the comparison
is replay.py's. The kernel is ended afterwards, whatever happens.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import anyio

from ..execution.collector import OutputCollector
from ..execution.runner import CellRun
from ..kernels.gateway_client import Gateway
from ..kernels.gateway_kernel import GatewayKernel
from ..settings import GatewaySettings
from .replay import _NOT_RUN, ReplayReport, _compare, _meta, is_setup, not_replayed, session_cells

START_TIMEOUT_S = 120.0
RESTART_TIMEOUT_S = 60.0
# Replay compares whole outputs: no budget trims them (the cap still bounds a runaway cell).
NO_BUDGET = 1 << 30
CAP = 256 * 1024 * 1024


def on_gateway(config: GatewaySettings) -> Callable[[Any, int], ReplayReport]:
    """What replay.replay runs each notebook with, for `replay --gateway-url`."""

    def run_one(nb: Any, timeout_s: int) -> ReplayReport:
        return anyio.run(_replay, nb, timeout_s, config)

    return run_one


async def _replay(nb: Any, timeout_s: int, config: GatewaySettings) -> ReplayReport:
    recorded = copy.deepcopy(nb)
    report = ReplayReport()
    timed_out: set[int] = set()
    limits: dict[int, float] = {}
    started: set[int] = set()
    gateway = Gateway(config)
    kernel = GatewayKernel(nb.metadata.kernelspec.name, gateway)
    try:
        await kernel.start(START_TIMEOUT_S)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or _meta(cell).get("status") in _NOT_RUN or is_setup(cell):
                continue
            limit = limits[index] = _limit(cell, timeout_s)
            started.add(index)
            outputs: list[dict[str, Any]] = []

            async def keep(_first: int, batch: list[dict[str, Any]], into: list[dict[str, Any]] = outputs) -> None:
                into.extend(batch)

            run = CellRun(kernel, OutputCollector(NO_BUDGET, CAP), keep)
            run.send(cell.source)
            if not await run.wait(time.monotonic() + limit):
                timed_out.add(index)
                await run.stop_after_timeout(RESTART_TIMEOUT_S)
            cell.outputs = outputs
            if run.died:
                report.stopped = f"the kernel died running cell {index + 1}"
                break
    finally:
        await kernel.shutdown(now=True)
        await gateway.aclose()
    for i, number, old, new in session_cells(recorded.cells, nb.cells):
        new.setdefault("outputs", [])
        report.cells.append(not_replayed(number, old) if report.stopped and i not in started else
                            _compare(number, old, new, timed_out=i in timed_out,
                                     limit=limits.get(i, _limit(old, timeout_s))))
    return report


def _limit(cell: Any, timeout_s: int) -> float:
    """A cell that timed out in the session runs under its own limit again (as replay.py's `limit`)."""
    meta = _meta(cell)
    if meta.get("status") == "timeout" and meta.get("timeout_ms"):
        return float(meta["timeout_ms"]) / 1000
    return float(timeout_s)

"""Kernels through a Jupyter Enterprise Gateway against local kernels, in the same run.

Starts a real Enterprise Gateway on 127.0.0.1 (tests/gateway_harness.py: `.venv-gateway`, made by
`make setup`) offering the same python3 kernelspec the local kernels use, then measures:

- cold start: kernel start → answered kernel_info and ran its setup cell; local JupyterKernel
  (kernels/backend.py) and GatewayKernel (kernels/gateway_kernel.py) alternated, start by start
- warm round trip: `print(1)` sent → its `idle`, on a started kernel of each kind, alternated
- starts per second through the gateway: N kernels started at once (one Gateway client, as the server)
- the server side's memory with 20 remote kernels: this process's RSS before and after starting
  them (the kernels themselves are the gateway's processes, on this machine only because it is a bench)

Run (repo root): python bench/gateway.py [--starts 5] [--calls 200] [--parallel 10] [--held 20]
Nothing is asserted: it prints medians and gateway/local ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "server")]
TIMEOUT = 60.0


async def round_trip(kernel: Any) -> float:
    t0 = time.perf_counter()
    msg_id = kernel.execute("print(1)")
    while True:
        msg = await kernel.next_iopub(TIMEOUT)
        if msg is None:
            raise RuntimeError(f"no idle within {TIMEOUT} s")
        if (msg["parent_header"].get("msg_id") == msg_id and msg["header"]["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"):
            break
    elapsed = time.perf_counter() - t0
    await kernel.shell_reply(msg_id, TIMEOUT)  # as the runner does, outside the timing
    return elapsed


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def bench(url: str, header: tuple[str, str], starts: int, calls: int, parallel: int, held: int,
                root: Path) -> None:
    from context_kernel.kernels.backend import JupyterKernel
    from context_kernel.kernels.gateway_client import Gateway
    from context_kernel.kernels.gateway_kernel import GatewayKernel
    from context_kernel.settings import GatewaySettings

    gateway = Gateway(GatewaySettings(url=url, auth_header=header))

    def local() -> Any:
        return JupyterKernel("python3", cwd=root, env=dict(os.environ), runtime_dir=root / "run", log_dir=root / "logs")

    def remote() -> Any:
        return GatewayKernel("python3", gateway)

    times: dict[str, list[float]] = {k: [] for k in ("local start", "gateway start", "local warm", "gateway warm")}
    for i in range(starts):
        for label, make in (("local", local), ("gateway", remote)):
            kernel = make()
            t0 = time.perf_counter()
            await kernel.start(TIMEOUT)
            times[f"{label} start"].append(time.perf_counter() - t0)
            for _ in range(calls):
                times[f"{label} warm"].append(await round_trip(kernel))
            await kernel.shutdown(now=True)
        print(f"start {i + 1}/{starts} done", file=sys.stderr)

    def median_ms(key: str) -> float:
        return statistics.median(times[key]) * 1000

    for what in ("start", "warm"):
        lo, gw = median_ms(f"local {what}"), median_ms(f"gateway {what}")
        print(f"{what:>5}: local {lo:8.1f} ms   gateway {gw:8.1f} ms   gateway/local {gw / lo:5.2f}x")

    kernels = [remote() for _ in range(parallel)]
    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for k in kernels:
            tg.start_soon(k.start, TIMEOUT * 2)
    elapsed = time.perf_counter() - t0
    print(f"parallel starts through the gateway: {parallel} in {elapsed:.2f} s = {parallel / elapsed:.2f} kernels/s")
    async with anyio.create_task_group() as tg:
        for k in kernels:
            tg.start_soon(k.shutdown, True)

    before = rss_kb()
    tracemalloc.start()  # what the kernels' objects hold, apart from memory the process had already
    many = [remote() for _ in range(held)]
    for k in many:  # one by one: the bench measures what the server holds, not the gateway's start-up burst
        await k.start(TIMEOUT)
        await round_trip(k)
    after = rss_kb()
    heap, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"server-side memory with {held} remote kernels: RSS {before / 1024:.1f} MB -> {after / 1024:.1f} MB "
          f"(+{(after - before) / 1024:.1f} MB); Python heap they hold {heap / 1024 / 1024:.2f} MB "
          f"({heap / held / 1024:.0f} KB per kernel)")
    async with anyio.create_task_group() as tg:
        for k in many:
            tg.start_soon(k.shutdown, True)
    await gateway.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--parallel", type=int, default=10)
    parser.add_argument("--held", type=int, default=20)
    args = parser.parse_args()
    from tests.gateway_harness import start_gateway

    with tempfile.TemporaryDirectory(prefix="ck-bench-gateway-") as scratch:
        root = Path(scratch)
        running = start_gateway(root / "gateway")
        try:
            anyio.run(bench, running.url, running.auth_header, args.starts, args.calls, args.parallel, args.held,
                      root)
        finally:
            running.stop()


if __name__ == "__main__":
    main()

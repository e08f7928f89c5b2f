"""Measure the ck-bash kernel: cold start and warm round trip, against spawning `bash -c`.

Run: python bench/kernel_roundtrip_bash.py [--cells 200] [--starts 5] [--kernel ck-bash [--kernel python3]]

- cold start -> kernel_info answered: AsyncKernelManager.start_kernel() called -> first
  kernel_info_reply (asked every 50 ms), i.e. when the kernel can take work
- cold start -> first result: start_kernel() -> wait_for_ready() -> idle status of a first
  `echo hi`; wait_for_ready itself adds >= 0.2 s (it waits for 0.2 s of iopub silence)
- warm round trip: execute_request sent -> idle status received, for `echo hi` over ipc,
  the way context-kernel talks to kernels
- bash -c: subprocess.run(["bash", "-c", "echo hi"]) from this process, what a
  spawn-per-call design pays for the same command
Prints a table; no thresholds. --kernel python3 gives ipykernel's own numbers to compare (ck-bash
ran on ipykernel until issue 17); give --kernel more than once to compare kernels in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from queue import Empty

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

TIMEOUT = 60


class Kernel:
    """One kernel on a private ipc prefix: the default ("kernel-ipc" in the cwd) collides
    with any other kernel started from the same directory at the same time."""

    def __init__(self, name: str) -> None:
        self._dir = tempfile.mkdtemp(prefix="ck-bench-")
        self.km = AsyncKernelManager(kernel_name=name, transport="ipc", ip=f"{self._dir}/k")
        self.kc: AsyncKernelClient | None = None

    async def start(self, wait: bool = True) -> AsyncKernelClient:
        await self.km.start_kernel()
        self.kc = kc = self.km.client()
        kc.start_channels()
        if wait:
            await kc.wait_for_ready(timeout=TIMEOUT)
        return kc

    async def stop(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        await self.km.shutdown_kernel()
        shutil.rmtree(self._dir, ignore_errors=True)


async def run_cell(kc: AsyncKernelClient, code: str) -> tuple[float, str]:
    """Send one cell; return (seconds until its idle status, its stdout)."""
    start = time.perf_counter()
    msg_id = kc.execute(code)
    out = []
    while True:
        msg = await kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            elapsed = time.perf_counter() - start
            break
    await kc.get_shell_msg(timeout=TIMEOUT)  # the execute_reply
    return elapsed, "".join(out)


async def cold_starts(name: str, n: int, code: str) -> tuple[list[float], list[float]]:
    answered, first_result = [], []
    for _ in range(n):
        kernel = Kernel(name)
        start = time.perf_counter()
        kc = await kernel.start(wait=False)
        while True:  # the kernel binds its sockets a while after start: ask until it answers
            kc.kernel_info()
            try:
                await kc.get_shell_msg(timeout=0.05)
                break
            except Empty:
                pass
        answered.append(time.perf_counter() - start)
        await kernel.stop()

        kernel = Kernel(name)
        start = time.perf_counter()
        kc = await kernel.start()
        _, out = await run_cell(kc, code)
        first_result.append(time.perf_counter() - start)
        assert out == "hi\n", out
        await kernel.stop()
    return answered, first_result


async def warm_round_trips(name: str, n: int, code: str) -> list[float]:
    kernel = Kernel(name)
    kc = await kernel.start()
    try:
        for _ in range(20):  # warm up
            await run_cell(kc, code)
        times = []
        for _ in range(n):
            elapsed, out = await run_cell(kc, code)
            assert out == "hi\n", out
            times.append(elapsed)
        return times
    finally:
        await kernel.stop()


def bash_spawns(n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(["bash", "-c", "echo hi"], capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def row(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"{name:<44} {len(ms):>4} {statistics.median(ms):>9.2f} {p95:>8.2f} {ms[0]:>8.2f}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cells", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--kernel", action="append", help="kernelspec name (default ck-bash; repeatable)")
    args = parser.parse_args()
    rows = []
    for name in args.kernel or ["ck-bash"]:
        code = "print('hi')" if name.startswith("python") else "echo hi"
        answered, cold = await cold_starts(name, args.starts, code)
        warm = await warm_round_trips(name, args.cells, code)
        rows += [
            row(f"{name}: cold start -> kernel_info", answered),
            row(f"{name}: cold start -> first result", cold),
            row(f"{name}: warm `{code}` round trip", warm),
        ]
    spawn = bash_spawns(args.cells)
    print(f"{'measure':<44} {'n':>4} {'median ms':>9} {'p95 ms':>8} {'min ms':>8}")
    print("\n".join(rows))
    print(row("subprocess bash -c 'echo hi'", spawn))


if __name__ == "__main__":
    asyncio.run(main())

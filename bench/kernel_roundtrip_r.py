"""Measure the R kernel (IRkernel) through jupyter_client, and probe the quirks the server relies on.

Run from the repo root with the venv active:  python bench/kernel_roundtrip_r.py [--cells 100] [--kernel ir]
Prints a table: Rscript spawn time, cold start, warm round trips, interrupt and shutdown times,
then one line per behaviour probe (output before idle, error shape, interrupt result, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager

KERNEL = "ir"  # --kernel NAME compares another spec, e.g. IRkernel::installspec(name = "ir-stock")
WAIT = 60.0  # bound for any single cell in this benchmark (the flood lines need ~5 s)


async def start(ipc_dir: Path, transport: str) -> tuple[AsyncKernelManager, Any, float]:
    """Start a kernel; return it, its client and the seconds until it answered kernel_info."""
    km = AsyncKernelManager(kernel_name=KERNEL, transport=transport)
    if transport == "ipc":
        km.ip = str(ipc_dir / "k")  # sockets in a private dir, not in the cwd
    t0 = time.perf_counter()
    await km.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    return km, kc, time.perf_counter() - t0


async def run_cell(kc: Any, code: str, on_start: Any = None) -> tuple[float, list[dict[str, Any]], dict[str, Any]]:
    """Execute `code`; return seconds until iopub idle, the iopub messages (in order) and the reply."""
    t0 = time.perf_counter()
    msg_id = kc.execute(code, allow_stdin=False)
    if on_start is not None:
        await on_start()
    return await collect(kc, msg_id, t0)


async def collect(kc: Any, msg_id: str, t0: float) -> tuple[float, list[dict[str, Any]], dict[str, Any]]:
    """Wait for the cell `msg_id` to go idle and for its reply; raises queue.Empty after WAIT."""
    msgs: list[dict[str, Any]] = []
    deadline = t0 + WAIT
    while True:
        msg = await kc.get_iopub_msg(timeout=max(deadline - time.perf_counter(), 0.01))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        msgs.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    elapsed = time.perf_counter() - t0
    while True:
        reply = await kc.get_shell_msg(timeout=max(deadline - time.perf_counter(), 0.01))
        if reply["parent_header"].get("msg_id") == msg_id:
            return elapsed, msgs, reply


def text_of(msgs: list[dict[str, Any]], name: str) -> str:
    return "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream" and m["content"]["name"] == name)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def rscript_spawn(n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(["Rscript", "-e", "cat(1)"], check=True, capture_output=True, timeout=WAIT)
        times.append(time.perf_counter() - t0)
    return times


async def interrupt_probe(km: AsyncKernelManager, kc: Any, code: str) -> str:
    sent: list[float] = []

    async def interrupt_soon() -> None:
        await asyncio.sleep(0.5)  # let the cell get going before SIGINT
        sent.append(time.perf_counter())
        await km.interrupt_kernel()

    _, msgs, reply = await run_cell(kc, code, on_start=interrupt_soon)
    stopped_ms = (time.perf_counter() - sent[0]) * 1000
    kinds = [m["msg_type"] for m in msgs if m["msg_type"] not in ("status", "execute_input")]
    _, after, _ = await run_cell(kc, "cat(bench_x)")
    return (f"reply={reply['content']['status']!r} iopub={kinds} done {stopped_ms:.0f} ms after SIGINT; "
            f"bench_x kept={text_of(after, 'stdout') == '42'} alive={await km.is_alive()}")


async def early_interrupt_probe(km: AsyncKernelManager, kc: Any, tries: int) -> str:
    """SIGINT while IRkernel still prepares the cell: stock IRkernel exits, kernels/ir/launch.R aborts."""
    outcomes: dict[str, int] = {}
    for _ in range(tries):
        t0 = time.perf_counter()
        msg_id = kc.execute("Sys.sleep(0.5)", allow_stdin=False)
        while True:
            msg = await kc.get_iopub_msg(timeout=WAIT)
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status":
                break  # the busy status: IRkernel has the request and is setting up
        await km.interrupt_kernel()
        try:
            outcome = (await collect(kc, msg_id, t0))[2]["content"]["status"]
        except queue.Empty:
            outcome = "hung" if await km.is_alive() else "died"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome in ("died", "hung"):
            break
    return ", ".join(f"{k}={v}" for k, v in outcomes.items())


async def main(cells: int, transport: str) -> None:
    if shutil.which("Rscript") is None:
        raise SystemExit("Rscript not found: run kernels/install.sh")
    spawn = rscript_spawn(10)
    with tempfile.TemporaryDirectory(prefix="ck-ir-") as d:
        ipc_dir = Path(d)
        colds = []
        for _ in range(3):
            km, kc, ready = await start(ipc_dir, transport)
            first, _, _ = await run_cell(kc, "cat(1)")
            colds.append((ready, ready + first))
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

        km, kc, _ = await start(ipc_dir, transport)
        try:
            warm = []
            output_before_idle = 0
            for _ in range(cells):
                elapsed, msgs, _ = await run_cell(kc, "cat(1)")
                warm.append(elapsed)
                output_before_idle += text_of(msgs, "stdout") == "1"
            warm.sort()
            p95 = warm[min(len(warm) - 1, round(0.95 * len(warm)) - 1)]

            print(f"IRkernel (kernelspec {KERNEL}) via jupyter_client, transport={transport}")
            print(f"{'Rscript -e cat(1) spawn (median of 10)':48}{ms(statistics.median(spawn))}")
            print(f"{'cold start -> kernel_info reply (median of 3)':48}{ms(statistics.median(c[0] for c in colds))}")
            print(f"{'cold start -> first cat(1) idle (median of 3)':48}{ms(statistics.median(c[1] for c in colds))}")
            print(f"{f'warm cat(1) round trip median ({cells} cells)':48}{ms(statistics.median(warm))}")
            print(f"{f'warm cat(1) round trip p95 ({cells} cells)':48}{ms(p95)}")
            print(f"{'output arrived before idle':48}{output_before_idle}/{cells}")

            _, msgs, reply = await run_cell(kc, 'bench_x <- 42; cat("o\\n"); message("e")')
            print(f"stdout/stderr: stdout={text_of(msgs, 'stdout')!r} stderr={text_of(msgs, 'stderr')!r}")
            _, msgs, reply = await run_cell(kc, 'f <- function() stop("boom"); f()')
            err = [m["content"] for m in msgs if m["msg_type"] == "error"]
            c = reply["content"]
            print(f"error: reply status={c['status']!r} ename={c.get('ename')!r} evalue={c.get('evalue')!r} "
                  f"iopub error={bool(err)} traceback={c.get('traceback')!r}")
            print("interrupt while(TRUE){}:", await interrupt_probe(km, kc, "while(TRUE){}"))
            print("interrupt Sys.sleep(100):", await interrupt_probe(km, kc, "Sys.sleep(100)"))
            print('interrupt system("sleep 100"):', await interrupt_probe(km, kc, 'system("sleep 100")'))
            early = await early_interrupt_probe(km, kc, 10)
            print("interrupt right after busy, 10 tries:", early)
            if not await km.is_alive():
                return
            # IRkernel (with Debian's evaluate) buffers a top-level expression's output and its cost
            # grows with the square of the number of lines: floods are slow inside the kernel.
            for lines in (10_000, 20_000, 40_000):
                elapsed, msgs, _ = await run_cell(kc, f'for (i in 1:{lines}) cat(i, "\\n")')
                n_streams = sum(m["msg_type"] == "stream" for m in msgs)
                print(f"{f'{lines} lines from one expression ({n_streams} stream msg)':48}{ms(elapsed)}")
        finally:
            kc.stop_channels()
            t0 = time.perf_counter()
            await km.shutdown_kernel()
            print(f"{'graceful shutdown':48}{ms(time.perf_counter() - t0)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100)
    parser.add_argument("--transport", choices=["ipc", "tcp"], default="ipc")
    parser.add_argument("--kernel", default=KERNEL)
    args = parser.parse_args()
    KERNEL = args.kernel
    asyncio.run(main(args.cells, args.transport))

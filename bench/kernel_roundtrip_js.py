"""Measure JavaScript/TypeScript Jupyter kernels the way the server uses them.

For each kernelspec: cold start (start -> first result), warm round trip over N
`console.log(1)` cells (execute_request -> status idle), output that arrives after
`status: idle` (N cells that log after an async sleep), stdout/stderr separation,
top-level await, `let` re-declaration across cells, the error message shape, and
what SIGINT does to `while(true){}` (does the kernel live, does state survive).

Usage (from the repo root, venv active):
    python bench/kernel_roundtrip_js.py    # ck-javascript, ck-typescript + deno/ijavascript/tslab specs
    python bench/kernel_roundtrip_js.py --kernels deno --cells 50 --transport tcp
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import queue
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

DEFAULT_KERNELS = ["ck-javascript", "ck-typescript"]
OPTIONAL_KERNELS = ["deno", "javascript", "tslab", "jslab"]
STEP_TIMEOUT = 30.0


@dataclass
class CellRun:
    """Everything one execute_request produced, split by when it arrived."""

    msg_id: str
    streams: list[tuple[str, str]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    results: list[str] = field(default_factory=list)
    reply: dict[str, Any] | None = None
    idle_at: float | None = None
    after_idle_before_reply: int = 0

    def text(self, name: str = "stdout") -> str:
        return "".join(t for n, t in self.streams if n == name)


@dataclass
class Report:
    kernel: str
    cold_ms: float = float("nan")
    warm_median_ms: float = float("nan")
    warm_p95_ms: float = float("nan")
    late_before_reply: int = 0
    late_after_reply: int = 0
    lost: int = 0
    streams_ok: str = "?"
    tla: str = "?"
    redeclare: str = "?"
    error_shape: str = "?"
    sigint: str = "?"
    notes: list[str] = field(default_factory=list)


class Runner:
    """Drives one kernel; counts messages that arrive after their cell went idle."""

    def __init__(self, km: AsyncKernelManager) -> None:
        self.km = km
        self.kc = km.client()
        self.cells: dict[str, CellRun] = {}
        self.late_after_reply = 0

    async def start(self) -> None:
        self.kc.start_channels()
        await self.kc.wait_for_ready(timeout=STEP_TIMEOUT)

    def stop(self) -> None:
        self.kc.stop_channels()

    def _record(self, msg: dict[str, Any], current: CellRun) -> None:
        parent = msg.get("parent_header", {}).get("msg_id")
        cell = self.cells.get(parent)
        if cell is None:
            return
        mtype, content = msg["msg_type"], msg["content"]
        if mtype == "status" and content["execution_state"] == "idle":
            cell.idle_at = time.perf_counter()
            return
        if mtype not in ("stream", "error", "execute_result"):
            return
        if cell.idle_at is not None:
            # late: still waiting for this cell's reply, or already moved on
            if cell is current and cell.reply is None:
                cell.after_idle_before_reply += 1
            else:
                self.late_after_reply += 1
        if mtype == "stream":
            cell.streams.append((content["name"], content["text"]))
        elif mtype == "error":
            cell.error = content
        else:
            cell.results.append(content["data"].get("text/plain", ""))

    async def run(
        self, code: str, wait_reply: bool = True, timeout: float = STEP_TIMEOUT
    ) -> CellRun:
        """Execute and read iopub until idle (and, if wait_reply, until the shell reply)."""
        msg_id = self.kc.execute(code, store_history=False)
        cell = CellRun(msg_id)
        self.cells[msg_id] = cell
        deadline = time.perf_counter() + timeout
        shell_task = asyncio.ensure_future(self.kc.get_shell_msg(timeout=timeout))
        iopub_task = asyncio.ensure_future(self.kc.get_iopub_msg(timeout=timeout))
        try:
            while cell.idle_at is None or (wait_reply and cell.reply is None):
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"cell did not finish in {timeout}s: {code[:40]!r}")
                done, _ = await asyncio.wait(
                    {shell_task, iopub_task}, return_when=asyncio.FIRST_COMPLETED
                )
                if iopub_task in done:
                    self._record(iopub_task.result(), cell)
                    iopub_task = asyncio.ensure_future(self.kc.get_iopub_msg(timeout=timeout))
                if shell_task in done:
                    reply = shell_task.result()
                    if reply["parent_header"].get("msg_id") == msg_id:
                        cell.reply = reply["content"]
                    shell_task = asyncio.ensure_future(self.kc.get_shell_msg(timeout=timeout))
        finally:
            for task in (shell_task, iopub_task):
                task.cancel()
            await asyncio.gather(shell_task, iopub_task, return_exceptions=True)
            # a message that arrived just before the cancel must still be counted
            if not iopub_task.cancelled() and iopub_task.exception() is None:
                self._record(iopub_task.result(), cell)
        return cell

    async def drain(self, seconds: float) -> None:
        """Read whatever iopub still delivers for `seconds` (late output)."""
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            try:
                msg = await self.kc.get_iopub_msg(timeout=left)
            except queue.Empty:  # nothing more within the time left
                return
            self._record(msg, CellRun("drain"))


async def measure(name: str, cells: int, transport: str) -> Report:
    rep = Report(name)
    is_ts = "typescript" in name or name in ("deno", "tslab")
    km = AsyncKernelManager(kernel_name=name, transport=transport)
    t0 = time.perf_counter()
    await km.start_kernel()
    runner = Runner(km)
    try:
        await runner.start()
        first = await runner.run("console.log(1)")
        rep.cold_ms = (time.perf_counter() - t0) * 1000
        if first.text().strip() != "1":
            rep.notes.append(f"first cell printed {first.text()!r}")

        times = []
        for _ in range(cells):
            t = time.perf_counter()
            cell = await runner.run("console.log(1)", wait_reply=False)
            times.append((cell.idle_at or time.perf_counter()) - t)
            await asyncio.sleep(0)
        times.sort()
        rep.warm_median_ms = statistics.median(times) * 1000
        rep.warm_p95_ms = times[int(len(times) * 0.95) - 1] * 1000

        runner.late_after_reply = 0
        async_cells = []
        for i in range(cells):
            code = f"await new Promise(r => setTimeout(r, 1)); console.log({i})"
            async_cells.append((i, await runner.run(code, wait_reply=True)))
        await runner.drain(2.0)
        rep.late_before_reply = sum(c.after_idle_before_reply for _, c in async_cells)
        rep.late_after_reply = runner.late_after_reply
        rep.lost = sum(1 for i, c in async_cells if c.text().strip() != str(i))

        sep = await runner.run("console.log('out'); console.error('err')")
        split = (sep.text().strip(), sep.text("stderr").strip()) == ("out", "err")
        rep.streams_ok = "yes" if split else f"no {sep.streams}"

        tla = await runner.run("const tlaV = await Promise.resolve(42); console.log(tlaV)")
        why = (tla.error or {}).get("evalue", tla.text())[:40]
        rep.tla = "yes" if tla.text().strip() == "42" else f"no: {why}"

        await runner.run("let redecl = 1")
        red = await runner.run("let redecl = 2; console.log(redecl)")
        rep.redeclare = "yes" if red.text().strip() == "2" else "no"

        if is_ts:
            typed = await runner.run("const typed: number = 7; console.log(typed)")
            if typed.text().strip() != "7":
                rep.notes.append(f"TS annotation failed: {typed.error or typed.text()}")

        err = await runner.run("throw new TypeError('boom')")
        if err.error:
            rep.error_shape = (
                f"{err.error['ename']}/{err.error['evalue'][:20]} "
                f"tb={len(err.error['traceback'])} reply={(err.reply or {}).get('status')}"
            )
        else:
            rep.error_shape = (
                f"no error msg; streams={err.streams} reply={(err.reply or {}).get('status')}"
            )

        rep.sigint = await measure_sigint(runner, km)
    except Exception as exc:  # noqa: BLE001 - a broken candidate is a result, not a crash
        rep.notes.append(f"{type(exc).__name__}: {exc}")
    finally:
        runner.stop()
        await km.shutdown_kernel(now=True)
    return rep


async def measure_sigint(runner: Runner, km: AsyncKernelManager) -> str:
    await runner.run("var sigProbe = 'kept'")
    msg_id = runner.kc.execute("while (true) {}")
    runner.cells[msg_id] = CellRun(msg_id)
    await asyncio.sleep(0.5)
    t = time.perf_counter()
    await km.interrupt_kernel()
    cell = runner.cells[msg_id]
    while cell.idle_at is None and time.perf_counter() - t < 10 and await km.is_alive():
        with contextlib.suppress(Exception):  # queue.Empty: poll again
            runner._record(await runner.kc.get_iopub_msg(timeout=0.5), cell)
    took = (time.perf_counter() - t) * 1000
    if not await km.is_alive():
        return "kernel died"
    if cell.idle_at is None:
        return "no idle after 10s (hung)"
    how = cell.error["ename"] if cell.error else "no error msg"
    after = await runner.run("console.log(typeof sigProbe === 'undefined' ? 'lost' : sigProbe)")
    if (after.reply or {}).get("status") == "abort":  # some kernels abort the queue once more
        after = await runner.run("console.log(typeof sigProbe === 'undefined' ? 'lost' : sigProbe)")
        how += ", next cell aborted"
    return f"{how} in {took:.0f}ms, state {after.text().strip() or after.error}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", help="comma-separated kernelspec names")
    parser.add_argument("--cells", type=int, default=200)
    parser.add_argument("--transport", default="ipc", choices=["ipc", "tcp"])
    args = parser.parse_args()
    specs = KernelSpecManager().find_kernel_specs()
    names = (
        args.kernels.split(",")
        if args.kernels
        else DEFAULT_KERNELS + [k for k in OPTIONAL_KERNELS if k in specs]
    )
    reports = [asyncio.run(measure(n, args.cells, args.transport)) for n in names]
    cols = [
        ("kernel", "kernel"),
        ("cold_ms", "cold ms"),
        ("warm_median_ms", "warm p50 ms"),
        ("warm_p95_ms", "warm p95 ms"),
        ("late_before_reply", "after idle<reply"),
        ("late_after_reply", "after reply"),
        ("lost", "lost"),
        ("streams_ok", "out/err"),
        ("tla", "TLA"),
        ("redeclare", "let again"),
        ("error_shape", "error"),
        ("sigint", "SIGINT"),
    ]
    print(f"transport={args.transport} cells={args.cells}")
    print(" | ".join(h for _, h in cols))
    for r in reports:
        vals = [getattr(r, a) for a, _ in cols]
        print(" | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in vals))
        for note in r.notes:
            print(f"  note[{r.kernel}]: {note}")


if __name__ == "__main__":
    main()

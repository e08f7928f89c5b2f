"""Per-call overhead of ctx_execute: our own work between the SDK handing us the call and our reply.

In one process, with the SDK's in-memory client and real kernels, N warm calls per language. For each
call three clocks are read:

- `server`: ContextKernelServer.call_tool, entry to return (what the SDK waits for from us);
- `cell`: CellRun.send to the end of CellRun.wait (the kernel's round trip as our client sees it:
  execute_request sent, outputs collected, idle received);
- `bare`: the same cell on the same kernel type through a plain jupyter_client AsyncKernelClient, with
  no server around it, alternated with the calls (the floor the kernel itself sets).

Printed: medians and p95 of `server - cell` (orchestration: records, guard, reply shaping, the DB
thread hops) and of `server - bare` (everything that is ours, our kernel client included). With
`--profile`, a cProfile of the server side of the calls (top functions by own time).

    .venv/bin/python bench/call_overhead.py [--calls 300] [--languages python,shell] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from jupyter_client.manager import AsyncKernelManager
from mcp.client.client import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from context_kernel.execution import runner
from context_kernel.settings import Settings
from context_kernel.tools import server as server_module

CODE = {"python": "print(1)", "shell": "echo 1", "javascript": "console.log(1)"}
KERNEL = {"python": "python3", "shell": "ck-bash", "javascript": "ck-javascript"}

server_ms: list[float] = []
cell_ms: list[float] = []


def instrument() -> None:
    """Wrap call_tool and CellRun.send/wait with clocks (the bench only; the package is untouched)."""
    call_tool = server_module.ContextKernelServer.call_tool

    async def timed_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return await call_tool(self, *args, **kwargs)
        finally:
            server_ms.append((time.perf_counter() - began) * 1000)

    send, wait = runner.CellRun.send, runner.CellRun.wait

    def timed_send(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._bench_began = time.perf_counter()
        return send(self, *args, **kwargs)

    async def timed_wait(self: Any, *args: Any, **kwargs: Any) -> Any:
        done = await wait(self, *args, **kwargs)
        cell_ms.append((time.perf_counter() - self._bench_began) * 1000)
        return done

    server_module.ContextKernelServer.call_tool = timed_call  # type: ignore[method-assign]
    runner.CellRun.send = timed_send  # type: ignore[method-assign]
    runner.CellRun.wait = timed_wait  # type: ignore[method-assign]


async def bare_kernel(name: str, cwd: Path) -> tuple[AsyncKernelManager, Any]:
    km = AsyncKernelManager(kernel_name=name, transport="ipc",
                            connection_file=str(cwd / f"bare-{name}.json"))
    km.ip = str(cwd / f"bare-{name}")
    await km.start_kernel(cwd=str(cwd))
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    return km, kc


async def bare_round_trip(kc: Any, code: str) -> float:
    began = time.perf_counter()
    msg_id = kc.execute(code)
    while True:
        msg = await kc.get_iopub_msg(timeout=30)
        if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"):
            break
    await kc.get_shell_msg(timeout=30)
    return (time.perf_counter() - began) * 1000


def stats(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(values):7.2f} {p95:7.2f}"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--languages", default="python,shell")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    instrument()
    languages = args.languages.split(",")
    profile = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "project").mkdir()
        settings = Settings(home=root / "home", project_dir=root / "project", base_env=dict(os.environ),
                            semantic=False)
        print("language   server-cell (med p95)   server-bare (med p95)   server  cell  bare (medians, ms)")
        async with Client(server_module.create_server(settings)) as client:
            for language in languages:
                km, kc = await bare_kernel(KERNEL[language], root)
                try:
                    call = {"language": language, "code": CODE[language]}
                    for _ in range(20):  # warm both
                        await client.call_tool("ctx_execute", call)
                        await bare_round_trip(kc, CODE[language])
                    server_ms.clear()
                    cell_ms.clear()
                    bare: list[float] = []
                    for _ in range(args.calls):
                        if profile:
                            profile.enable()
                        await client.call_tool("ctx_execute", call)
                        if profile:
                            profile.disable()
                        bare.append(await bare_round_trip(kc, CODE[language]))
                    pairs = list(zip(server_ms, cell_ms, bare, strict=True))
                    orchestration = [s - c for s, c, _ in pairs]
                    ours = [s - b for s, _, b in pairs]
                    print(f"{language:<10} {stats(orchestration)}         {stats(ours)}         "
                          f"{statistics.median(server_ms):6.2f} {statistics.median(cell_ms):5.2f} "
                          f"{statistics.median(bare):5.2f}")
                finally:
                    kc.stop_channels()
                    await km.shutdown_kernel(now=True)
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(35)


if __name__ == "__main__":
    anyio.run(main)

"""Warm from the first call: the first ctx_execute of a session, with prewarming on and off, same run.

Each round starts `context-kernel serve` over stdio with the SDK's client (timing its connect: the
prewarm must not delay it), lists the tools (as a client does on connect), waits THINK seconds (the
agent's first turn), then times its first python call and its first shell call. Prints medians and
the ratio off/on.

    .venv/bin/python bench/first_call.py [--rounds 5] [--think 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


async def one_round(prewarm: str, think: float) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "context_kernel", "serve", "--project", str(project)],
            env={**os.environ, "CONTEXT_KERNEL_HOME": str(home), "CONTEXT_KERNEL_PREWARM": prewarm})
        began = time.perf_counter()
        async with Client(params) as client:
            connect = time.perf_counter() - began
            await client.list_tools()
            await anyio.sleep(think)  # the agent reads the tools and thinks
            started = time.perf_counter()
            await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
            python = time.perf_counter() - started
            started = time.perf_counter()
            await client.call_tool("ctx_execute", {"language": "shell", "code": "echo 1"})
            shell = time.perf_counter() - started
    return python, shell, connect


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--think", type=float, default=3.0)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float, float]]] = {"off": [], "on": []}
    for _ in range(args.rounds):  # interleaved, so drift on a noisy machine hits both alike
        results["off"].append(await one_round("0", args.think))
        results["on"].append(await one_round("3", args.think))
    print(f"first calls after connect + {args.think:g} s, median of {args.rounds} (ms):")
    med = {k: [statistics.median(r[i] for r in v) * 1000 for i in range(3)] for k, v in results.items()}
    for label, index in (("connect", 2), ("python", 0), ("shell (2nd call)", 1)):
        off, on = med["off"][index], med["on"][index]
        print(f"  {label:<17} prewarm off {off:8.1f}   on {on:8.1f}   off/on {off / on:5.1f}x")


if __name__ == "__main__":
    anyio.run(main)

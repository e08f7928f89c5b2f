"""The first ctx_search of a new server, as an agent meets it: connect, then search at once.

One server indexes about 5 MB of real documentation (bench/retrieval/corpus copied five times);
then each round starts a fresh `context-kernel serve` on that data dir with the SDK's stdio client,
times the handshake, the first `ctx_search` sent right after it, and a second search in the same
server (the warm baseline of the same run). Prints medians and the ratio first / warm. Issue 24's
goal: the first search within 300 ms of the handshake on a 5 MB index.

    .venv/bin/python bench/first_search.py [--rounds 7] [--copies 5] [--after S] [--prewarm N] [--semantic 0|1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

CORPUS = Path(__file__).resolve().parent / "retrieval" / "corpus"
QUERIES = ["how do I retry a failed request", "configure the connection pool size",
           "validate a json schema draft", "what does the event loop do on shutdown"]


def params(home: Path, project: Path, semantic: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "context_kernel", "serve", "--project", str(project)],
        env={**os.environ, "CONTEXT_KERNEL_HOME": str(home), "CONTEXT_KERNEL_PREWARM": "0",
             "CONTEXT_KERNEL_SEMANTIC": semantic})


async def build_index(home: Path, project: Path, copies: int, semantic: str) -> int:
    docs = project / "docs"
    for i in range(copies):
        shutil.copytree(CORPUS, docs / f"copy{i}")
    size = sum(p.stat().st_size for p in docs.rglob("*") if p.is_file())
    async with Client(params(home, project, semantic)) as client:
        result = await client.call_tool("ctx_index", {"path": str(docs)})
        if result.is_error:
            raise SystemExit(f"indexing failed: {result.content}")
    return size


async def one_round(home: Path, project: Path, query: str, semantic: str, after: float,
                    prewarm: str) -> tuple[float, float, float]:
    began = time.perf_counter()
    server = params(home, project, semantic)
    server.env = {**(server.env or {}), "CONTEXT_KERNEL_PREWARM": prewarm}
    async with Client(server) as client:
        connect = time.perf_counter() - began
        await anyio.sleep(after)  # an agent's first call comes after its first turn, not at once
        started = time.perf_counter()
        first = await client.call_tool("ctx_search", {"queries": [query], "limit": 2})
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        second = await client.call_tool("ctx_search", {"queries": [query + " example"], "limit": 2})
        warm_s = time.perf_counter() - started
        if first.is_error or second.is_error:
            raise SystemExit(f"search failed: {first.content} {second.content}")
    return connect, first_s, warm_s


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--semantic", default="1", help="CONTEXT_KERNEL_SEMANTIC for the servers (1 or 0)")
    parser.add_argument("--after", type=float, default=0.0, help="seconds between connecting and the first search")
    parser.add_argument("--prewarm", default="0", help="CONTEXT_KERNEL_PREWARM for the servers (the default is 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        size = await build_index(home, project, args.copies, args.semantic)
        rows = [await one_round(home, project, QUERIES[i % len(QUERIES)], args.semantic, args.after, args.prewarm)
                for i in range(args.rounds)]
    connect, first, warm = (statistics.median(r[i] for r in rows) * 1000 for i in range(3))
    print(f"{size / 1e6:.1f} MB indexed, semantic={args.semantic}, prewarm={args.prewarm}, first search "
          f"{args.after:g} s after connecting, median of {args.rounds} fresh servers (ms):")
    print(f"  connect (spawn + initialize)  {connect:8.1f}")
    print(f"  first ctx_search              {first:8.1f}")
    print(f"  second ctx_search (warm)      {warm:8.1f}")
    print(f"  first / warm                  {first / warm:8.1f}x")


if __name__ == "__main__":
    anyio.run(main)

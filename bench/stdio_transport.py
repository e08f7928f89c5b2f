"""The stdio transport alone: the SDK's `stdio_server` (worker threads) against ours (serving/stdio.py,
the loop's pipe transports), both serving the same MCPServer with one tool that returns "1".

Each server is spawned once and driven by the SDK's stdio client; rounds alternate between the two
so that load on the machine falls on both. Prints the median round trip of each and the ratio.
Not part of the test suite.

    .venv/bin/python bench/stdio_transport.py [--rounds 10] [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

SERVER = """
import sys
import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("one")

@server.tool()
def one() -> str:
    return "1"

async def ours() -> None:
    from context_kernel.serving.stdio import serve_stdio
    async with serve_stdio() as (read, write):
        await server._lowlevel_server.run(read, write, server._lowlevel_server.create_initialization_options())

if sys.argv[1] == "sdk":
    server.run()
else:
    anyio.run(ours)
"""


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "one_tool.py"
        script.write_text(SERVER)
        times: dict[str, list[float]] = {"sdk": [], "ours": []}
        async with Client(StdioServerParameters(command=sys.executable, args=[str(script), "sdk"])) as sdk, \
                Client(StdioServerParameters(command=sys.executable, args=[str(script), "ours"])) as ours:
            clients = {"sdk": sdk, "ours": ours}
            for client in clients.values():
                for _ in range(20):  # warm-up, not counted
                    await client.call_tool("one", {})
            for _ in range(args.rounds):
                for name, client in clients.items():
                    for _ in range(args.calls):
                        t = time.perf_counter()
                        result = await client.call_tool("one", {})
                        times[name].append((time.perf_counter() - t) * 1000)
                        if result.is_error:
                            raise RuntimeError(f"{name}: {result.content}")
    sdk_ms, ours_ms = statistics.median(times["sdk"]), statistics.median(times["ours"])
    print(f"round trip, median of {len(times['sdk'])} calls each: SDK stdio_server {sdk_ms:.3f} ms, "
          f"ours {ours_ms:.3f} ms, ratio {sdk_ms / ours_ms:.2f}x (saved {sdk_ms - ours_ms:.3f} ms a call)")


if __name__ == "__main__":
    anyio.run(main)

"""Ours and the reference (npm context-mode@1.0.169) driven by the same MCP stdio client, in one run.

Installs the reference into a scratch directory (`npm install context-mode@1.0.169 node@22`: it
needs Node >= 22.5, newer than Debian's) unless --ref-dir already has it, then for each server:
spawn → initialized client (ms, median of CONNECTS fresh spawns, next to the same for an MCPServer
with no tools: the floor `import mcp` sets), tools/list (bytes), warm round trips of a trivial call per
language (median of N), and a stateful analysis session over a 200k-row CSV — load plus 10
aggregates, first call included, then one follow-up aggregate. Ours keeps the rows in its warm
kernel; the reference runs each call in a new process, so each of its calls reloads the file (what
an agent has to do there). Both use the standard library's csv module. Prints a table with the
ratio reference/ours (higher is better for us). Not part of the test suite.

    .venv/bin/python bench/side_by_side.py [--rounds 20] [--ref-dir DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

REFERENCE = "context-mode@1.0.169"
WARM = {"python": "print(1)", "shell": "echo 1", "javascript": "console.log(1)"}
LOAD = ("import csv\nrows = list(csv.DictReader(open({path!r})))\n"
        "vals = [float(r['amount']) for r in rows]\n")
AGGREGATES = [
    "print(sum(vals))", "print(max(vals))", "print(min(vals))", "print(sum(vals) / len(vals))",
    "print(len({r['region'] for r in rows}))", "print(sum(1 for v in vals if v > 500))",
    "print(sorted(vals)[len(vals) // 2])", "print(sum(float(r['amount']) for r in rows if r['region'] == 'north'))",
    "print(len([r for r in rows if r['product'] == 'p7']))", "print(round(sum(v * v for v in vals) ** 0.5, 2))",
]
FOLLOW_UP = "print(max(float(r['amount']) for r in rows if r['region'] == 'south'))"
CONNECTS = 7
# The SDK alone: what any Python MCP server pays before its own first line runs.
FLOOR_SERVER = "from mcp.server.mcpserver import MCPServer\nMCPServer('floor').run()\n"


def install_reference(where: Path) -> list[str]:
    cli = where / "node_modules" / "context-mode" / "cli.bundle.mjs"
    node = where / "node_modules" / ".bin" / "node"
    if not cli.exists() or not node.exists():
        where.mkdir(parents=True, exist_ok=True)
        print(f"installing {REFERENCE} and node@22 into {where} …", file=sys.stderr)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", REFERENCE, "node@22"],
                       cwd=where, check=True, timeout=600)
    return [str(node), str(cli)]


def write_csv(path: Path, rows: int = 200_000) -> None:
    rng = random.Random(7)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "region", "product", "amount"])
        for i in range(rows):
            out.writerow([i, rng.choice(["north", "south", "east", "west"]), f"p{rng.randrange(20)}",
                          f"{rng.uniform(1, 1000):.2f}"])


async def connect_ms(command: list[str], env: dict[str, str], project: Path) -> float:
    """Spawn → the SDK client's connect done (its handshake answered), for one fresh server process."""
    started = time.perf_counter()
    async with Client(StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(project))):
        return (time.perf_counter() - started) * 1000


async def measure(command: list[str], env: dict[str, str], project: Path, data: Path, rounds: int,
                  stateful: bool) -> dict[str, float]:
    out: dict[str, float] = {}
    async with Client(StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(project))) as c:
        tools = await c.list_tools()
        out["tools/list bytes"] = len(json.dumps([t.model_dump(mode="json") for t in tools.tools]))

        async def call(language: str, code: str) -> float:
            t = time.perf_counter()
            result = await c.call_tool("ctx_execute", {"language": language, "code": code})
            if result.is_error:
                raise RuntimeError(f"{language}: {result.content}")
            return (time.perf_counter() - t) * 1000

        for language, code in WARM.items():
            await call(language, code)  # cold start, not counted
            out[f"warm {language} ms"] = statistics.median([await call(language, code) for _ in range(rounds)])
        load = LOAD.format(path=str(data))
        t = time.perf_counter()
        if stateful:
            await call("python", load)
            for agg in AGGREGATES:
                await call("python", agg)
        else:
            for agg in AGGREGATES:
                await call("python", load + agg)
        out["CSV load + 10 aggregates ms"] = (time.perf_counter() - t) * 1000
        out["follow-up aggregate ms"] = await call("python", FOLLOW_UP if stateful else load + FOLLOW_UP)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--ref-dir", type=Path, default=Path(tempfile.gettempdir()) / "ck-bench-reference")
    args = parser.parse_args()
    reference = install_reference(args.ref_dir)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "sales.csv"
        write_csv(data)
        floor_script = root / "floor_server.py"
        floor_script.write_text(FLOOR_SERVER)
        servers = {"ours": ([sys.executable, "-m", "context_kernel", "serve"], True), "reference": (reference, False),
                   "floor": ([sys.executable, str(floor_script)], False)}
        envs: dict[str, dict[str, str]] = {}
        for name in servers:
            (root / name).mkdir()
            (root / f"{name}-home").mkdir()
            envs[name] = {**os.environ, "HOME": str(root / f"{name}-home"),
                          "CONTEXT_KERNEL_HOME": str(root / "ck-home"), "CLAUDE_PROJECT_DIR": str(root / name)}
        print(f"connecting {CONNECTS} times to each …", file=sys.stderr)
        connects: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(CONNECTS):  # interleaved: drift on a noisy machine hits all three alike
            for name, (command, _) in servers.items():
                connects[name].append(await connect_ms(command, envs[name], root / name))
        results: dict[str, dict[str, float]] = {}
        for name in ("ours", "reference"):
            command, stateful = servers[name]
            print(f"measuring {name} …", file=sys.stderr)
            results[name] = {"initialize ms": statistics.median(connects[name]),
                             **await measure(command, envs[name], root / name, data, args.rounds, stateful)}
    print(f"| ({args.rounds} warm calls each) | ours | reference | reference / ours |")
    print("|---|---|---|---|")
    for key in results["ours"]:
        ours, ref = results["ours"][key], results["reference"][key]
        print(f"| {key} | {ours:,.1f} | {ref:,.1f} | {ref / ours:.2f}x |")
    floor, ours_init = statistics.median(connects["floor"]), results["ours"]["initialize ms"]
    print(f"\ninitialize: ours {ours_init:,.1f} ms, an MCPServer with no tools (the SDK's floor) {floor:,.1f} ms: "
          f"ours {ours_init - floor:+,.1f} ms (medians of {CONNECTS} spawns each)")
    print(f"\n(python {sys.version.split()[0]}, node for the reference: {shutil.which('node')} is bypassed by "
          f"{reference[0]})")


if __name__ == "__main__":
    anyio.run(main)

"""Export and replay of a long session: 1,000 recorded executions by default.

Builds the session the real way (the SDK's in-memory MCP client against `create_server`, one
python kernel, small cells), then measures, in one run:
  1. ctx_export of the whole session (ms, and per execution), and the HTML export with nbconvert;
  2. `replay` of the exported notebook in a fresh kernel, next to the sum of the durations the
     record holds for the same executions (the ratio says what replay costs over the session's
     own compute: nbclient's per-cell round trip, the comparison, and one kernel start).

Nothing is asserted except that the replay matches. Progress goes to stderr, the table to stdout.
Usage (from the repo root, venv active):
    python bench/export_replay.py                    # 1,000 executions (a minute or two on 2 cores)
    python bench/export_replay.py --executions 200
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
import nbformat
from mcp.client.client import Client

from context_kernel.notebooks.replay import replay
from context_kernel.settings import Settings
from context_kernel.tools.server import create_server

# Small cells of the kinds a session is made of: assignments, prints, an expression, a loop.
CELLS = [
    "x{i} = {i} * 3",
    "print('step', {i}, x{i})",
    "sum(range({i} % 50))",
    "for k in range(3): print({i}, k)",
]


def cell(i: int) -> str:
    # cells come in groups of four sharing one number, so x{n} is assigned before it is printed
    return CELLS[i % len(CELLS)].format(i=i - i % len(CELLS))


async def record(settings: Settings, executions: int) -> tuple[float, float, float, Path]:
    """Run the session; return (record wall s, ctx_export ms, HTML export ms, exported notebook)."""
    async with Client(create_server(settings)) as client:
        began = time.perf_counter()
        for i in range(executions):
            result = await client.call_tool("ctx_execute", {"language": "python", "code": cell(i)})
            if result.is_error:
                raise SystemExit(f"cell {i} failed: {result.content}")
            if (i + 1) % 100 == 0:
                print(f"  {i + 1} executions recorded", file=sys.stderr)
        wall = time.perf_counter() - began
        began = time.perf_counter()
        reply = await client.call_tool("ctx_export", {})
        export_ms = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        await client.call_tool("ctx_export", {"format": "html"})
        html_ms = (time.perf_counter() - began) * 1000
    text = "".join(getattr(block, "text", "") for block in reply.content)
    return wall, export_ms, html_ms, Path(text.split(" to ", 1)[1].split(";")[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executions", type=int, default=1000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ck-bench-export-"))
    try:
        project = tmp / "project"
        project.mkdir()
        settings = Settings(home=tmp / "home", project_dir=project)
        print(f"recording {args.executions} executions…", file=sys.stderr)
        wall, export_ms, html_ms, path = anyio.run(record, settings, args.executions)
        nb = nbformat.read(path, as_version=4)
        recorded_ms = sum(c.metadata.context_kernel.get("duration_ms", 0) for c in nb.cells)
        print("replaying…", file=sys.stderr)
        began = time.perf_counter()
        report = replay(path, timeout_s=60)
        replay_ms = (time.perf_counter() - began) * 1000
        if not report.ok:
            print(report.render(), file=sys.stderr)
            return 1
        n = args.executions
        print(f"#### Export and replay of a session of {n:,} executions (python, small cells)\n")
        print("| measure | total | per execution |")
        print("|---|---:|---:|")
        print(f"| recording the session through the MCP client (wall) | {wall * 1000:,.0f} ms "
              f"| {wall * 1000 / n:.2f} ms |")
        first_ms = nb.cells[0].metadata.context_kernel.get("duration_ms", 0)
        print(f"| sum of the recorded execution durations | {recorded_ms:,.0f} ms | {recorded_ms / n:.2f} ms |")
        print(f"| … of which the first (it started the kernel) | {first_ms:,.0f} ms | |")
        print(f"| ctx_export, ipynb ({path.stat().st_size / 1024:,.0f} KB) | {export_ms:,.0f} ms "
              f"| {export_ms / n:.3f} ms |")
        print(f"| ctx_export, html (nbconvert) | {html_ms:,.0f} ms | {html_ms / n:.3f} ms |")
        print(f"| replay (fresh kernel, nbclient, compare; {len(report.cells)} cells match) | {replay_ms:,.0f} ms "
              f"| {replay_ms / n:.2f} ms |")
        print(f"\nreplay / recorded durations: {replay_ms / recorded_ms:.2f}×")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

"""How soon semantic search covers what was indexed, what it costs the user's kernel, and cold searches.

    .venv/bin/python bench/semantic_coverage.py --corpus DIR [--corpus DIR ...] [--sizes 1,5,50] [--busy]

Every figure through the SDK's stdio client against a real `context-kernel serve`:

1. Coverage: a project of N MB of real text (the given corpus directories, copied until N MB), one
   `ctx_index(path=...)`, then `ctx_stats` polled until it says every section has its vectors: the
   seconds from `ctx_index` returning to full coverage, idle and with a process spinning on one core
   (`--busy`: a kernel computing on a 2-core machine).
2. Warm python calls (`print(1)`) for as long as that embedding runs (median), against the same call idle
   (median of 30 before indexing and 30 after the embedding).
3. The first `ctx_search` of a fresh server on a copy of the 5 MB index, right after `initialize`, and
   the same search 3 s later (the vectors loaded), median of 5 fresh processes each.

Prints a table; nothing is asserted (machines are noisy: compare the ratios of one run).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "retrieval"))
from engines import Ours  # noqa: E402

MB = 1024 * 1024
POLL_S = 1.0  # as an agent might ask; each ctx_stats counts the backlog
COVER_TIMEOUT_S = 1800.0


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def make_project(sources: list[Path], size_mb: float, into: Path) -> int:
    """Copies of the corpus files under into/copyN/ until size_mb; returns the bytes written."""
    files = [(n, f) for n, src in enumerate(sources) for f in sorted(src.rglob("*"))
             if f.is_file() and f.stat().st_size < 5 * MB]
    total, copy = 0, 0
    while total < size_mb * MB:
        for n, f in files:
            target = into / f"copy{copy}" / str(n) / f.relative_to(sources[n])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
            total += f.stat().st_size
            if total >= size_mb * MB:
                break
        copy += 1
    return total


async def warm_calls(session: ClientSession, n: int = 30) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await session.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def coverage(sources: list[Path], size_mb: float, busy: bool, work: Path) -> dict[str, float]:
    project, home = work / "project", work / "home"
    project.mkdir(parents=True)
    home.mkdir()
    written = await anyio.to_thread.run_sync(make_project, sources, size_mb, project)
    spinner = await anyio.open_process([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        async with stdio_client(Ours().params(home, project)) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            await session.call_tool("ctx_execute", {"language": "python", "code": "print(0)"})
            idle = await warm_calls(session)
            started = time.perf_counter()
            await session.call_tool("ctx_index", {"path": str(project), "maxFiles": 100000})
            indexed = time.perf_counter()
            during: list[float] = []
            covered = None
            while time.perf_counter() - indexed < COVER_TIMEOUT_S:
                # Warm calls for as long as the embedding runs, ctx_stats between them (about once a second).
                for _ in range(10):
                    call = time.perf_counter()
                    await session.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
                    during.append((time.perf_counter() - call) * 1000)
                    await anyio.sleep(POLL_S / 10)
                stats = text_of(await session.call_tool("ctx_stats", {}))
                if "every section has its vectors" in stats:
                    covered = time.perf_counter()
                    break
            idle = statistics.median([idle, await warm_calls(session)])
    finally:
        if spinner is not None:
            spinner.kill()
            await spinner.wait()
    return {"mb": written / MB, "index_s": indexed - started,
            "cover_s": (covered - indexed) if covered else float("nan"), "idle_ms": idle,
            "during_ms": statistics.median(during) if during else float("nan"), "calls_during": len(during)}


async def cold_search(db: Path, work: Path, delay: float) -> float:
    home = work / f"cold-{time.monotonic_ns()}"
    home.mkdir()
    shutil.copy(db, home / "context-kernel.sqlite3")
    async with stdio_client(Ours().params(home, work)) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        if delay:
            await anyio.sleep(delay)
        started = time.perf_counter()
        await session.call_tool("ctx_search", {"queries": ["how do I keep the logs after a reboot"], "limit": 2})
        return (time.perf_counter() - started) * 1000


async def main_async(args: argparse.Namespace) -> None:
    sources = [Path(c) for c in args.corpus]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ck-coverage-") as tmp:
        five: Path | None = None
        for size in [float(s) for s in args.sizes.split(",")]:
            for busy in ([False, True] if args.busy else [False]):
                work = Path(tmp) / f"{size}-{busy}"
                result = await coverage(sources, size, busy, work)
                rows.append((size, busy, result))
                print(f"{result['mb']:.1f} MB {'busy' if busy else 'idle'}: {result}", flush=True)
                if size == 5 and not busy:
                    five = work / "home" / "context-kernel.sqlite3"
        print("| corpus | machine | ctx_index s | ctx_index → every section embedded, s | warm python call idle / "
              "during embedding, ms | ratio |")
        print("|---|---|---|---|---|---|")
        for _size, busy, r in rows:
            print(f"| {r['mb']:.1f} MB | {'one core busy' if busy else 'idle'} | {r['index_s']:.1f} | "
                  f"{r['cover_s']:.1f} | {r['idle_ms']:.1f} / {r['during_ms']:.1f} | "
                  f"{r['during_ms'] / r['idle_ms']:.2f}× |")
        if five is not None:
            first = [await cold_search(five, Path(tmp), 0.0) for _ in range(5)]
            later = [await cold_search(five, Path(tmp), 3.0) for _ in range(5)]
            print(f"\nfirst ctx_search of a fresh server on the 5 MB index, right after initialize: median "
                  f"{statistics.median(first):.0f} ms (all: {', '.join(f'{t:.0f}' for t in first)}); "
                  f"3 s later: {statistics.median(later):.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", required=True, help="a directory of text to copy from")
    ap.add_argument("--sizes", default="1,5,50")
    ap.add_argument("--busy", action="store_true", help="also with one core kept busy")
    anyio.run(main_async, ap.parse_args())


if __name__ == "__main__":
    main()

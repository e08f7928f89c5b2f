"""The blind intent set over ordinary outputs (bench/intent_eval, README there): the share of needle lines the first
reply holds, and the reply's size, through the real MCP client.

    python bench/intent_eval_run.py [--split dev|test] [--show] [--server DIR]

Each case runs as `ctx_execute(language="shell", code="cat <file>", intent=...)` on a server whose project directory
is bench/intent_eval. Scoring is the README's: a needle counts when, with trailing whitespace removed, it appears in
the reply; a reply over 4 KB misses the size target. Prints per kind and overall the mean share of needles found,
the share of cases with all of them, and reply bytes (median, max, over 4 KB). `--server DIR` measures another
checkout's `server/` (a baseline). Only measures: exit status 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio

SET = Path(__file__).resolve().parent / "intent_eval"
_server = sys.argv[sys.argv.index("--server") + 1] if "--server" in sys.argv else str(SET.parent.parent / "server")
sys.path.insert(0, _server)

from mcp.client.client import Client  # noqa: E402

from context_kernel.settings import Settings  # noqa: E402
from context_kernel.tools.server import create_server  # noqa: E402

TARGET_BYTES = 4096


def share(reply: str, needles: list[str]) -> float:
    wanted = [n.rstrip() for n in needles if n.strip()]
    return sum(n in reply for n in wanted) / len(wanted) if wanted else 1.0


async def run(cases: list[dict[str, Any]], home: Path, show: bool) -> list[tuple[str, float, int]]:
    settings = Settings(home=home, project_dir=SET, base_env=dict(os.environ), semantic=False)
    rows = []
    async with Client(create_server(settings)) as client:
        for case in cases:
            result = await client.call_tool("ctx_execute", {"language": "shell", "code": f"cat {case['file']}",
                                                            "intent": case["intent"]})
            reply = "".join(getattr(block, "text", "") for block in result.content)
            got = share(reply, case["needles"])
            rows.append((case["kind"], got, len(reply.encode())))
            if show:
                print(f"--- {case['id']} intent={case['intent']!r} share={got:.2f} bytes={len(reply.encode())}\n"
                      f"{reply}\n", file=sys.stderr)
    return rows


def report(rows: list[tuple[str, float, int]]) -> None:
    kinds: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for kind, got, size in rows:
        kinds[kind].append((got, size))
    print(f"{'kind':<15} {'cases':>5} {'needles':>8} {'all':>6} {'median B':>9} {'max B':>7} {'>4KB':>5}")
    for kind, items in sorted(kinds.items()) + [("overall", [(g, s) for _, g, s in rows])]:
        shares = [g for g, _ in items]
        sizes = [s for _, s in items]
        print(f"{kind:<15} {len(items):>5} {statistics.mean(shares):>8.2f} "
              f"{sum(g == 1.0 for g in shares) / len(shares):>6.2f} {statistics.median(sizes):>9.0f} "
              f"{max(sizes):>7} {sum(s > TARGET_BYTES for s in sizes):>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--show", action="store_true", help="print each reply to stderr")
    parser.add_argument("--server", help="another checkout's server/ directory (a baseline)")
    args = parser.parse_args()
    cases = [json.loads(line) for line in (SET / f"cases-{args.split}.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="ck-intent-eval-") as home:
        rows = anyio.run(run, cases, Path(home), args.show)
    print(f"split {args.split}: {len(cases)} cases")
    report(rows)


if __name__ == "__main__":
    main()

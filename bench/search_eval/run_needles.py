"""Intent on large outputs: the share of needle lines a reply holds, through the real MCP client.

    python bench/search_eval/run_needles.py [--generator PATH] [--split dev] [--out DIR] [--show] [--server DIR]

The generator (`needles.py` next to this file when the evaluation branch has put it there, else
`own_needles.py`, our cases written from the issue) is run as `GENERATOR --out DIR --split SPLIT`;
it writes DIR/cases.jsonl, one case a line: `kind`, `file` (relative to DIR), `intent`, `needles`
(the lines the reply should hold). Each case runs as
`ctx_execute_file(path, language="python", code="print(FILE_CONTENT)", intent=...)` on a server
whose project directory is DIR. A needle counts as found when the reply holds its text, both
whitespace-normalised (runs of whitespace become one space). Prints, per kind and overall, the
mean share of needle lines found, the share of cases with all of them, and the reply bytes (mean,
median, max). `--server DIR` measures another checkout's `server/` (a baseline). Only measures:
exit status 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
_server = sys.argv[sys.argv.index("--server") + 1] if "--server" in sys.argv else str(HERE.parent.parent / "server")
sys.path.insert(0, _server)

from mcp.client.client import Client  # noqa: E402

from context_kernel.settings import Settings  # noqa: E402
from context_kernel.tools.server import create_server  # noqa: E402


def default_generator() -> Path:
    blind = HERE / "needles.py"
    return blind if blind.exists() else HERE / "own_needles.py"


def load_cases(out: Path) -> list[dict[str, Any]]:
    cases = []
    for line in (out / "cases.jsonl").read_text().splitlines():
        if line.strip():
            case = json.loads(line)
            case.setdefault("file", case.get("path"))
            case.setdefault("needles", case.get("needle_lines", []))
            cases.append(case)
    return cases


def fold(text: str) -> str:
    return " ".join(text.split())


def found_share(reply: str, needles: list[str]) -> float:
    wanted = [fold(n) for n in needles if n.strip()]
    folded = fold(reply)
    return sum(n in folded for n in wanted) / len(wanted) if wanted else 1.0


async def run(cases: list[dict[str, Any]], project: Path, home: Path, show: bool) -> list[tuple[str, float, int]]:
    settings = Settings(home=home, project_dir=project, base_env=dict(os.environ))
    rows = []
    async with Client(create_server(settings)) as client:
        for case in cases:
            result = await client.call_tool("ctx_execute_file", {
                "path": case["file"], "language": "python", "code": "print(FILE_CONTENT)", "intent": case["intent"]})
            reply = "".join(getattr(block, "text", "") for block in result.content)
            share = found_share(reply, case["needles"])
            rows.append((case["kind"], share, len(reply.encode())))
            if show:
                print(f"--- {case.get('id', case['file'])} intent={case['intent']!r} share={share:.2f} "
                      f"bytes={len(reply.encode())}\n{reply}\n", file=sys.stderr)
    return rows


def report(rows: list[tuple[str, float, int]]) -> None:
    by_kind: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for kind, share, size in rows:
        by_kind[kind].append((share, size))
    print("| kind | cases | needle share | all found | reply bytes mean | median | max |")
    print("|---|---|---|---|---|---|---|")

    def row(name: str, values: list[tuple[float, int]]) -> str:
        shares, sizes = [v[0] for v in values], [v[1] for v in values]
        return (f"| {name} | {len(values)} | {statistics.mean(shares):.2f} | "
                f"{sum(s == 1.0 for s in shares) / len(shares):.2f} | {statistics.mean(sizes):.0f} | "
                f"{statistics.median(sizes):.0f} | {max(sizes)} |")

    for kind, values in sorted(by_kind.items()):
        print(row(kind, values))
    print(row("**overall**", [(r[1], r[2]) for r in rows]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generator", type=Path, default=None)
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--out", type=Path, default=None, help="where the cases go (default: a temporary dir)")
    parser.add_argument("--show", action="store_true", help="print every reply to stderr")
    parser.add_argument("--server", type=Path, default=None, help="the server/ directory to measure (default: ours)")
    args = parser.parse_args()
    generator = args.generator or default_generator()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "cases"
        subprocess.run([sys.executable, str(generator), "--out", str(out), "--split", args.split],
                       check=True, timeout=600)
        cases = load_cases(out)
        print(f"{len(cases)} cases from {generator.name} --split {args.split}\n")
        rows = anyio.run(run, cases, out, Path(tmp) / "home", args.show)
        report(rows)


if __name__ == "__main__":
    main()

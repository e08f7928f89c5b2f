"""Document search, answer in reply: the blind evaluation's scoring, through the real MCP client.

    python bench/search_eval/run_questions.py --corpus DIR --questions FILE [--server DIR] [--misses]

The corpus (the PostgreSQL manual as Markdown, built by the evaluation branch's
`build_corpus.py`) is indexed once with `ctx_index(path=".", source="pgdocs")` on a server whose
project directory is the corpus; each question is then asked as
`ctx_search(queries=[question], limit=2, source="pgdocs")` in a session of its own (a new client
connection: no question sees another's sections as already sent). A hit is the answer span,
whitespace-normalised, inside the reply normalised the same way (strict); the lenient variant
also case-folds and drops the Markdown markers `` ` ``, `*` and `_`. Prints both per kind and
overall, and reply bytes (mean, max). `--server DIR` measures another checkout's `server/`.
Only measures; exit status 0.
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

HERE = Path(__file__).resolve().parent
_server = sys.argv[sys.argv.index("--server") + 1] if "--server" in sys.argv else str(HERE.parent.parent / "server")
sys.path.insert(0, _server)

from mcp.client.client import Client  # noqa: E402

from context_kernel.settings import Settings  # noqa: E402
from context_kernel.tools.server import create_server  # noqa: E402


def strict(text: str) -> str:
    return " ".join(text.split())


def lenient(text: str) -> str:
    return strict(text.lower().translate(str.maketrans("", "", "`*_")))


def reply_text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def run(questions: list[dict[str, Any]], corpus: Path, home: Path) -> list[tuple[dict[str, Any], str]]:
    settings = Settings(home=home, project_dir=corpus, base_env=dict(os.environ))
    async with Client(create_server(settings)) as client:
        done = await client.call_tool("ctx_index", {"path": ".", "source": "pgdocs"})
        print(reply_text(done)[:200], file=sys.stderr)
    replies = []
    for q in questions:
        async with Client(create_server(settings)) as client:
            found = await client.call_tool("ctx_search", {"queries": [q["question"]], "limit": 2, "source": "pgdocs"})
            replies.append((q, reply_text(found)))
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--server", type=Path, default=None, help="the server/ directory to measure (default: ours)")
    parser.add_argument("--misses", action="store_true", help="list the questions missed (strict)")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        replies = anyio.run(run, questions, args.corpus.resolve(), Path(tmp) / "home")
    by_kind: dict[str, list[tuple[bool, bool, int]]] = defaultdict(list)
    for q, text in replies:
        row = (strict(q["answer"]) in strict(text), lenient(q["answer"]) in lenient(text), len(text.encode()))
        by_kind[q.get("kind", "?")].append(row)
        by_kind["**overall**"].append(row)
    print("| kind | n | strict | lenient | bytes mean | max |")
    print("|---|---|---|---|---|---|")
    for kind, rows in sorted(by_kind.items(), key=lambda kv: (kv[0] == "**overall**", kv[0])):
        print(f"| {kind} | {len(rows)} | {statistics.mean(r[0] for r in rows):.2f} | "
              f"{statistics.mean(r[1] for r in rows):.2f} | {statistics.mean(r[2] for r in rows):.0f} | "
              f"{max(r[2] for r in rows)} |")
    if args.misses:
        for q, text in replies:
            if strict(q["answer"]) not in strict(text):
                print(f"\nMISS {q['id']} ({q.get('kind')}): {q['question']}\n  want [{q['file']}]: "
                      f"{q['answer'][:120]!r}\n  got: " + " | ".join(
                          line for line in text.splitlines() if line.startswith(("###", "(")))[:300])


if __name__ == "__main__":
    main()

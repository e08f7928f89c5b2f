"""Answer in reply: the share of questions whose expected answer is in ctx_search's reply text.

    python bench/search_eval/answer_in_reply.py [--questions FILE] [--corpus DIR] [--limit 3]

Defaults to bench/retrieval (its corpus and questions.jsonl: `query`, `source`, `answer`, `tags`).
Each question runs in a fresh session (nothing counts as already sent) through the knowledge
service with the default 6 KB search budget; the answer counts when the reply holds it verbatim
(whitespace runs folded). Prints the share overall and per tag, and reply bytes (median, max).
Only measures; exit status 0.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "server"))

from context_kernel.knowledge.service import KnowledgeService  # noqa: E402
from context_kernel.settings import DEFAULT_SEARCH_BUDGET  # noqa: E402
from context_kernel.store.db import Database  # noqa: E402
from context_kernel.store.knowledge import KnowledgeRepository  # noqa: E402

RETRIEVAL = HERE.parent / "retrieval"


def fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


async def run(questions: list[dict], corpus: Path, limit: int) -> list[tuple[dict, bool, int]]:
    docs = [(p.stem, p.read_text(encoding="utf-8"), p.name) for p in sorted(corpus.iterdir())  # noqa: ASYNC240 - setup, before any timing
            if p.is_file() and p.name != "SOURCES.md"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Database.open(Path(tmp) / "kb.sqlite3")
        try:
            service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=Path(tmp),
                                       search_budget=DEFAULT_SEARCH_BUDGET)
            for label, text, name in docs:
                await service.index_text(label=label, text=text, name=name)
            for n, q in enumerate(questions):
                reply = await service.search([q["query"]], session_id=f"q{n}", limit=limit)
                rows.append((q, fold(q["answer"]) in fold(reply.text), reply.sent_bytes))
        finally:
            db.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=Path, default=RETRIEVAL / "questions.jsonl")
    parser.add_argument("--corpus", type=Path, default=RETRIEVAL / "corpus")
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    rows = anyio.run(run, questions, args.corpus, args.limit)
    by_tag: dict[str, list[bool]] = defaultdict(list)
    for q, found, _ in rows:
        for tag in q.get("tags", []):
            by_tag[tag].append(found)
    sizes = [size for _, _, size in rows]
    print(f"answer in reply: {statistics.mean(found for _, found, _ in rows):.3f} over {len(rows)} questions; "
          f"reply bytes median {statistics.median(sizes):.0f}, max {max(sizes)}")
    for tag, values in sorted(by_tag.items()):
        print(f"  {tag}: {statistics.mean(values):.3f} (n={len(values)})")
    if args.misses:
        for q, found, _ in rows:
            if not found:
                print(f"  miss {q.get('id')}: {q['query']!r} -> {q['answer'][:60]!r}")


if __name__ == "__main__":
    main()

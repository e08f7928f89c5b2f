"""The same search over the same index gives the same reply in every server process.

Python salts string hashes per process (PYTHONHASHSEED), so a set of query words is iterated in another
order in each one; a score summed over such a set in float arithmetic then differs in its last bits, and
ties between snippet windows or hits were broken one way in one process and the other way in the next
(the retrieval harness saw a reply lose its answer between two runs of the same code and index).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "bench" / "retrieval" / "corpus"
QUESTIONS = REPO / "bench" / "retrieval" / "questions.jsonl"

SEARCH_ALL = r"""
import json, sys
from pathlib import Path
import anyio
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

async def main(db_path, project, queries):
    db = Database.open(Path(db_path))
    try:
        kb = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine, project=project),
                              project_dir=Path(project), search_budget=6144)
        if sys.argv[4] == "index":
            await kb.index(path=project, session_id="index")
            queries = []
        # A session of its own per process and question: nothing is "already sent".
        replies = [(await kb.search([q], session_id=f"{sys.argv[4]}-{n}", limit=2)).text
                   for n, q in enumerate(queries)]
    finally:
        db.close()
    print(json.dumps(replies))

anyio.run(main, sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
"""


def replies(db: Path, project: Path, queries: list[str], seed: str, step: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SEARCH_ALL, str(db), str(project), json.dumps(queries), step],
                          capture_output=True, text=True, timeout=240, check=False,
                          env={**os.environ, "PYTHONHASHSEED": seed})
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_a_search_replies_the_same_in_processes_with_different_string_hashes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for doc in sorted(CORPUS.glob("*.md"))[:25]:
        (project / doc.name).write_bytes(doc.read_bytes())
    queries = [json.loads(line)["query"] for line in QUESTIONS.read_text().splitlines()[:60]]
    db = tmp_path / "kb.sqlite3"
    replies(db, project, [], "0", "index")
    first = replies(db, project, queries, "1", "seed-1")
    for seed in ("2", "3", "4"):
        again = replies(db, project, queries, seed, f"seed-{seed}")
        differing = [q for q, a, b in zip(queries, first, again, strict=True) if a != b]
        assert not differing, f"PYTHONHASHSEED={seed} changed the replies to {differing}"

"""Several server processes share one database: WAL and a busy timeout, nothing lost, no lock errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

WRITER = """
import sys
from pathlib import Path
from context_kernel.knowledge.model import Chunk
from context_kernel.knowledge.search import search
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

db = Database.open(Path(sys.argv[1]))
repo = KnowledgeRepository(db.engine)
name = sys.argv[2]
for i in range(150):
    chunks = [Chunk(title=f"{name} {i} part {j}", content=f"{name} wrote document {i} section {j}", kind="prose")
              for j in range(3)]
    repo.replace_source(label=f"{name}-{i}", kind="text", chunks=chunks)
    search(repo, f"{name} document {i}")
db.close()
print("ok")
"""


def test_two_processes_write_and_search_one_database_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    Database.open(path).close()  # migrate once up front, as the first server would
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for name in ("alpha", "beta")]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0 and out.strip() == "ok", err
    db = Database.open(path)
    try:
        repo = KnowledgeRepository(db.engine)
        labels = {s.label for s in repo.sources()}
        assert labels == {f"{n}-{i}" for n in ("alpha", "beta") for i in range(150)}
        assert sum(s.chunk_count for s in repo.sources()) == 900
        assert repo.match("porter", '"beta" AND "149"', limit=10)
    finally:
        db.close()

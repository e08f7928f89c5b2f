"""Writes tests/golden/data-schema-8.sqlite3: a data dir's database as the release before knowledge
was scoped to projects (schema version 8) wrote it, for the migration test (test_project_scope.py).

Run with that release's package first on the path (a checkout of it: PYTHONPATH=<checkout>/server) from
an empty directory; it serves two projects under /tmp/ck-release-fixture through the SDK client, then adds
one source of unknown project, as a release before `project_dir` was filled would have left.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path("/tmp/ck-release-fixture")
OUT = Path(__file__).with_name("data-schema-8.sqlite3")


async def serve(home: Path, project: Path, calls: list[tuple[str, dict[str, object]]]) -> None:
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(home), "CONTEXT_KERNEL_SEMANTIC": "0"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "context_kernel", "serve", "--project",
                                                                 str(project)], env=env)
    async with Client(params) as client:
        for name, args in calls:
            result = await client.call_tool(name, args)
            assert not result.is_error, result


async def main() -> None:
    shutil.rmtree(ROOT, ignore_errors=True)
    (ROOT / "alpha").mkdir(parents=True)
    (ROOT / "beta").mkdir()
    (ROOT / "beta" / "notes.md").write_text("# Deploy notes\n\nThe staging database credentials rotate weekly; "
                                            "ask the ops channel.\n")
    (ROOT / "alpha" / "alpha.md").write_text("# Alpha notes\n\nThe alpha pipeline reads parquet files nightly.\n")
    home = ROOT / "home"
    beta_text = {"content": "# Beta text\n\nzanzibar ledger", "source": "beta-text"}
    await serve(home, ROOT / "beta", [("ctx_index", {"path": "notes.md"}), ("ctx_index", beta_text)])
    await serve(home, ROOT / "alpha", [("ctx_index", {"path": "alpha.md"})])
    db = sqlite3.connect(home / "context-kernel.sqlite3")
    db.execute("INSERT INTO sources (label, kind, bytes, chunk_count, code_chunks, indexed_at) "
               "VALUES ('legacy-notes', 'text', 26, 1, 0, 1.0)")
    sid = db.execute("SELECT max(id) FROM sources").fetchone()[0]
    db.execute("INSERT INTO chunks (source_id, seq, title, content, kind) "
               "VALUES (?, 0, 'Legacy', 'legacy orphan walrus note', 'prose')", (sid,))
    db.execute("INSERT INTO chunks_porter(rowid, title, content) SELECT id, title, content FROM chunks "
               "WHERE source_id = ?", (sid,))
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    db.close()
    shutil.copyfile(home / "context-kernel.sqlite3", OUT)


if __name__ == "__main__":
    anyio.run(main)

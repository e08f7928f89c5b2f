"""How many indexed sections still wait for the server's background work (ours), read from its database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

EMBEDDED_KINDS = ("text", "file", "fetch", "batch")


def pending_sections(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        marks = ",".join("?" * len(EMBEDDED_KINDS))
        return int(con.execute(
            "SELECT count(*) FROM chunks c JOIN sources s ON s.id = c.source_id "
            f"WHERE s.kind IN ({marks}) AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)",
            EMBEDDED_KINDS).fetchone()[0])
    finally:
        con.close()

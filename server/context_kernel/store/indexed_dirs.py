"""The directories ctx_index walked in a project, and how, so that a search can pick up files added since
(knowledge/new_files.py)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, text

from .db import write


@dataclass(frozen=True)
class IndexedDir:
    root: str
    source: str
    """The label the files went under (`source/relative path`), '' for project-relative labels."""
    options: dict[str, Any]
    """walk()'s include, exclude, max_depth, max_files, respect_gitignore."""
    session_id: str | None


class IndexedDirRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def remember(self, project_dir: str, root: str, source: str, options: dict[str, Any],
                 session_id: str | None) -> None:
        with write(self.engine) as conn:
            conn.execute(text(
                "INSERT INTO indexed_dirs (project_dir, root, source, options, session_id, indexed_at) "
                "VALUES (:p, :r, :s, :o, :sid, :t) ON CONFLICT (project_dir, root, source) DO UPDATE SET "
                "options = excluded.options, session_id = excluded.session_id, indexed_at = excluded.indexed_at"),
                {"p": project_dir, "r": root, "s": source, "o": json.dumps(options), "sid": session_id,
                 "t": time.time()})

    def of_project(self, project_dir: str) -> list[IndexedDir]:
        with self.engine.connect() as conn:
            rows = conn.execute(text("SELECT root, source, options, session_id FROM indexed_dirs "
                                     "WHERE project_dir = :p ORDER BY root, source"), {"p": project_dir}).all()
        return [IndexedDir(r.root, r.source, json.loads(r.options), r.session_id) for r in rows]

"""The chunk vectors table (migration 007): what the background embedder writes and search loads.

Vectors are stored as bytes (float16); this module does not know what is in them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, TextClause, bindparam, create_engine, text

from .db import write


@dataclass(frozen=True)
class PendingChunk:
    id: int
    title: str
    content: str


@dataclass(frozen=True)
class VectorRow:
    id: int
    chunk_id: int
    start: int
    stop: int
    vec: bytes


@dataclass(frozen=True)
class Coverage:
    chunks: int
    embedded: int
    pending_bytes: int
    """Bytes of this source's chunks, and of every chunk queued before them, still to embed."""


def _unembedded(columns: str, tail: str = "") -> TextClause:
    """A query over the chunks above `:after` of the embedded `:kinds` that have no vector of model `:m`."""
    return text(
        f"SELECT {columns} FROM chunks c JOIN sources s ON s.id = c.source_id "
        "WHERE c.id > :after AND s.kind IN :kinds AND NOT EXISTS "
        f"(SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = :m){tail}"
    ).bindparams(bindparam("kinds", expanding=True))


class VectorRepository:
    """Synchronous repository; callers go through `Database.run` / `run_sync`."""

    def __init__(self, engine: Engine, *, kinds: Sequence[str], model: str) -> None:
        self._engine = engine
        self._kinds = list(kinds)
        self.model = model

    def pending(self, after: int, limit: int) -> list[PendingChunk]:
        """Chunks of embedded kinds, with id > after, that have no vector of this model yet, oldest first."""
        stmt = _unembedded("c.id, c.title, c.content", " ORDER BY c.id LIMIT :n")
        with self._engine.connect() as conn:
            rows = conn.execute(stmt, {"after": after, "kinds": self._kinds, "m": self.model, "n": limit})
            return [PendingChunk(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def add(self, rows: Sequence[tuple[int, int, int, bytes]]) -> int:
        """(chunk id, start, stop, vector bytes) rows, for chunks that still exist; returns how many went in."""
        if not rows:
            return 0
        with write(self._engine) as conn:
            # Chunks re-indexed while they were being embedded are gone; chunks another server
            # sharing this database embedded meanwhile already have their vectors: skip both.
            open_ids = {int(r[0]) for r in conn.execute(text(
                "SELECT c.id FROM chunks c WHERE c.id IN :ids AND NOT EXISTS "
                "(SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = :m)"
            ).bindparams(bindparam("ids", expanding=True)), {"ids": list({r[0] for r in rows}), "m": self.model})}
            keep = [r for r in rows if r[0] in open_ids]
            if keep:
                conn.execute(text("INSERT INTO chunk_vectors (chunk_id, start, stop, model, vec) "
                                  "VALUES (:c, :a, :b, :m, :v)"),
                             [{"c": c, "a": a, "b": b, "m": self.model, "v": v} for c, a, b, v in keep])
        return len(keep)

    def first_unembedded(self, after: int) -> tuple[int | None, int]:
        """(the first chunk above `after` of an embedded kind that has no vector of this model or None,
        the highest chunk id now): a search asks whether every section it could rank has its vector."""
        stmt = _unembedded("min(c.id)")
        with self._engine.connect() as conn:
            top = int(conn.execute(text("SELECT coalesce(max(id), 0) FROM chunks")).scalar() or 0)
            first = conn.execute(stmt, {"after": after, "kinds": self._kinds, "m": self.model}).scalar()
        return (int(first) if first is not None else None), top

    def backlog(self, after: int = 0) -> tuple[int, int]:
        """(sections of embedded kinds without vectors, about their bytes): what ctx_stats and doctor show.

        Chunks with id <= after are known to have theirs (the embedder's cursor); bytes are estimated from
        each source's size over its chunk count, as in `coverage` (reading the text made a poll of a
        50 MB index cost a second of the store's thread)."""
        stmt = _unembedded("count(*), coalesce(sum(s.bytes * 1.0 / max(s.chunk_count, 1)), 0)")
        with self._engine.connect() as conn:
            count, size = conn.execute(stmt, {"after": after, "kinds": self._kinds, "m": self.model}).one()
        return int(count), int(size)

    def drop_other_models(self) -> int:
        """Vectors another model made cannot be compared with this one's: remove them."""
        with write(self._engine) as conn:
            gone = int(conn.execute(text("DELETE FROM chunk_vectors WHERE model != :m"), {"m": self.model}).rowcount)
            if gone:
                conn.execute(text("UPDATE vector_state SET deletions = deletions + 1"))
        return gone

    def state(self) -> tuple[int, int]:
        """(highest vector row id, deletions counter): what a loaded copy compares itself with."""
        with self._engine.connect() as conn:
            row = conn.execute(text("SELECT (SELECT coalesce(max(id), 0) FROM chunk_vectors), "
                                    "(SELECT deletions FROM vector_state)")).one()
        return int(row[0]), int(row[1])

    def rows_after(self, after: int, limit: int) -> list[VectorRow]:
        with self._engine.connect() as conn:
            rows = conn.execute(text("SELECT id, chunk_id, start, stop, vec FROM chunk_vectors "
                                     "WHERE id > :after AND model = :m ORDER BY id LIMIT :n"),
                                {"after": after, "m": self.model, "n": limit})
            return [VectorRow(int(r[0]), int(r[1]), int(r[2]), int(r[3]), bytes(r[4])) for r in rows]

    def ids_upto(self, upto: int) -> list[int]:
        """Every vector row id <= upto still present (after deletions)."""
        with self._engine.connect() as conn:
            return [int(r[0]) for r in conn.execute(text("SELECT id FROM chunk_vectors WHERE id <= :u AND model = :m"),
                                                    {"u": upto, "m": self.model})]

    def chunk_ids(self, source: str | None, kind: str | None) -> list[int]:
        """Ids of the chunks a search filter lets through (source label contains `source`, chunk kind)."""
        from .knowledge import like_escape

        sql = "SELECT c.id FROM chunks c JOIN sources s ON s.id = c.source_id WHERE 1 = 1"
        params: dict[str, object] = {}
        if source:
            sql += " AND s.label LIKE :src ESCAPE '\\'"
            params["src"] = f"%{like_escape(source)}%"
        if kind:
            sql += " AND c.kind = :kind"
            params["kind"] = kind
        with self._engine.connect() as conn:
            return [int(r[0]) for r in conn.execute(text(sql), params)]

    def coverage(self, labels: Sequence[str], after: int = 0) -> Coverage:
        """How far the embedder is with these sources (chunks of other kinds do not count); chunks with
        id <= after are known to be done (the embedder's cursor), which keeps the backlog query short."""
        if not labels:
            return Coverage(0, 0, 0)
        stmt = text(
            "SELECT count(*), sum(EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = :m)), "
            "max(c.id) FROM chunks c JOIN sources s ON s.id = c.source_id "
            "WHERE s.label IN :labels AND s.kind IN :kinds"
        ).bindparams(bindparam("labels", expanding=True), bindparam("kinds", expanding=True))
        # Bytes estimated from each source's size over its chunk count: reading the chunks' text
        # to measure it made every ctx_index call scan its whole backlog.
        backlog = text(
            "SELECT coalesce(sum(s.bytes * 1.0 / max(s.chunk_count, 1)), 0) "
            "FROM chunks c JOIN sources s ON s.id = c.source_id "
            "WHERE c.id > :after AND c.id <= :upto AND s.kind IN :kinds AND NOT EXISTS "
            "(SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = :m)"
        ).bindparams(bindparam("kinds", expanding=True))
        with self._engine.connect() as conn:
            params = {"m": self.model, "labels": list(labels), "kinds": self._kinds}
            total, done, upto = conn.execute(stmt, params).one()
            if not total:
                return Coverage(0, 0, 0)
            pending = conn.execute(backlog, {**params, "after": after, "upto": upto}).scalar()
        return Coverage(int(total), int(done or 0), int(pending or 0))


def read_backlog(db_path: Path, *, kinds: Sequence[str], model: str) -> tuple[int, int]:
    """`VectorRepository.backlog` of a database opened read-only, for doctor (which must not migrate it)."""
    engine = create_engine(f"sqlite:///file:{db_path}?mode=ro&uri=true")
    try:
        return VectorRepository(engine, kinds=kinds, model=model).backlog()
    finally:
        engine.dispose()

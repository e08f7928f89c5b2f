"""The knowledge base tables: sources, chunks, their two FTS5 indexes, the vocabulary, what was sent.

Callers build FTS5 expressions with `fts_quote` only: user text never reaches MATCH unquoted.

Knowledge belongs to a project: a repository made for one (`project=`) reads and replaces only that
project's sources, so one data dir serves many projects without a search in one returning another's
notes. `everywhere()` is the same tables unscoped (`ctx_search(scope="all")`, hook memory, retention).
What stays shared is vocabulary statistics (how many sections hold a stem: ranking weights and
candidates for spelling correction), never a section's text or label.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, bindparam, text

from .db import write
from .executions import delete_session_records
from .sources import SourceRow, SourceSpec, delete_older_than, delete_sources_where, name_words, owned, write_source

# The sources' rows, specs and deletion live in sources.py; callers keep importing them from here.
__all__ = ["MAX_CACHED_STEMS", "ChunkRow", "KnowledgeRepository", "SourceRow", "SourceSpec", "delete_older_than",
           "delete_sources_where", "fts_quote", "like_escape", "name_words"]


@dataclass(frozen=True)
class ChunkRow:
    id: int
    source_id: int
    label: str
    seq: int
    title: str
    content: str
    kind: str
    indexed_at: float
    project_dir: str | None = None


def fts_quote(term: str) -> str:
    """One FTS5 string token: double quotes doubled, so no operator or syntax survives."""
    return '"' + term.replace('"', '""') + '"'


def like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_PORTER_STRUCTURE = text("SELECT block FROM chunks_porter_data WHERE id = 10")
_SOURCES_STATE = text("SELECT max(id), count(*) FROM sources")
_FILE_SOURCES = "SELECT * FROM sources WHERE kind = 'file' AND origin IS NOT NULL"
_STEM_COUNTS = text("SELECT term, doc FROM chunks_vocab WHERE term IN :t").bindparams(bindparam("t", expanding=True))
MAX_CACHED_STEMS = 50_000
_STEMS_FROM = text("SELECT term, doc FROM chunks_vocab WHERE term >= :lo AND term < :hi")


class KnowledgeRepository:
    """Synchronous repository; async callers go through `Database.run`."""

    def __init__(self, engine: Engine, *, project: str | None = None) -> None:
        self._engine = engine
        self.engine = engine
        self.project = project
        """The project whose sources this repository reads and replaces; None: every project's."""
        self._everywhere: KnowledgeRepository | None = self if project is None else None
        # The project's chunk ids when other projects share the tables (None: every chunk is the project's),
        # with the sources' state they were read at: the semantic side filters its nearest vectors by them.
        self._own_chunks: tuple[tuple[object, ...], frozenset[int] | None] | None = None
        # Indexed stems by first letter, then by length, with the porter index's version they were read
        # at (stems_near). Fetching a letter's stems is ~35 ms at 100,000 chunks; a typo asks for two.
        self._near: dict[str, tuple[bytes | None, dict[int, list[tuple[str, int]]]]] = {}
        self._files: tuple[tuple[object, ...], list[SourceRow]] | None = None
        self._df: tuple[bytes | None, dict[str, int]] = (None, {})
        self._names: tuple[tuple[object, ...], dict[str, list[int]]] | None = None

    def everywhere(self) -> KnowledgeRepository:
        """The same tables, every project's sources (labels then say whose they are)."""
        if self._everywhere is None:
            self._everywhere = KnowledgeRepository(self._engine)
        return self._everywhere

    def _scope(self, alias: str = "") -> tuple[str, dict[str, object]]:
        """The WHERE condition (and its bind) that keeps this repository's project only."""
        if self.project is None:
            return "1 = 1", {}
        return f"{alias + '.' if alias else ''}project_dir = :project", {"project": self.project}

    def replace_source(self, **spec: object) -> SourceRow:
        """Index chunks under a label, replacing whatever the label held before (see SourceSpec)."""
        return self.replace_sources([SourceSpec(**spec)])[0]  # type: ignore[arg-type]  # keywords checked by the dataclass

    def replace_sources(self, specs: Sequence[SourceSpec]) -> list[SourceRow]:
        """Several sources in one transaction: a directory indexes faster as one write."""
        with write(self._engine) as conn:
            return [write_source(conn, spec if self.project is None else owned(spec, self.project)) for spec in specs]

    def get_source(self, label: str) -> SourceRow | None:
        scope, params = self._scope()
        with self._engine.connect() as conn:
            row = conn.execute(text(f"SELECT * FROM sources WHERE label = :l AND {scope} ORDER BY id DESC"),
                               {"l": label, **params}).mappings().first()
        return SourceRow(**row) if row else None

    def sources(self, label_filter: str | None = None, kinds: Sequence[str] | None = None) -> list[SourceRow]:
        scope, params = self._scope()
        sql = f"SELECT * FROM sources WHERE {scope}"
        if label_filter:
            sql += " AND label LIKE :f ESCAPE '\\'"
            params["f"] = f"%{like_escape(label_filter)}%"
        stmt = text(sql)
        if kinds:
            stmt = text(sql + " AND kind IN :kinds").bindparams(bindparam("kinds", expanding=True))
            params["kinds"] = list(kinds)
        with self._engine.connect() as conn:
            return [SourceRow(**r) for r in conn.execute(stmt, params).mappings()]

    def file_sources(self, label_filter: str | None = None) -> list[SourceRow]:
        """Sources indexed from a file that is still named (the ones a search checks for changes).

        Kept between calls while the index is unchanged: with thousands of files, reading their rows
        was ~70 ms of every search.
        """
        with self._engine.connect() as conn:
            # The index's version, the newest source id and the number of sources: every indexing inserts
            # a new source row and every drop removes one, an empty file's too, which leaves the full-text
            # index as it was.
            version = (conn.execute(_PORTER_STRUCTURE).scalar(), *conn.execute(_SOURCES_STATE).one())
            if self._files is None or self._files[0] != version:
                scope, params = self._scope()
                rows = [SourceRow(**r) for r in conn.execute(text(f"{_FILE_SOURCES} AND {scope}"), params).mappings()]
                self._files = (version, rows)
        rows = self._files[1]
        if label_filter:
            low = label_filter.lower()
            rows = [r for r in rows if low in r.label.lower()]  # as LIKE '%filter%' in `sources`
        return list(rows)

    def delete_sources(self, labels: Sequence[str]) -> int:
        scope, params = self._scope()
        with write(self._engine) as conn:
            return sum(delete_sources_where(conn, f"label = :label AND {scope}", {"label": label, **params})
                       for label in labels)

    def own_chunk_ids(self) -> frozenset[int] | None:
        """This project's chunk ids, or None when every chunk is its own (or the repository is unscoped):
        what the nearest vectors are filtered by. Kept while the sources are unchanged."""
        if self.project is None:
            return None
        with self._engine.connect() as conn:
            version = tuple(conn.execute(_SOURCES_STATE).one())
            if self._own_chunks is None or self._own_chunks[0] != version:
                others = conn.execute(text("SELECT 1 FROM sources WHERE project_dir IS NOT :project LIMIT 1"),
                                      {"project": self.project}).first()
                ids = None if others is None else frozenset(int(r[0]) for r in conn.execute(text(
                    "SELECT c.id FROM chunks c JOIN sources s ON s.id = c.source_id WHERE s.project_dir = :project"),
                    {"project": self.project}))
                self._own_chunks = (version, ids)
        return self._own_chunks[1]

    def match(self, table: str, expression: str, *, limit: int, source: str | None = None,
              kind: str | None = None, source_ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """(chunk id, bm25 score — lower is better) for an FTS5 expression built with fts_quote.

        A read only: the trigram index may lag what was just indexed (`catch_up_trigram` completes it).
        `source_ids`: only chunks of these sources.
        """
        fts = {"porter": "chunks_porter", "trigram": "chunks_trigram"}[table]
        params: dict[str, object] = {"q": expression, "limit": limit}
        where = [f"{fts} MATCH :q"]
        if source_ids is not None:
            where.append("c.source_id IN (" + ",".join(str(int(i)) for i in source_ids) + ")")
        sql = (f"SELECT c.id, bm25({fts}, 5.0, 1.0) AS score FROM {fts} JOIN chunks c ON c.id = {fts}.rowid "
               + _filtered(where, params, source, kind, self.project) + " ORDER BY score LIMIT :limit")
        with self._engine.connect() as conn:
            return [(int(r[0]), float(r[1])) for r in conn.execute(text(sql), params)]

    def chunk_span(self) -> int:
        """The highest chunk id: about how many chunks there are (ids only grow), for words' rarity."""
        with self._engine.connect() as conn:
            return int(conn.execute(text("SELECT coalesce(max(id), 0) FROM chunks")).scalar() or 0)

    def source_names(self) -> dict[str, list[int]]:
        """Each word of the sources' names (`1/sort.1.txt` → `sort`, `std/vec/struct.Vec.html` → `struct`,
        `vec`) → the ids of the sources it names; kept while the sources are unchanged."""
        with self._engine.connect() as conn:
            version = tuple(conn.execute(_SOURCES_STATE).one())
            if self._names is None or self._names[0] != version:
                names: dict[str, list[int]] = {}
                scope, params = self._scope()
                for sid, label in conn.execute(text(f"SELECT id, label FROM sources WHERE {scope}"), params):
                    for word in name_words(str(label)):
                        names.setdefault(word, []).append(int(sid))
                self._names = (version, names)
        return self._names[1]

    def trigram_backlog(self) -> int:
        """How many chunks are not in the trigram index yet (0 almost always: two rowid lookups)."""
        with self._engine.connect() as conn:
            row = conn.execute(text(
                "SELECT (SELECT coalesce(max(id), 0) FROM chunks) - (SELECT upto FROM trigram_state)")).scalar()
        return max(0, int(row or 0))

    def catch_up_trigram(self) -> int:
        """Put every chunk the trigram index lacks into it, in one statement; returns how many."""
        if not self.trigram_backlog():
            return 0
        with write(self._engine) as conn:
            added = conn.execute(text(
                "INSERT INTO chunks_trigram(rowid, title, content) SELECT id, title, content FROM chunks "
                "WHERE id > (SELECT upto FROM trigram_state)")).rowcount
            conn.execute(text(
                "UPDATE trigram_state SET upto = max(upto, (SELECT coalesce(max(id), 0) FROM chunks))"))
        return int(added or 0)

    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        # The project's condition here too: whatever found these ids (a nearest vector, an old list),
        # another project's section never comes back.
        scope, params = self._scope("s")
        stmt = text(f"{_CHUNK_ROWS} WHERE c.id IN :ids AND {scope}").bindparams(bindparam("ids", expanding=True))
        with self._engine.connect() as conn:
            return {int(r["id"]): ChunkRow(**r) for r in conn.execute(stmt, {"ids": list(ids), **params}).mappings()}

    def source_chunks(self, label: str) -> list[ChunkRow]:
        scope, params = self._scope("s")
        with self._engine.connect() as conn:
            rows = conn.execute(text(f"{_CHUNK_ROWS} WHERE s.label = :l AND {scope} ORDER BY s.id, c.seq"),
                                {"l": label, **params}).mappings()
            return [ChunkRow(**r) for r in rows]

    def trigram_matches_over(self, expression: str, cap: int) -> bool:
        """Whether more than `cap` chunks match a trigram expression: an unranked scan that stops at cap + 1
        (ranking every match is what makes an unselective expression cost hundreds of ms at 100k chunks)."""
        with self._engine.connect() as conn:
            found = conn.execute(text(
                "SELECT count(*) FROM (SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH :q LIMIT :n)"),
                {"q": expression, "n": cap + 1}).scalar()
        return int(found or 0) > cap

    def holds_text(self, expression: str, needle: str, *, scan: int, source: str | None = None,
                   kind: str | None = None) -> bool:
        """Whether one of the first `scan` chunks matching a trigram expression holds `needle` (ASCII,
        lower-case) in its title or content; the check runs in SQLite and stops at the first."""
        params: dict[str, object] = {"q": expression, "scan": scan, "needle": needle}
        sql = ("SELECT 1 FROM (SELECT rowid AS id FROM chunks_trigram WHERE chunks_trigram MATCH :q LIMIT :scan) m "
               "JOIN chunks c ON c.id = m.id "
               + _filtered(["instr(lower(c.title || char(10) || c.content), :needle) > 0"], params, source, kind,
                           self.project)
               + " LIMIT 1")
        with self._engine.connect() as conn:
            return conn.execute(text(sql), params).first() is not None

    def stems_near(self, first: str, min_len: int, max_len: int) -> list[tuple[str, int]]:
        """Indexed stems starting with `first` whose length is in range: candidates for fuzzy correction."""
        with self._engine.connect() as conn:
            # FTS5's structure record (rowid 10 of the %_data table) changes with every write to the
            # index, by this process or any other: a version that costs one primary-key read.
            version = conn.execute(_PORTER_STRUCTURE).scalar()
            cached = self._near.get(first)
            if cached is None or cached[0] != version:
                by_length: dict[int, list[tuple[str, int]]] = {}
                for term, doc in conn.execute(_STEMS_FROM, {"lo": first, "hi": first + "\U0010ffff"}):
                    by_length.setdefault(len(term), []).append((term, int(doc)))
                cached = self._near[first] = (version, by_length)
        return [row for n in range(min_len, max_len + 1) for row in cached[1].get(n, ())]

    def stem_frequencies(self, stems: Sequence[str]) -> dict[str, int]:
        """Stem → number of chunks holding it (stems no chunk holds are left out).

        FTS5 counts a term's documents by reading its whole posting list (~0.5 ms for a common word at
        100,000 chunks), so counts are kept while the index is unchanged, absent stems too.
        """
        if not stems:
            return {}
        with self._engine.connect() as conn:
            version = conn.execute(_PORTER_STRUCTURE).scalar()
            if self._df[0] != version:
                self._df = (version, {})
            known = self._df[1]
            wanted = [s for s in dict.fromkeys(stems) if s not in known]
            if wanted:
                found = {r[0]: int(r[1]) for r in conn.execute(_STEM_COUNTS, {"t": wanted})}
                if len(known) + len(wanted) > MAX_CACHED_STEMS:
                    known.clear()  # respelling asks for hundreds of neighbours a query: bound the memory
                known.update({s: found.get(s, 0) for s in wanted})
        return {s: known[s] for s in stems if known.get(s)}

    def sent(self, session_id: str, chunk_ids: Sequence[int], since: float = 0.0) -> dict[int, int]:
        """Chunk id → the search call number in which this session was sent it, after `since`."""
        if not chunk_ids:
            return {}
        stmt = text("SELECT chunk_id, call_no FROM sent_chunks WHERE session_id = :s AND chunk_id IN :ids "
                    "AND sent_at > :since").bindparams(bindparam("ids", expanding=True))
        with self._engine.connect() as conn:
            rows = conn.execute(stmt, {"s": session_id, "ids": list(chunk_ids), "since": since})
            return {int(r[0]): int(r[1]) for r in rows}

    def sent_twins(self, session_id: str, chunks: Sequence[tuple[int, str]], since: float = 0.0
                   ) -> dict[int, tuple[int, str]]:
        """Of `chunks` (id, content) not sent themselves: those whose very text this session was sent after `since`
        under another chunk (the same file indexed under a second label), id → (search call, that label)."""
        if not chunks:
            return {}
        by_text: dict[str, list[int]] = {}
        for chunk_id, content in chunks:
            by_text.setdefault(content, []).append(chunk_id)
        stmt = text("SELECT c.content, sc.call_no, s.label FROM sent_chunks sc JOIN chunks c ON c.id = sc.chunk_id "
                    "JOIN sources s ON s.id = c.source_id WHERE sc.session_id = :s AND sc.sent_at > :since "
                    "AND c.content IN :texts ORDER BY sc.call_no").bindparams(bindparam("texts", expanding=True))
        with self._engine.connect() as conn:
            rows = conn.execute(stmt, {"s": session_id, "since": since, "texts": list(by_text)}).all()
        twins: dict[int, tuple[int, str]] = {}
        for content, call_no, label in rows:
            for chunk_id in by_text.get(content, []):
                twins.setdefault(chunk_id, (int(call_no), str(label)))
        return twins

    def mark_sent(self, session_id: str, chunk_ids: Sequence[int], call_no: int) -> None:
        if not chunk_ids:
            return
        now = time.time()
        with write(self._engine) as conn:
            conn.execute(text(
                "INSERT INTO sent_chunks (session_id, chunk_id, call_no, sent_at) VALUES (:s, :c, :n, :t) "
                "ON CONFLICT (session_id, chunk_id) DO UPDATE SET call_no = excluded.call_no, "
                "sent_at = excluded.sent_at"), [{"s": session_id, "c": c, "n": call_no, "t": now} for c in chunk_ids])

    def session_project(self, session_id: str) -> str | None:
        """The project a server session worked in (None: no such session recorded)."""
        with self._engine.connect() as conn:
            return conn.execute(text("SELECT project_dir FROM sessions WHERE id = :s"), {"s": session_id}).scalar()

    def purge(self, *, session_id: str | None = None, project_dir: str | None = None) -> dict[str, int]:
        """Delete indexed sources and execution records of a session, or of a whole project."""
        with write(self._engine) as conn:
            params: dict[str, object]
            if session_id is not None:
                scope, params = self._scope()
                where, params = f"session_id = :v AND {scope}", {"v": session_id, **params}
                sessions = [session_id]
            else:
                where, params = "project_dir = :v", {"v": project_dir}
                sessions = [r[0] for r in conn.execute(text("SELECT id FROM sessions WHERE project_dir = :v"), params)]
            sources = delete_sources_where(conn, where, params)
            executions = delete_session_records(conn, sessions)
            if project_dir is not None:  # the directories a search would walk again for new files
                conn.execute(text("DELETE FROM indexed_dirs WHERE project_dir = :v"), {"v": project_dir})
        return {"sources": sources, "executions": executions, "sessions": len(sessions)}


def _filtered(where: list[str], params: dict[str, object], source: str | None, kind: str | None,
              project: str | None = None) -> str:
    """The rest of a query over `chunks c`: the join a source or project filter needs, then the WHERE
    clause; fills `params` with the filters' values."""
    join = ""
    if source or project is not None:
        join = "JOIN sources s ON s.id = c.source_id "
    if source:
        where = [*where, "s.label LIKE :src ESCAPE '\\'"]
        params["src"] = f"%{like_escape(source)}%"
    if project is not None:
        where = [*where, "s.project_dir = :project"]
        params["project"] = project
    if kind:
        where = [*where, "c.kind = :kind"]
        params["kind"] = kind
    return join + "WHERE " + " AND ".join(where)


_CHUNK_ROWS = ("SELECT c.id, c.source_id, s.label, c.seq, c.title, c.content, c.kind, s.indexed_at, s.project_dir "
               "FROM chunks c JOIN sources s ON s.id = c.source_id")

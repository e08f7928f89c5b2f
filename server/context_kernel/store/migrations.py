"""Numbered schema migrations. Each runs once, in order, inside the caller's transaction.

Add a migration by appending a function to MIGRATIONS; never edit one that has shipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Connection, text

from ..errors import StoreError


def _m001_executions(conn: Connection) -> None:
    conn.execute(text("""
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            client TEXT,
            transport TEXT,
            project_dir TEXT,
            started_at REAL NOT NULL,
            last_seen_at REAL NOT NULL
        )"""))
    # One row per tool call that ran (or was refused before running) code. Written `pending`
    # before the code runs, completed after, so a killed server still leaves the trail.
    conn.execute(text("""
        CREATE TABLE executions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            tool TEXT NOT NULL,
            language TEXT,
            kernel_name TEXT,
            kernel_instance TEXT,
            fresh INTEGER NOT NULL DEFAULT 0,
            background INTEGER NOT NULL DEFAULT 0,
            code TEXT NOT NULL,
            intent TEXT,
            file_path TEXT,
            file_hash TEXT,
            status TEXT NOT NULL,
            error_name TEXT,
            error_value TEXT,
            execution_count INTEGER,
            timeout_ms INTEGER,
            started_at REAL NOT NULL,
            ended_at REAL,
            duration_ms REAL,
            bytes_produced INTEGER NOT NULL DEFAULT 0,
            bytes_returned INTEGER NOT NULL DEFAULT 0,
            returned_text TEXT,
            returned_kind TEXT,
            note TEXT
        )"""))
    conn.execute(text("CREATE INDEX executions_session ON executions(session_id, id)"))
    # Every IOPub output as an nbformat v4 output (JSON). Consecutive stream text is coalesced
    # into rows of bounded size so a flood never has to be held in memory.
    conn.execute(text("""
        CREATE TABLE outputs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            execution_id INTEGER NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            output_type TEXT NOT NULL,
            name TEXT,
            size INTEGER NOT NULL,
            data TEXT NOT NULL
        )"""))
    conn.execute(text("CREATE INDEX outputs_execution ON outputs(execution_id, seq)"))


def _m002_knowledge(conn: Connection) -> None:
    # A source is one indexed thing (a text, a file, a fetched page, a cell's output, a batch);
    # re-indexing its label replaces its chunks.
    conn.execute(text("""
        CREATE TABLE sources (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            label TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            origin TEXT,
            content_hash TEXT,
            mtime REAL,
            bytes INTEGER NOT NULL DEFAULT 0,
            chunk_count INTEGER NOT NULL DEFAULT 0,
            code_chunks INTEGER NOT NULL DEFAULT 0,
            session_id TEXT,
            project_dir TEXT,
            indexed_at REAL NOT NULL
        )"""))
    conn.execute(text("""
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            kind TEXT NOT NULL
        )"""))
    conn.execute(text("CREATE INDEX chunks_source ON chunks(source_id, seq)"))
    # Two external-content FTS5 indexes over the same rows: porter for words and their stems,
    # trigram for substrings (`useEff` finds `useEffect`). The repository fills both in bulk after
    # inserting a source's chunks (an insert trigger interleaving the two indexes row by row is
    # 40 % slower); a delete trigger keeps them in step on removal.
    conn.execute(text(
        "CREATE VIRTUAL TABLE chunks_porter USING fts5(title, content, content='chunks', content_rowid='id', "
        "tokenize='porter unicode61 remove_diacritics 2')"))
    # detail=none: the trigram index is the costly one to build (about 3x the porter one), and
    # without positions it is half that. A substring longer than three characters is then
    # matched as "all of its trigrams" (a superset) and checked exactly by the reranker.
    conn.execute(text(
        "CREATE VIRTUAL TABLE chunks_trigram USING fts5(title, content, content='chunks', content_rowid='id', "
        "tokenize='trigram', detail=none)"))
    for fts in ("chunks_porter", "chunks_trigram"):
        # Fewer, larger merges: indexing one source per transaction otherwise spends its time merging.
        conn.execute(text(f"INSERT INTO {fts}({fts}, rank) VALUES ('automerge', 8)"))
    conn.execute(text("""
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_porter(chunks_porter, rowid, title, content)
                VALUES ('delete', old.id, old.title, old.content);
            INSERT INTO chunks_trigram(chunks_trigram, rowid, title, content)
                VALUES ('delete', old.id, old.title, old.content);
        END"""))
    # The indexed stems with their document counts: fuzzy correction compares a misspelt query
    # word's stem with these, and batch replies weigh distinctive terms by them. A view over the
    # porter index itself, so it costs nothing at indexing time.
    conn.execute(text("CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_porter, 'row')"))
    # What each client session has already been sent, so a chunk is never sent twice.
    conn.execute(text("""
        CREATE TABLE sent_chunks (
            session_id TEXT NOT NULL,
            chunk_id INTEGER NOT NULL,
            call_no INTEGER NOT NULL,
            sent_at REAL NOT NULL,
            PRIMARY KEY (session_id, chunk_id)
        ) WITHOUT ROWID"""))


def _m003_session_memory(conn: Connection) -> None:
    # What hooks recorded about a client session (files, tasks, decisions, errors...). The
    # session id is the client's (Claude Code's session_id, Cursor's conversation_id...), which
    # is not the MCP session id: hooks and the MCP connection are separate processes.
    conn.execute(text("""
        CREATE TABLE session_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            client TEXT,
            type TEXT NOT NULL,
            category TEXT NOT NULL,
            priority INTEGER NOT NULL,
            data TEXT NOT NULL,
            created_at REAL NOT NULL
        )"""))
    conn.execute(text("CREATE INDEX session_events_session ON session_events(session_id, id)"))
    # The snapshot taken at PreCompact, given back at SessionStart(compact|resume).
    conn.execute(text("""
        CREATE TABLE session_resume (
            session_id TEXT PRIMARY KEY,
            client TEXT,
            snapshot TEXT NOT NULL,
            event_count INTEGER NOT NULL,
            created_at REAL NOT NULL,
            consumed_at REAL
        )"""))
    # One row per MCP tool call, for ctx_stats: what the tool took in (produced, indexed) and
    # what it gave back to the agent. Executions keep their own, richer record.
    conn.execute(text("""
        CREATE TABLE tool_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            at REAL NOT NULL,
            duration_ms REAL NOT NULL,
            bytes_in INTEGER NOT NULL DEFAULT 0,
            bytes_indexed INTEGER NOT NULL DEFAULT 0,
            bytes_returned INTEGER NOT NULL DEFAULT 0,
            is_error INTEGER NOT NULL DEFAULT 0
        )"""))
    conn.execute(text("CREATE INDEX tool_calls_session ON tool_calls(session_id)"))


def _m004_deferred_trigram(conn: Connection) -> None:
    # The trigram index costs twice the rest of indexing together, so a new source goes into the
    # porter index at once and into the trigram index in a catch-up pass (right after, in the
    # background, or before the next trigram search). `upto`: every chunk with id <= upto is in
    # the trigram index. AUTOINCREMENT ids only grow, so the backlog is exactly `id > upto`.
    conn.execute(text("CREATE TABLE trigram_state (id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL)"))
    conn.execute(text("INSERT INTO trigram_state (id, upto) SELECT 1, coalesce(max(id), 0) FROM chunks"))
    # FTS5 'delete' of a row it never indexed corrupts an external-content index: delete from the
    # trigram index only what the catch-up has put there.
    conn.execute(text("DROP TRIGGER chunks_ad"))
    conn.execute(text("""
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_porter(chunks_porter, rowid, title, content)
                VALUES ('delete', old.id, old.title, old.content);
            INSERT INTO chunks_trigram(chunks_trigram, rowid, title, content)
                SELECT 'delete', old.id, old.title, old.content
                WHERE old.id <= (SELECT upto FROM trigram_state);
        END"""))


def _m005_event_projects(conn: Connection) -> None:
    # Which project a hook event belongs to (the hook resolves it), so ctx_purge(scope="project")
    # removes the project's session memory with the rest of its data.
    conn.execute(text("ALTER TABLE session_events ADD COLUMN project_dir TEXT"))
    conn.execute(text("CREATE INDEX session_events_project ON session_events(project_dir)"))


def _m006_execution_python(conn: Connection) -> None:
    # Which interpreter a python (or shell) cell ran with and the environment it belongs to
    # (kernels/interpreters.py decides them per project), so a record says which env ran it.
    conn.execute(text("ALTER TABLE executions ADD COLUMN python TEXT"))
    conn.execute(text("ALTER TABLE executions ADD COLUMN python_env TEXT"))


def _m007_source_flows(conn: Connection) -> None:
    # ctx_stats nets 'kept out' of what searches bring back (records/stats.py): each call's own kept-out
    # (0 when its reply carried all it took in; NULL on older rows, read as max(0, in - returned)),
    # and per call the bytes it indexed and the search hits it sent back, per source.
    conn.execute(text("ALTER TABLE tool_calls ADD COLUMN bytes_kept_out INTEGER"))
    conn.execute(text("""
        CREATE TABLE source_flows (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            source TEXT NOT NULL,
            bytes_in INTEGER NOT NULL DEFAULT 0,
            bytes_back INTEGER NOT NULL DEFAULT 0,
            at REAL NOT NULL
        )"""))
    conn.execute(text("CREATE INDEX source_flows_session ON source_flows(session_id)"))
    conn.execute(text("CREATE INDEX source_flows_source ON source_flows(source)"))


def _m008_chunk_vectors(conn: Connection) -> None:
    # Dense vectors of chunks (the semantic extra, semantic/): one row per window of a chunk, its
    # character span in the chunk, the model that made it, and the vector as float16 bytes (half
    # the size of float32; cosine moves by less than 1e-3). Written by the background embedder,
    # gone with their chunk.
    conn.execute(text("""
        CREATE TABLE chunk_vectors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            start INTEGER NOT NULL,
            stop INTEGER NOT NULL,
            model TEXT NOT NULL,
            vec BLOB NOT NULL
        )"""))
    conn.execute(text("CREATE INDEX chunk_vectors_chunk ON chunk_vectors(chunk_id)"))
    # Servers keep the vectors in memory and add new rows by id; `deletions` grows whenever rows
    # may have gone (a source removed), so they know to drop theirs too.
    conn.execute(text("CREATE TABLE vector_state (id INTEGER PRIMARY KEY CHECK (id = 1), deletions INTEGER NOT NULL)"))
    conn.execute(text("INSERT INTO vector_state (id, deletions) VALUES (1, 0)"))
    conn.execute(text("""
        CREATE TRIGGER sources_ad_vectors AFTER DELETE ON sources BEGIN
            UPDATE vector_state SET deletions = deletions + 1;
        END"""))


_SOURCE_COLUMNS = ("id, label, kind, origin, content_hash, mtime, bytes, chunk_count, code_chunks, session_id, "
                   "project_dir, indexed_at")


def _m009_labels_per_project(conn: Connection) -> None:
    # Knowledge belongs to the project it was indexed from: two projects may each hold a `notes.md`.
    # A label was unique across the data dir; now (project, label) is. SQLite cannot drop a UNIQUE
    # constraint, so the table is rebuilt (the documented 12-step way: foreign keys off, or dropping
    # the old table would delete every chunk through ON DELETE CASCADE) with the same ids, so chunks,
    # vectors and what sessions were sent keep pointing at their sources. Rows of unknown project (NULL)
    # stay; only `scope: "all"` shows them.
    conn.execute(text("""
        CREATE TABLE sources_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            label TEXT NOT NULL,
            kind TEXT NOT NULL,
            origin TEXT,
            content_hash TEXT,
            mtime REAL,
            bytes INTEGER NOT NULL DEFAULT 0,
            chunk_count INTEGER NOT NULL DEFAULT 0,
            code_chunks INTEGER NOT NULL DEFAULT 0,
            session_id TEXT,
            project_dir TEXT,
            indexed_at REAL NOT NULL
        )"""))
    conn.execute(text(f"INSERT INTO sources_new ({_SOURCE_COLUMNS}) SELECT {_SOURCE_COLUMNS} FROM sources"))
    conn.execute(text("DROP TABLE sources"))
    conn.execute(text("ALTER TABLE sources_new RENAME TO sources"))
    conn.execute(text("CREATE UNIQUE INDEX sources_project_label ON sources(project_dir, label)"))
    conn.execute(text("CREATE INDEX sources_label ON sources(label)"))
    conn.execute(text("""
        CREATE TRIGGER sources_ad_vectors AFTER DELETE ON sources BEGIN
            UPDATE vector_state SET deletions = deletions + 1;
        END"""))
    broken = conn.execute(text("PRAGMA foreign_key_check")).fetchall()
    if broken:  # never expected: the ids were copied as they were; refuse rather than commit a broken store
        raise StoreError(f"upgrading the knowledge tables found {len(broken)} rows without their source; "
                         "nothing was changed", hint="run `context-kernel doctor` and keep a copy of the database")


def _m010_execution_files(conn: Connection) -> None:
    # The files a cell opened (kernels/file_access.py), as a JSON list of {path, mode, size, sha256}
    # (execution/provenance.py): the export names each cell's inputs and replay the ones that changed.
    conn.execute(text("ALTER TABLE executions ADD COLUMN files TEXT"))


def _m011_conversation(conn: Connection) -> None:
    # What a search, fetch, index or batch call was asked and answered (records/conversation.py: capped,
    # redacted), so a session's export shows what the agent read between its cells.
    conn.execute(text("ALTER TABLE tool_calls ADD COLUMN arguments TEXT"))
    conn.execute(text("ALTER TABLE tool_calls ADD COLUMN reply TEXT"))


def _m012_language_info(conn: Connection) -> None:
    # The kernel's language_info, on the first execution recorded on each kernel instance: exported notebooks
    # carry it whole, so JupyterLab does not rewrite it (and mark the notebook modified) when it opens them.
    conn.execute(text("ALTER TABLE executions ADD COLUMN language_info TEXT"))


def _m013_transcripts(conn: Connection) -> None:
    # Where a client session's transcript is (hooks report `transcript_path`): an export interleaves the user's
    # prompts and the agent's own words with the cells they led to (notebooks/narration.py).
    conn.execute(text(
        "CREATE TABLE transcripts (session_id TEXT NOT NULL, client TEXT, project_dir TEXT, path TEXT NOT NULL, "
        "first_seen REAL NOT NULL, last_seen REAL NOT NULL, PRIMARY KEY (session_id, path))"))
    conn.execute(text("CREATE INDEX transcripts_project ON transcripts (project_dir)"))


def _m014_indexed_dirs(conn: Connection) -> None:
    # The directories ctx_index walked, with how (source label, include/exclude, depth, .gitignore): a search
    # walks them again now and then and indexes the files added since (knowledge/new_files.py).
    conn.execute(text(
        "CREATE TABLE indexed_dirs (project_dir TEXT NOT NULL, root TEXT NOT NULL, source TEXT NOT NULL DEFAULT '', "
        "options TEXT NOT NULL, session_id TEXT, indexed_at REAL NOT NULL, PRIMARY KEY (project_dir, root, source))"))


MIGRATIONS: list[Callable[[Connection], None]] = [
    _m001_executions, _m002_knowledge, _m003_session_memory, _m004_deferred_trigram, _m005_event_projects,
    _m006_execution_python, _m007_source_flows, _m008_chunk_vectors, _m009_labels_per_project,
    _m010_execution_files, _m011_conversation, _m012_language_info, _m013_transcripts,
    _m014_indexed_dirs,
]
# Steps that rebuild a table others reference: they run on a connection with foreign keys off
# (a pragma SQLite ignores inside a transaction, so the caller sets it before beginning).
WITHOUT_FOREIGN_KEYS = frozenset({_m009_labels_per_project})


def migrate(conn: Connection, *, foreign_keys_off: bool = False) -> int:
    """Apply the migrations this database has not seen; return the schema version reached.

    Stops before a step in WITHOUT_FOREIGN_KEYS unless `foreign_keys_off` says the connection has
    them off: the caller then calls again on such a connection (`db.open_engine`)."""
    conn.execute(text(
        "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at REAL)"))
    done = {row[0] for row in conn.execute(text("SELECT version FROM _migrations"))}
    for version, step in enumerate(MIGRATIONS, start=1):
        if version in done:
            continue
        if step in WITHOUT_FOREIGN_KEYS and not foreign_keys_off:
            return version - 1
        step(conn)
        conn.execute(
            text("INSERT INTO _migrations (version, name, applied_at) VALUES (:v, :n, :t)"),
            {"v": version, "n": step.__name__, "t": time.time()},
        )
    return len(MIGRATIONS)

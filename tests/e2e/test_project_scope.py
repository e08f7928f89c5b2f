"""Knowledge belongs to its project: two real servers on one data dir, two projects, at once.

The defect this reproduces: with one CONTEXT_KERNEL_HOME, `ctx_search` in project A returned B's
`notes.md` under a bare label, a search in A re-indexed B's changed files, and A indexing its own
`notes.md` replaced B's (labels were unique across the data dir).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import server_command, text_of

pytestmark = pytest.mark.anyio

GOLDEN_DB = Path(__file__).resolve().parents[1] / "golden" / "data-schema-8.sqlite3"
RELEASE_ROOT = "/tmp/ck-release-fixture"  # where tests/golden/make_release_db.py put its two projects
RELEASE_FILES = {  # what it indexed there
    "notes.md": "# Deploy notes\n\nThe staging database credentials rotate weekly; ask the ops channel.\n",
    "alpha.md": "# Alpha notes\n\nThe alpha pipeline reads parquet files nightly.\n",
}

B_NOTES = "# Deploy notes\n\nThe staging database credentials rotate weekly; ask the ops channel.\n"
A_NOTES = "# Alpha notes\n\nThe staging area for parquet exports is cleaned nightly.\n"
ROUNDS = 5


@asynccontextmanager
async def serving(home: Path, project: Path) -> AsyncIterator[Client]:
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(home), "CONTEXT_KERNEL_SEMANTIC": "0"}
    cmd = server_command("--project", str(project))
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
        yield client


async def call(client: Client, tool: str, args: dict[str, object]) -> str:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return text_of(result)


@pytest.fixture
def two_projects(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, a, b = tmp_path / "home", tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    (a / "notes.md").write_text(A_NOTES)
    (b / "notes.md").write_text(B_NOTES)
    return home, a, b


async def test_two_servers_on_one_data_dir_never_read_each_others_sources(
        two_projects: tuple[Path, Path, Path]) -> None:
    home, a, b = two_projects
    seen: dict[str, list[str]] = {"alpha": [], "beta": []}

    async def one(name: str, project: Path) -> None:
        async with serving(home, project) as client:
            # The same label in both projects: neither replaces the other's.
            await call(client, "ctx_index", {"path": "notes.md"})
            for _ in range(ROUNDS):  # the other server indexes and searches meanwhile
                seen[name].append(await call(client, "ctx_search", {"queries": ["staging database credentials"]}))
                await call(client, "ctx_index", {"path": "notes.md"})

    with anyio.fail_after(180):
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "alpha", a)
            tg.start_soon(one, "beta", b)
    assert len(seen["alpha"]) == len(seen["beta"]) == ROUNDS
    assert all("rotate weekly" not in reply for reply in seen["alpha"]), seen["alpha"][0]
    assert all("parquet exports" in reply for reply in seen["alpha"])
    assert all("rotate weekly" in reply and "parquet" not in reply for reply in seen["beta"]), seen["beta"][0]

    async with serving(home, a) as client:
        everywhere = await call(client, "ctx_search", {"queries": ["staging"], "scope": "all", "limit": 5})
    assert f"source: notes.md (project: {a})" in everywhere
    assert f"source: notes.md (project: {b})" in everywhere
    assert "rotate weekly" in everywhere and "parquet exports" in everywhere


async def test_freshness_and_purge_touch_only_the_current_project(two_projects: tuple[Path, Path, Path]) -> None:
    home, a, b = two_projects
    async with serving(home, b) as client:
        await call(client, "ctx_index", {"path": "notes.md"})
    async with serving(home, a) as client:
        await call(client, "ctx_index", {"path": "notes.md"})
    (b / "notes.md").write_text(B_NOTES.replace("weekly", "monthly"))
    os.utime(b / "notes.md", (1, 1))  # a different mtime even on a coarse clock

    async with serving(home, a) as client:
        reply = await call(client, "ctx_search", {"queries": ["staging credentials rotate"]})
        assert "re-indexed" not in reply and "monthly" not in reply and "weekly" not in reply
        purged = await call(client, "ctx_purge", {"confirm": True, "scope": "project"})
        assert "Purged 1 indexed sources" in purged
        assert "(no results)" in await call(client, "ctx_search", {"queries": ["parquet exports"]})

    async with serving(home, b) as client:
        reply = await call(client, "ctx_search", {"queries": ["staging credentials rotate"]})
    assert "re-indexed 1 changed file(s) first: notes.md" in reply  # its own file, by its own server
    assert "rotate monthly" in reply


async def test_another_projects_session_is_neither_purged_nor_exported(two_projects: tuple[Path, Path, Path]) -> None:
    home, a, b = two_projects
    async with serving(home, b) as client:
        await call(client, "ctx_index", {"path": "notes.md"})
        await call(client, "ctx_execute", {"language": "python", "code": "print(1)"})
    with sqlite3.connect(home / "context-kernel.sqlite3") as db:
        (b_session,) = db.execute("SELECT id FROM sessions WHERE project_dir = ?", (str(b),)).fetchone()
    async with serving(home, a) as client:
        result = await client.call_tool("ctx_purge", {"confirm": True, "sessionId": b_session})
        exported = await client.call_tool("ctx_export", {"session": b_session})
        unknown = await client.call_tool("ctx_export", {"session": "no-such-session"})
    assert result.is_error
    assert "worked in another project" in text_of(result) and "nothing deleted" in text_of(result)
    assert exported.is_error and "recorded in another project" in text_of(exported)
    assert f"context-kernel export {b_session}" in text_of(exported)
    assert unknown.is_error and b_session not in text_of(unknown)  # another project's ids are not listed
    async with serving(home, b) as client:
        assert "rotate weekly" in await call(client, "ctx_search", {"queries": ["staging credentials"]})


async def test_a_data_dir_written_before_projects_were_scoped_migrates_without_losing_anything(
        tmp_path: Path) -> None:
    home, alpha, beta = tmp_path / "home", tmp_path / "alpha", tmp_path / "beta"
    for path in (home, alpha, beta):
        path.mkdir()
    db_path = home / "context-kernel.sqlite3"
    shutil.copyfile(GOLDEN_DB, db_path)
    with sqlite3.connect(db_path) as db:  # the release's projects, moved to this test's directories
        for table in ("sources", "sessions"):
            db.execute(f"UPDATE {table} SET project_dir = replace(project_dir, ?, ?)", (RELEASE_ROOT, str(tmp_path)))
        # The indexed files too, as the release's script wrote them (tests/golden/make_release_db.py): a file
        # source whose file is gone is dropped at the first search, which is freshness, not migration.
        db.execute("UPDATE sources SET origin = replace(origin, ?, ?)", (RELEASE_ROOT, str(tmp_path)))
        for origin, mtime in db.execute("SELECT origin, mtime FROM sources WHERE kind = 'file'").fetchall():
            await anyio.Path(origin).write_text(RELEASE_FILES[Path(origin).name])
            os.utime(origin, (mtime, mtime))
        before = db.execute("SELECT id, label, project_dir FROM sources ORDER BY id").fetchall()
        chunks_before = db.execute("SELECT count(*) FROM chunks").fetchone()
    assert len(before) == 4 and before[-1][2] is None  # three sources of two projects, one of unknown project

    async with serving(home, beta) as client:
        own = await call(client, "ctx_search", {"queries": ["staging database credentials", "zanzibar ledger"]})
        legacy = await call(client, "ctx_search", {"queries": ["legacy orphan walrus"]})
        everywhere = await call(client, "ctx_search", {"queries": ["legacy orphan walrus", "parquet nightly"],
                                                       "scope": "all"})
    async with serving(home, alpha) as client:
        other = await call(client, "ctx_search", {"queries": ["staging database credentials"]})
    assert "rotate weekly" in own and "zanzibar ledger" in own
    assert "(no results)" in legacy and "legacy-notes" not in legacy
    assert "(project: unknown, indexed before projects were recorded)" in everywhere
    assert f"source: alpha.md (project: {alpha})" in everywhere
    assert "rotate weekly" not in other

    with sqlite3.connect(db_path) as db:
        after = db.execute("SELECT id, label, project_dir FROM sources ORDER BY id").fetchall()
        assert db.execute("SELECT count(*) FROM chunks").fetchone() == chunks_before
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        assert db.execute("SELECT max(version) FROM _migrations").fetchone()[0] >= 9
    assert after == before

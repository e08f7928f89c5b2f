"""Storage failures met by real `context-kernel serve` processes: a full disk, a damaged database file,
a read-only data dir. Each answer says what failed and what to do; a cell that ran is never reported
as lost because its record could not be written.

A full disk and a read-only data dir are real file systems: a small tmpfs, remounted read-only
(root may mount here; where it may not, those tests are skipped and say why).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import server_command, text_of

from context_kernel.store.db import open_engine

pytestmark = pytest.mark.anyio
DB = "context-kernel.sqlite3"


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def params(home: Path, project: Path) -> StdioServerParameters:
    cmd = server_command("--project", str(project))
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, "CONTEXT_KERNEL_HOME": str(home)})


def fill(disk: Path, leave: int) -> Path:
    """Write a filler file until the file system has at most `leave` bytes free."""
    filler = disk / "filler"
    block = b"\0" * 65536
    with filler.open("wb") as f:
        try:
            while True:
                st = os.statvfs(disk)
                free = st.f_bavail * st.f_frsize
                if free <= leave:
                    break
                f.write(block[: min(len(block), free - leave)] if free - leave < len(block) else block)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


@pytest.mark.kernels
async def test_a_cell_that_ran_on_a_full_disk_answers_its_output_and_is_recorded_as_completed_later(
        tmp_path: Path, project: Path) -> None:
    with tmpfs(tmp_path / "disk", "24m") as home:
        async with Client(params(home, project)) as client:
            warm = await client.call_tool("ctx_execute", {"language": "python", "code": "print('warm')"})
            assert text_of(warm) == "warm"
            filler = fill(home, leave=192 * 1024)
            code = "for i in range(30000): print(f'line {i:06d} ' + 'x' * 60)"
            ran = await client.call_tool("ctx_execute", {"language": "python", "code": code})
            text = text_of(ran)
            # The cell ran to the end: its reply is its output (head and tail), not a store error ...
            assert not ran.is_error, text
            assert "line 000000" in text and "line 029999" in text
            # ... and it says the record is incomplete, why, and what to do.
            assert "recording failed" in text and "disk holding the database is full" in text
            assert "free space" in text
            full = await client.call_tool("ctx_index", {"content": "word " * 400_000, "source": "too-big"})
            assert full.is_error
            assert "disk holding the database is full" in text_of(full) and "free space" in text_of(full)
            filler.unlink()
            after = await client.call_tool("ctx_execute", {"language": "python", "code": "print('after')"})
            assert (after.is_error, text_of(after)) == (False, "after")
        with sqlite3.connect(home / DB) as db:
            rows = db.execute("SELECT code, status, note FROM executions ORDER BY id").fetchall()
    statuses = {row[0]: (row[1], row[2] or "") for row in rows}
    status, note = statuses[code]
    assert status == "ok"  # not `interrupted`: the cell completed
    assert "could not be recorded" in note


def _damage(path: Path) -> None:
    """Our own database with its first page (the schema) overwritten past the 100-byte header."""
    open_engine(path).dispose()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with path.open("r+b") as f:
        f.seek(100)
        f.write(os.urandom(4096 - 100))


@pytest.fixture(params=["not-a-database", "malformed"])
def damaged_home(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A data dir whose database is a text file, or a real database with its schema page overwritten."""
    home = tmp_path / "home"
    home.mkdir()
    if request.param == "not-a-database":
        (home / DB).write_bytes(b"these are not the bytes of an SQLite database\n" * 200)
    else:
        _damage(home / DB)
    return home


def doctor(home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "context_kernel", "doctor", "--no-start"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "CONTEXT_KERNEL_HOME": str(home)}, check=False)


async def test_a_damaged_database_file_is_named_in_every_answer_with_what_to_do(
        damaged_home: Path, project: Path) -> None:
    db = damaged_home / DB
    async with Client(params(damaged_home, project)) as client:
        for tool, args in (("ctx_search", {"queries": ["anything"]}), ("ctx_stats", {})):
            result = await client.call_tool(tool, args)
            assert result.is_error, tool
            assert "database file is damaged" in text_of(result), text_of(result)
            assert f"mv {db} {db}.broken" in text_of(result)


def test_doctor_fails_a_database_that_does_not_open_or_pass_quick_check(damaged_home: Path) -> None:
    done = doctor(damaged_home)
    database = [line for line in done.stdout.splitlines() if line.startswith(("[OK] database", "[FAIL] database"))]
    assert database and database[0].startswith("[FAIL] database"), done.stdout
    assert "move it aside" in database[0]
    assert done.returncode == 1


def test_doctor_reports_the_size_of_a_healthy_database_and_of_the_logs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "kernel-python3-abc.log").write_text("started\n")
    open_engine(home / DB).dispose()
    done = doctor(home)
    lines = {line.split(":", 1)[0]: line for line in done.stdout.splitlines()}
    assert "quick_check ok" in lines["[OK] database"] and " MB" in lines["[OK] database"]
    assert "1 kernel log;" in lines["[OK] logs"]


def test_a_server_on_a_read_only_data_dir_says_so_in_one_line_and_exits_2(tmp_path: Path, project: Path) -> None:
    with tmpfs(tmp_path / "ro-home", "4m") as home:
        remount = subprocess.run(["mount", "-o", "remount,ro", str(home)], capture_output=True, text=True,
                                 check=False)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remount.stderr.strip()}")
        done = subprocess.run(server_command("--project", str(project)), capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, check=False,
                              env={**os.environ, "CONTEXT_KERNEL_HOME": str(home)})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not writable" in lines[0] and "CONTEXT_KERNEL_HOME" in lines[0], done.stderr

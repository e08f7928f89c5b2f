"""Only the owner can read the data dir: a real server started on a data dir another version left
world-readable tightens it with one stderr line, and everything written afterwards (the database and
its -wal and -shm, kernel logs and connection files, the insight page, hook spool, logs and cache,
the server's liveness file) is 0600 in 0700 directories."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from tests.helpers import server_command, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
CLI = Path(sys.executable).parent / "context-kernel"


def _modes(home: Path) -> tuple[dict[str, int], dict[str, int]]:
    """(directories, regular files) under home, by path relative to it, with their read/write/execute bits
    (jupyter_client adds the sticky bit to the runtime directory: it changes nothing about who reads it)."""
    dirs: dict[str, int] = {".": home.stat().st_mode & 0o777}
    files: dict[str, int] = {}
    for folder, subdirs, names in os.walk(home):
        for name in subdirs + names:
            path = Path(folder) / name
            found = path.lstat()
            rel = str(path.relative_to(home))
            if stat.S_ISDIR(found.st_mode):
                dirs[rel] = found.st_mode & 0o777
            elif stat.S_ISREG(found.st_mode):
                files[rel] = found.st_mode & 0o777
    return dirs, files


def _hook(home: Path, project: Path, path: str) -> None:
    payload = {"session_id": "private", "hook_event_name": "PostToolUse", "cwd": str(project), "tool_name": "Read",
               "tool_input": {"file_path": path}, "tool_response": {"type": "text", "file": {"filePath": path}}}
    subprocess.run([str(CLI), "hook", "claude-code", "PostToolUse"], input=json.dumps(payload), text=True,
                   check=True, capture_output=True, timeout=60,
                   env={**os.environ, "CONTEXT_KERNEL_HOME": str(home), "CONTEXT_KERNEL_HOOK_LOG": "1"})


async def test_a_server_makes_a_world_readable_data_dir_private_and_writes_every_file_0600(
        tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    home.chmod(0o755)
    (home / "logs").chmod(0o755)
    old_log = home / "logs" / "kernel-python3-earlier.log"
    old_log.write_text("a kernel log an older version left readable\n")
    old_log.chmod(0o644)
    (home / "insight.html").write_text("<html></html>")
    (home / "insight.html").chmod(0o644)

    errors = tmp_path / "server-stderr.txt"
    cmd = server_command("--project", str(project))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, "CONTEXT_KERNEL_HOME": str(home)})
    with errors.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            ran = await client.call_tool("ctx_execute", {"language": "python", "code": "print('private')"})
            assert text_of(ran) == "private"
            indexed = await client.call_tool("ctx_index", {"content": "# Notes\n\nthe quokka", "source": "n"})
            assert not indexed.is_error
            assert not (await client.call_tool("ctx_insight", {})).is_error
            _hook(home, project, "src/one.py")
            spooled = list((home / "spool").glob("*.jsonl"))
            assert spooled and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in spooled)
            assert not (await client.call_tool("ctx_search", {"queries": ["one.py"]})).is_error  # ingests the spool
            dirs, files = _modes(home)  # while it runs: the -wal and -shm exist

    assert {rel: mode for rel, mode in dirs.items() if mode != 0o700} == {}
    assert {rel: mode for rel, mode in files.items() if mode != 0o600} == {}
    for expected in ("context-kernel.sqlite3", "context-kernel.sqlite3-wal", "context-kernel.sqlite3-shm",
                     "insight.html", "logs/hooks.log", "logs/kernel-python3-earlier.log", "cache/secret-shapes.json"):
        assert expected in files, sorted(files)
    assert any(rel.startswith("logs/kernel-") and "earlier" not in rel for rel in files)  # this server's kernel
    assert any(rel.startswith("runtime/kernel-") and rel.endswith(".json") for rel in files)  # its connection file
    assert any(rel.startswith("servers/") for rel in files)  # the liveness file hooks read
    said = [line for line in errors.read_text().splitlines() if "made private" in line]
    assert len(said) == 1 and f"the data dir {home} was 0755, now 0700" in said[0], said


def test_hooks_make_a_missing_data_dir_0700(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "fresh" / "home"
    _hook(home, project, "src/two.py")
    dirs, files = _modes(home)
    assert set(dirs.values()) == {0o700} and set(files.values()) == {0o600}

"""Several real `context-kernel serve` processes (and hooks) sharing one fresh data dir at once.

Each server's first call creates or migrates the schema, and all of them re-index the same label:
without write transactions that take the lock when they begin, two processes both see "no table /
no row" and both create it (`table sessions already exists`, `UNIQUE constraint failed:
sources.label`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import server_command, text_of

pytestmark = pytest.mark.anyio

SERVERS = 4
ROUNDS = 20
LABEL = "shared-notes"
CLI = Path(sys.executable).parent / "context-kernel"


def _hook_env(home: Path) -> dict[str, str]:
    return {**os.environ, "CONTEXT_KERNEL_HOME": str(home)}


async def test_servers_started_at_once_on_a_fresh_home_migrate_and_reindex_one_label_without_errors(
        tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(home)}
    cmd = server_command("--project", str(project))
    failures: list[str] = []
    calls = 0

    connected = 0
    go = anyio.Event()

    async def one_server(n: int) -> None:
        nonlocal calls, connected
        async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
            connected += 1
            if connected == SERVERS:
                go.set()
            await go.wait()  # every server is up: their first calls (and migrations) overlap
            results = [await client.call_tool("ctx_stats", {})]
            for r in range(ROUNDS):
                content = f"# Notes\n\nserver {n} round {r}: the shared label is rewritten by everyone\n"
                results.append(await client.call_tool("ctx_index", {"content": content, "source": LABEL}))
            results.append(await client.call_tool("ctx_search", {"queries": ["shared label rewritten"]}))
        calls += len(results)
        failures.extend(f"server {n}: {text_of(r)}" for r in results if r.is_error)

    async def one_hook(event: str, payload: str) -> None:
        # A hook's PreCompact re-indexes `session-events:<id>` while the servers ingest the same spool.
        done = await anyio.run_process([str(CLI), "hook", "claude-code", event], input=payload.encode(),
                                       env=_hook_env(home), check=False)
        if done.returncode != 0:
            failures.append(f"hook {event}: exit {done.returncode}: {done.stderr.decode()}")

    post = json.dumps({"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": str(project),
                       "tool_name": "Read", "tool_input": {"file_path": "src/app.py"}, "tool_response": {}})
    pre = json.dumps({"session_id": "s1", "hook_event_name": "PreCompact", "cwd": str(project), "trigger": "auto"})
    with anyio.fail_after(240):
        async with anyio.create_task_group() as tg:
            for n in range(SERVERS):
                tg.start_soon(one_server, n)
            for _ in range(3):
                tg.start_soon(one_hook, "PostToolUse", post)
                tg.start_soon(one_hook, "PreCompact", pre)
    print(f"{SERVERS} servers, {calls} calls, {len(failures)} failed")
    assert failures == []
    assert calls == SERVERS * (ROUNDS + 2)
    with sqlite3.connect(home / "context-kernel.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM sources WHERE label = ?", (LABEL,)).fetchone() == (1,)
        assert db.execute("SELECT count(*) FROM _migrations").fetchone()[0] >= 5
    log = home / "logs" / "hooks.log"  # a hook never fails its client: what went wrong is logged here
    assert not log.exists() or "failed" not in log.read_text(), log.read_text()


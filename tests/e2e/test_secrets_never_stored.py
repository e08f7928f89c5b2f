"""The probe's 14 secrets, end to end: typed in prompts and commands (through the real hook console
script) and printed by the agent's code (through the MCP client against `context-kernel serve`).

Nothing of them may be in the database, the execution record included (docs/security.md), nor in
any search reply, session-events included. (tests/e2e/test_secrets_in_no_store.py does the same for
issue 25's larger corpus, and every file the server writes.)
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import server_command, text_of
from tests.hooks.hookrun import Hooks
from tests.security.secret_probe import PROBE, SECRETS, WALKTHROUGH_PROMPTS

from context_kernel.settings import database_path

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
SESSION = "5e1c2a9e-secrets-e2e"


def hook(hooks: Hooks, event: str, **fields: Any) -> None:
    payload = {"session_id": SESSION, "transcript_path": str(hooks.project / "t.jsonl"), "cwd": str(hooks.project),
               "hook_event_name": event, **fields}
    run = hooks.run("claude-code", event, payload)
    assert run.returncode == 0, run.stderr


def stored(home: Path) -> str:
    """Every row of every table, as SQL text."""
    with sqlite3.connect(database_path(home)) as db:
        return "\n".join(db.iterdump())


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


async def test_no_probe_secret_is_stored_or_found(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    cmd = server_command("--project", str(hooks.project))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:],
                                   env={**os.environ, "CONTEXT_KERNEL_HOME": str(hooks.home)})
    async with Client(params) as client:
        for prompt in [*PROBE.values(), *WALKTHROUGH_PROMPTS]:
            hook(hooks, "UserPromptSubmit", prompt=prompt)
        for command in PROBE.values():
            hook(hooks, "PostToolUse", tool_name="Bash", tool_input={"command": command},
                 tool_response={"stdout": "", "stderr": "error: " + command, "interrupted": False})
        # Large output is indexed (kept out of the reply); a batch's output always is.
        printed = "\n".join(PROBE.values())
        code = f"for i in range(3000): print('row', i)\nprint({printed!r})"
        assert not (await client.call_tool("ctx_execute", {"language": "python", "code": code})).is_error
        batch = await client.call_tool("ctx_batch_execute", {"commands": [
            {"label": "env", "command": f"printf '%s\\n' {' '.join(repr(v) for v in PROBE.values())}"}]})
        assert not batch.is_error

        replies = ""
        for source in ("session-events", None):
            for queries in (["password token key"], ["mysql docker curl clone"], ["BEGIN RSA PRIVATE KEY"],
                            [s[:12] for s in SECRETS[:10]]):
                args: dict[str, Any] = {"queries": queries, "limit": 10}
                if source:
                    args["source"] = source
                reply = await client.call_tool("ctx_search", args)
                assert not reply.is_error
                replies += text_of(reply)
        assert "mysql" in replies and "docker login" in replies  # the events are there, their secrets not
        assert leaked(replies) == []
    rows = stored(hooks.home)
    assert "my password is [REDACTED password]" in rows
    assert leaked(rows) == []
    # The execution record keeps what the code printed, its secrets replaced (docs/security.md).
    with sqlite3.connect(database_path(hooks.home)) as db:
        outputs = "\n".join(" ".join(map(str, r)) for r in db.execute("SELECT * FROM outputs").fetchall())
    assert "mysql -h db.internal -uroot -p[REDACTED password] shop" in outputs
    assert leaked(outputs) == []

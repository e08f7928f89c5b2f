"""A simulated Claude Code session across compaction: hook calls through the real console script,
MCP calls through the SDK's stdio client against a real `context-kernel serve`.

The agent reads and edits files, creates tasks, the user makes a decision, a command fails; then
PreCompact and SessionStart(compact). The injected text must hold the pending tasks, the edited
files, the decision and the error, fit in 2 KB, and its ready-made ctx_search calls must find the
full events.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import server_command, text_of
from tests.hooks.hookrun import Hooks

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
SESSION = "3f1c2a9e-5b7d-4c1e-9a2f-claude-e2e"


class Claude:
    """Sends hook payloads shaped like Claude Code's (hooks reference: code.claude.com/docs/en/hooks)."""

    def __init__(self, hooks: Hooks) -> None:
        self.hooks = hooks

    def hook(self, event: str, **fields: Any) -> dict[str, Any] | None:
        project = self.hooks.project
        payload = {"session_id": SESSION, "transcript_path": str(project / "transcript.jsonl"),
                   "cwd": str(project), "hook_event_name": event, **fields}
        run = self.hooks.run("claude-code", event, payload)
        assert run.returncode == 0, run.stderr
        return run.answer

    def tool(self, name: str, tool_input: dict[str, Any], response: Any) -> None:
        pre = self.hook("PreToolUse", tool_name=name, tool_input=tool_input)
        decision = ((pre or {}).get("hookSpecificOutput") or {}).get("permissionDecision")
        assert decision != "deny", pre
        self.hook("PostToolUse", tool_name=name, tool_input=tool_input, tool_response=response)


def _context(answer: dict[str, Any] | None) -> str:
    assert answer is not None
    return str(answer["hookSpecificOutput"]["additionalContext"])


async def test_memory_survives_compaction(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)  # the hook CLI's home, project and user home; the server shares the home
    project, home = hooks.project, hooks.home
    (project / "src" / "fetcher.py").write_text("def fetch(url):\n    return None\n")
    claude = Claude(hooks)
    cmd = server_command("--project", str(project))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, "CONTEXT_KERNEL_HOME": str(home)})
    async with Client(params) as client:
        startup = _context(claude.hook("SessionStart", source="startup"))
        assert "ctx_execute" in startup and len(startup.encode()) <= 600

        # With the server up, WebFetch is sent to ctx_fetch_and_index.
        denied = claude.hook("PreToolUse", tool_name="WebFetch",
                             tool_input={"url": "https://docs.example.com/retry", "prompt": "retry policy"})
        assert denied is not None and denied["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "ctx_fetch_and_index" in denied["hookSpecificOutput"]["permissionDecisionReason"]

        claude.hook("UserPromptSubmit", prompt="Add retries to the fetcher. Let's use SQLite instead of Postgres "
                                              "for the response cache.")
        claude.tool("Read", {"file_path": str(project / "src" / "fetcher.py")},
                    {"type": "text", "file": {"filePath": str(project / "src" / "fetcher.py"), "content": "def fetch"}})
        claude.tool("TodoWrite", {"todos": [
            {"content": "Add exponential backoff to fetch()", "status": "in_progress", "activeForm": "Adding backoff"},
            {"content": "Store responses in the SQLite cache", "status": "pending", "activeForm": "Storing"},
            {"content": "Read the fetcher", "status": "completed", "activeForm": "Reading"}]}, {})
        claude.tool("Edit", {"file_path": str(project / "src" / "fetcher.py"), "old_string": "return None",
                             "new_string": "return retry(url)"}, {"filePath": str(project / "src" / "fetcher.py")})
        claude.tool("Write", {"file_path": str(project / "src" / "cache.py"), "content": "import sqlite3\n"},
                    {"type": "create", "filePath": str(project / "src" / "cache.py")})
        failure = ("E   AssertionError: expected 3 retries after a 503 from the mirror, got 1 "
                   "(tests/test_fetcher.py::test_backoff_on_503)")
        claude.tool("Bash", {"command": "python -m pytest tests/test_fetcher.py -q", "description": "run tests"},
                    {"stdout": "F\n" + failure + "\n1 failed in 0.12s", "stderr": "", "interrupted": False,
                     "exit_code": 1})
        # An MCP call of ours, as the agent makes it, and its PostToolUse.
        result = await client.call_tool("ctx_execute", {"language": "python", "code": "print(2 ** 10)"})
        assert text_of(result) == "1024"
        claude.tool("mcp__context-kernel__ctx_execute", {"language": "python", "code": "print(2 ** 10)"},
                    [{"type": "text", "text": "1024"}])

        assert claude.hook("PreCompact", trigger="auto", custom_instructions="") in (None, {})
        injected = _context(claude.hook("SessionStart", source="compact"))

        assert len(injected.encode()) <= 2048, len(injected.encode())
        for must in ("Store responses in the SQLite cache", "Add exponential backoff", "src/fetcher.py",
                     "src/cache.py", "SQLite instead of Postgres", "AssertionError"):
            assert must in injected, f"{must!r} missing from:\n{injected}"
        tasks = injected.split("<tasks>")[1].split("</tasks>")[0]
        assert '<task status="pending">Store responses in the SQLite cache</task>' in tasks
        assert '<task status="completed">Read the fetcher</task>' in tasks  # done, not open

        calls = re.findall(r"ctx_search\((queries=\[.*?\]), source=\"(session-events[^\"]*)\"\)", injected)
        assert len(calls) >= 3, injected
        found = ""
        for queries_arg, source in calls:
            queries = ast.literal_eval(queries_arg.split("=", 1)[1])
            reply = await client.call_tool("ctx_search", {"queries": queries, "source": source, "limit": 5})
            assert not reply.is_error
            found += text_of(reply)
        # The full events, not the snapshot's clipped lines: the whole failure line comes back.
        assert "test_backoff_on_503" in found
        assert "src/fetcher.py" in found

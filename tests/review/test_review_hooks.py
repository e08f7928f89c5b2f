"""Review: the hook CLI on odd input and on a client that borrows another client's hook file."""

from __future__ import annotations

import json
import time
from typing import Any

from reviewcli import HookCli

from context_kernel.hooks import liveness
from context_kernel.hooks.shell_fetch import find_printing_fetch


def _vscode(cli: HookCli, event: str, **fields: Any) -> dict[str, Any]:
    # VS Code's common input (https://code.visualstudio.com/docs/agents/reference/hooks-reference):
    # camelCase sessionId and hookEventName.
    return {"timestamp": "2026-02-09T10:30:00.000Z", "cwd": str(cli.project), "sessionId": "vs-1",
            "hookEventName": event, "transcript_path": "/t.json", **fields}


def test_vscode_running_claude_hooks_gets_the_snapshot_with_a_tool_call_not_a_prompt(cli: HookCli) -> None:
    # VS Code also runs .claude/settings.json hooks (same `context-kernel hook claude-code ...` command)
    # but its UserPromptSubmit takes the common output only: context put there is dropped, and the
    # one-time restore after PreCompact was spent on it.
    read = _vscode(cli, "PostToolUse", tool_name="read_file", tool_input={"filePath": str(cli.project / "a.py")},
                   tool_use_id="t1", tool_response="ok")
    assert cli.run("claude-code", "PostToolUse", read).returncode == 0
    assert cli.run("claude-code", "PreCompact", _vscode(cli, "PreCompact", trigger="auto")).returncode == 0
    prompt = cli.run("claude-code", "UserPromptSubmit", _vscode(cli, "UserPromptSubmit", prompt="go on"))
    assert (prompt.returncode, prompt.stdout) == (0, "")
    after = cli.run("claude-code", "PostToolUse", read)
    context = after.json["hookSpecificOutput"]["additionalContext"]
    assert "<session_snapshot" in context and "a.py" in context


def test_an_event_with_a_lone_surrogate_is_still_recorded(cli: HookCli) -> None:
    # JSON may escape a lone surrogate (\ud800); json.loads keeps it and UTF-8 cannot encode it, so
    # the whole call's events were lost (logged as a failure).
    payload = json.dumps({"session_id": "s1", "cwd": str(cli.project), "hook_event_name": "PostToolUse",
                          "tool_name": "Read", "tool_input": {"file_path": f"{cli.project}/odd<lone>name.py"},
                          "tool_response": {}}).replace("<lone>", "\\ud800")
    assert cli.run("claude-code", "PostToolUse", payload).returncode == 0
    assert [(r["type"], r["data"]) for r in cli.spool_rows()] == [("file_read", "odd?name.py")]
    assert cli.log_lines() == []


def test_a_command_that_overflows_the_parser_is_still_denied(cli: HookCli) -> None:
    cli.deny("Bash(rm -rf *)")
    payload = {"session_id": "s1", "cwd": str(cli.project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "rm -rf ~/work; echo " + '"$(' * 3000}}
    answer = cli.run("claude-code", "PreToolUse", payload)
    assert answer.returncode == 0
    assert answer.json["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_huge_command_is_answered_in_seconds(cli: HookCli) -> None:
    # A client waits for the hook (Claude Code: 60 s by default) and then runs the tool anyway.
    cli.deny("Bash(git push:*)")
    marker = liveness.mark_alive(cli.home, cli.project)
    try:
        payload = {"session_id": "s1", "cwd": str(cli.project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": "echo '" + "data " * 300_000 + "' > blob.txt && git push"}}
        started = time.perf_counter()
        answer = cli.run("claude-code", "PreToolUse", payload)
        assert time.perf_counter() - started < 20
    finally:
        liveness.clear(marker)
    assert answer.json["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_printing_fetch_next_to_a_huge_line_is_found_quickly() -> None:
    command = "echo '" + "a" * 1_500_000 + "' > blob.txt\ncurl https://example.com/docs"
    started = time.perf_counter()
    found = find_printing_fetch(command)
    assert time.perf_counter() - started < 8
    assert found is not None and found.url == "https://example.com/docs"

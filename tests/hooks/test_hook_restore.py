"""After compaction the snapshot comes back once: at SessionStart(compact) where the client has it,
else with the first later hook answer that can carry text (Gemini has no compact SessionStart)."""

from __future__ import annotations

from typing import Any

from hookrun import Hooks


def _gemini(hooks: Hooks, event: str, **fields: object) -> dict[str, object]:
    base = hooks.payload("gemini", "BeforeAgent")
    base.pop("prompt")
    return {**base, "hook_event_name": event, **fields}


def test_gemini_gets_the_snapshot_with_the_first_prompt_after_precompress(hooks: Hooks) -> None:
    assert hooks.call("gemini", "AfterTool-read_file").returncode == 0
    edit = _gemini(hooks, "AfterTool", tool_name="replace",
                   tool_input={"file_path": str(hooks.project / "src" / "main.py"), "old_string": "hi",
                               "new_string": "hello"}, tool_response={"llmContent": "ok", "returnDisplay": ""})
    assert hooks.run("gemini", "AfterTool", edit).returncode == 0
    before = hooks.run("gemini", "BeforeAgent", _gemini(hooks, "BeforeAgent", prompt="go on"))
    assert "session_snapshot" not in before.stdout  # nothing compacted yet
    assert hooks.run("gemini", "PreCompress", _gemini(hooks, "PreCompress", trigger="auto")).returncode == 0
    after = hooks.run("gemini", "BeforeAgent", _gemini(hooks, "BeforeAgent", prompt="continue please"))
    context = after.answer["hookSpecificOutput"]["additionalContext"]
    assert "<session_snapshot" in context and "src/main.py" in context and len(context.encode()) <= 2048
    again = hooks.run("gemini", "BeforeAgent", _gemini(hooks, "BeforeAgent", prompt="and then?"))
    assert "session_snapshot" not in again.stdout  # given back once


def test_claude_code_restores_at_session_start_and_not_again(hooks: Hooks) -> None:
    assert hooks.call("claude-code", "PostToolUse-Read").returncode == 0
    base = hooks.payload("claude-code", "UserPromptSubmit")
    hooks.run("claude-code", "PreCompact", {**base, "hook_event_name": "PreCompact", "trigger": "manual"})
    start = hooks.run("claude-code", "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "compact"})
    assert "<session_snapshot" in start.answer["hookSpecificOutput"]["additionalContext"]
    prompt = hooks.run("claude-code", "UserPromptSubmit", base)
    assert "session_snapshot" not in prompt.stdout


def _vscode(hooks: Hooks, event: str, **fields: Any) -> dict[str, Any]:
    # VS Code's common input (https://code.visualstudio.com/docs/agents/reference/hooks-reference):
    # camelCase sessionId and hookEventName.
    return {"timestamp": "2026-02-09T10:30:00.000Z", "cwd": str(hooks.project), "sessionId": "vs-1",
            "hookEventName": event, "transcript_path": "/t.json", **fields}


def test_vscode_running_claude_hooks_gets_the_snapshot_with_a_tool_call_not_a_prompt(hooks: Hooks) -> None:
    # VS Code also runs .claude/settings.json hooks (same `context-kernel hook claude-code ...` command)
    # but its UserPromptSubmit takes the common output only: context put there is dropped, and the
    # one-time restore after PreCompact was spent on it.
    read = _vscode(hooks, "PostToolUse", tool_name="read_file", tool_input={"filePath": str(hooks.project / "a.py")},
                   tool_use_id="t1", tool_response="ok")
    assert hooks.run("claude-code", "PostToolUse", read).returncode == 0
    assert hooks.run("claude-code", "PreCompact", _vscode(hooks, "PreCompact", trigger="auto")).returncode == 0
    prompt = hooks.run("claude-code", "UserPromptSubmit", _vscode(hooks, "UserPromptSubmit", prompt="go on"))
    assert (prompt.returncode, prompt.stdout) == (0, "")
    after = hooks.run("claude-code", "PostToolUse", read)
    context = after.answer["hookSpecificOutput"]["additionalContext"]
    assert "<session_snapshot" in context and "a.py" in context

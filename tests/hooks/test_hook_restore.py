"""After compaction the snapshot comes back once: at SessionStart(compact) where the client has it,
else with the first later hook answer that can carry text (Gemini has no compact SessionStart)."""

from __future__ import annotations

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


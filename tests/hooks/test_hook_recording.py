"""PostToolUse / prompts feed the session spool (redacted); SessionStart and PreCompact reach memory."""

from __future__ import annotations

import json

import pytest
from hookrun import Hooks

from context_kernel.hooks.guide import routing_guide
from context_kernel.security.redact import MIN_SECRET_LENGTH


@pytest.mark.parametrize(("client", "fixture", "session", "neutral", "kind", "data"), [
    ("claude-code", "PostToolUse-Read", "abc123", "", "file_read", "src/main.py"),
    ("gemini", "AfterTool-read_file", "d7a1c3e0-5b2f-4c11-9a8e-2f6b7c9d0e1f", "", "file_read", "src/main.py"),
    ("codex", "PostToolUse-apply_patch", "0199a213-81c0-7800-8aa1-bbab2a035a53", "", "file_edit", "src/main.py"),
    ("cursor", "afterFileEdit", "668320d2-2fd8-4888-b33c-2a466fec86e7", "{}", "file_edit", "src/main.py"),
    ("copilot", "PostToolUse-create_file", "session-identifier", "", "file_write", "src/util.py"),
])
def test_a_finished_tool_call_is_appended_to_the_session_spool(
        hooks: Hooks, client: str, fixture: str, session: str, neutral: str, kind: str, data: str) -> None:
    run = hooks.call(client, fixture)
    assert (run.returncode, run.stdout.strip()) == (0, neutral)
    rows = hooks.spool_rows()
    assert [(r["type"], r["data"], r["client"], r["session_id"]) for r in rows] == [(kind, data, client, session)]
    assert rows[0]["time"] > 0
    assert hooks.log_lines() == []


def test_secrets_are_redacted_before_they_reach_the_spool(hooks: Hooks) -> None:
    payload = hooks.payload("claude-code", "UserPromptSubmit")
    payload["prompt"] = "Deploy with sk-live-0123456789abcdef and password=hunter2-long, then tell me"
    run = hooks.run("claude-code", "UserPromptSubmit", payload, DEPLOY_API_TOKEN="sk-live-0123456789abcdef")
    assert (run.returncode, run.stdout) == (0, "")
    row, transcript = hooks.spool_rows()
    assert row["type"] == "prompt"
    assert transcript["type"] == "transcript" and transcript["data"] == payload["transcript_path"]
    assert "sk-live-0123456789abcdef" not in row["data"] and "hunter2-long" not in row["data"]
    assert row["data"].startswith("Deploy with [REDACTED openai-key] and password=[REDACTED password]")


def test_a_prompt_clipped_in_the_middle_of_a_secret_leaves_no_part_of_it_in_the_spool(hooks: Hooks) -> None:
    token = "sk-live-" + "0123456789abcdefghij" * 3
    # The intent event keeps the first 300 characters: the token starts at 281 and is cut after 18 characters.
    prompt = "x" * 280 + " " + token + " is the key, and export API_KEY=\"" + token + "\" too"
    payload = {"session_id": "s1", "cwd": str(hooks.project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    assert hooks.run("claude-code", "UserPromptSubmit", payload, DEPLOY_API_TOKEN=token).returncode == 0
    rows = hooks.spool_rows()
    assert [r["type"] for r in rows] == ["prompt"]
    assert token[:MIN_SECRET_LENGTH] not in rows[0]["data"]


def test_an_event_with_a_lone_surrogate_is_still_recorded(hooks: Hooks) -> None:
    # JSON may escape a lone surrogate (\ud800); json.loads keeps it and UTF-8 cannot encode it, so
    # the whole call's events were lost (logged as a failure).
    payload = json.dumps({"session_id": "s1", "cwd": str(hooks.project), "hook_event_name": "PostToolUse",
                          "tool_name": "Read", "tool_input": {"file_path": f"{hooks.project}/odd<lone>name.py"},
                          "tool_response": {}}).replace("<lone>", "\\ud800")
    assert hooks.run("claude-code", "PostToolUse", payload).returncode == 0
    assert [(r["type"], r["data"]) for r in hooks.spool_rows()] == [("file_read", "odd?name.py")]
    assert hooks.log_lines() == []


def test_session_start_injects_the_routing_guide_and_records_the_directory(hooks: Hooks) -> None:
    payload = {"session_id": "abc123", "transcript_path": "/dev/null", "cwd": str(hooks.project),
               "hook_event_name": "SessionStart", "source": "startup"}
    run = hooks.run("claude-code", "SessionStart", payload)
    cursor = hooks.run("cursor", "sessionStart", {"conversation_id": "c1", "workspace_roots": [str(hooks.project)]})
    assert run.answer == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": routing_guide()}}
    assert cursor.answer == {"additional_context": routing_guide()}
    assert ("cwd", str(hooks.project)) in [(r["type"], r["data"]) for r in hooks.spool_rows()]


def test_pre_compact_hands_the_spool_to_session_memory(hooks: Hooks) -> None:
    hooks.call("claude-code", "PostToolUse-Read")
    assert len(hooks.spool_rows()) == 1
    payload = {"session_id": "abc123", "transcript_path": "/dev/null", "cwd": str(hooks.project),
               "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
    run = hooks.run("claude-code", "PreCompact", payload)
    assert (run.returncode, run.stdout) == (0, "")
    assert hooks.log_lines() == []
    assert hooks.spool_rows() == []  # ingested into the database


def test_where_the_transcript_is_is_kept_apart_from_the_sessions_memory(hooks: Hooks) -> None:
    """The export reads the agent's words from the client's transcript (notebooks/narration.py): a prompt's hook
    reports its path, which is stored for the project, never as a memory event (a snapshot would show it)."""
    from context_kernel.hooks.memory import open_memory
    from context_kernel.store.transcripts import TranscriptRepository

    payload = hooks.payload("claude-code", "UserPromptSubmit")
    assert hooks.run("claude-code", "UserPromptSubmit", payload).returncode == 0
    assert hooks.run("claude-code", "UserPromptSubmit", payload).returncode == 0  # the same path again
    memory = open_memory(hooks.home)
    try:
        memory.ingest()
        (found,) = TranscriptRepository(memory.engine).of_project(str(hooks.project.resolve()))
        assert (found.path, found.session_id, found.client) == (payload["transcript_path"], payload["session_id"],
                                                                "claude-code")
        assert found.first_seen <= found.last_seen
        assert [e.type for e in memory.events(payload["session_id"])] == ["prompt"]
    finally:
        memory.engine.dispose()

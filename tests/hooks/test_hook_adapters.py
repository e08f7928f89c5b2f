"""Each client's documented payloads parse into Claude Code's vocabulary, and answers render in the
client's documented shape (in process: the console script is covered by the other hook tests)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hookrun import FIXTURES, PLACEHOLDER

from context_kernel.hooks.adapters import CLIENTS
from context_kernel.hooks.model import HOOK_EVENTS, NEUTRAL, HookAnswer, HookCall


def load(client: str, fixture: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / client / f"{fixture}.json").read_text())
    return doc


def parse(client: str, fixture: str, event: str | None = None) -> HookCall:
    return CLIENTS[client].parse(event or fixture.split("-", 1)[0], load(client, fixture))


def test_every_client_maps_its_events_onto_ours_and_renders_neutral_as_documented() -> None:
    for name, adapter in CLIENTS.items():
        assert name == adapter.NAME
        assert set(adapter.EVENTS.values()) <= set(HOOK_EVENTS)
        for event in adapter.EVENTS:
            call = adapter.parse(event, {})
            assert call.session_id == "unknown"
            assert adapter.render(call, NEUTRAL) == adapter.NEUTRAL_OUTPUT
    assert {n: a.NEUTRAL_OUTPUT for n, a in CLIENTS.items()} == {
        "claude-code": "", "gemini": "", "codex": "", "cursor": "{}", "copilot": ""}


@pytest.mark.parametrize(("client", "fixture", "tool", "raw_tool", "key", "value"), [
    ("claude-code", "PreToolUse-Read", "Read", "Read", "file_path", f"{PLACEHOLDER}/src/main.py"),
    ("gemini", "BeforeTool-run_shell_command", "Bash", "run_shell_command", "command", "npm test"),
    ("gemini", "BeforeTool-read_file", "Read", "read_file", "file_path", f"{PLACEHOLDER}/src/main.py"),
    ("gemini", "BeforeTool-web_fetch", "WebFetch", "web_fetch", "url", "https://geminicli.com/docs/hooks/reference"),
    ("gemini", "BeforeTool-mcp-ctx_execute", "mcp__context-kernel__ctx_execute", "ctx_execute", "code", "ls"),
    ("codex", "PreToolUse-Bash", "Bash", "Bash", "command", "cargo test"),
    ("codex", "PostToolUse-apply_patch", "Edit", "apply_patch", "file_path", "src/main.py"),
    ("codex", "PreToolUse-mcp-ctx_execute", "mcp__context-kernel__ctx_execute", "mcp__context-kernel__ctx_execute",
     "code", "print(2 * 21)"),
    ("cursor", "beforeShellExecution", "Bash", "beforeShellExecution", "command", "npm install express"),
    ("cursor", "beforeReadFile", "Read", "beforeReadFile", "file_path", f"{PLACEHOLDER}/src/main.py"),
    ("cursor", "beforeMCPExecution", "mcp__unknown__ctx_execute", "ctx_execute", "code", "print(1)"),
    ("cursor", "afterFileEdit", "Edit", "afterFileEdit", "file_path", f"{PLACEHOLDER}/src/main.py"),
    ("cursor", "preToolUse-WebFetch", "WebFetch", "WebFetch", "url", "https://cursor.com/docs/agent/hooks"),
    ("copilot", "PreToolUse-fetch_webpage", "WebFetch", "fetch_webpage", "url",
     "https://code.visualstudio.com/docs/agents/reference/hooks-reference"),
    ("copilot", "PreToolUse-run_in_terminal", "Bash", "run_in_terminal", "command", "npm test"),
    ("copilot", "PreToolUse-read_file", "Read", "read_file", "file_path", f"{PLACEHOLDER}/src/main.py"),
    ("copilot", "PostToolUse-create_file", "Write", "create_file", "content", "X = 1\n"),
])
def test_tool_names_and_inputs_are_normalised_to_claude_codes(
        client: str, fixture: str, tool: str, raw_tool: str, key: str, value: str) -> None:
    call = parse(client, fixture)
    assert (call.tool, call.raw_tool, call.tool_input.get(key)) == (tool, raw_tool, value)


def test_session_ids_and_working_directories_come_from_each_clients_own_fields() -> None:
    got = {c: (parse(c, f).session_id, parse(c, f).cwd) for c, f in [
        ("claude-code", "PreToolUse-Read"), ("gemini", "BeforeAgent"), ("codex", "UserPromptSubmit"),
        ("cursor", "beforeMCPExecution"), ("copilot", "PreToolUse-read_file")]}
    assert got == {
        "claude-code": ("abc123", PLACEHOLDER),
        "gemini": ("d7a1c3e0-5b2f-4c11-9a8e-2f6b7c9d0e1f", PLACEHOLDER),
        "codex": ("0199a213-81c0-7800-8aa1-bbab2a035a53", PLACEHOLDER),
        "cursor": ("668320d2-2fd8-4888-b33c-2a466fec86e7", PLACEHOLDER),  # from workspace_roots
        "copilot": ("session-identifier", PLACEHOLDER),
    }


def test_prompts_and_post_tool_events_are_recognised() -> None:
    assert (parse("claude-code", "UserPromptSubmit").event, parse("claude-code", "UserPromptSubmit").prompt) == (
        "prompt", "Write a function to calculate the factorial of a number")
    assert parse("gemini", "BeforeAgent").prompt == "Refactor the parser to use shlex"
    assert parse("cursor", "beforeSubmitPrompt").event == "prompt"
    assert parse("gemini", "AfterTool-read_file").tool_response == {"llmContent": "print('hi')\n", "returnDisplay": ""}
    failure = CLIENTS["claude-code"].parse("PostToolUseFailure", {"tool_name": "Bash", "error": "exit 1"})
    assert (failure.event, failure.tool_response) == ("post_tool", {"error": "exit 1", "is_interrupt": None})


def test_vs_code_mcp_names_of_our_tools_get_their_server_back() -> None:
    call = CLIENTS["copilot"].parse("PreToolUse", {"tool_name": "mcp_context-kernel_ctx_execute_file",
                                                   "tool_input": {"path": "a.py"}})
    assert call.tool == "mcp__context-kernel__ctx_execute_file"


GUIDE = "context-kernel is on."


@pytest.mark.parametrize(("client", "event", "expected"), [
    ("claude-code", "SessionStart",
     {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": GUIDE}}),
    ("gemini", "SessionStart", {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": GUIDE}}),
    ("codex", "SessionStart", {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": GUIDE}}),
    ("copilot", "SessionStart", {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": GUIDE}}),
    ("cursor", "sessionStart", {"additional_context": GUIDE}),
    ("claude-code", "PostToolUse",
     {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": GUIDE}}),
    ("gemini", "AfterTool", {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": GUIDE}}),
    ("gemini", "BeforeAgent", {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": GUIDE}}),
    ("claude-code", "PreCompact", {"systemMessage": GUIDE}),
    ("copilot", "PreCompact", {"systemMessage": GUIDE}),
    ("cursor", "postToolUse", {"additional_context": GUIDE}),
])
def test_context_goes_where_each_client_documents_it(client: str, event: str, expected: dict[str, Any]) -> None:
    adapter = CLIENTS[client]
    call = adapter.parse(event, {})
    assert json.loads(adapter.render(call, HookAnswer(context=GUIDE))) == expected


@pytest.mark.parametrize(("client", "event"), [
    ("copilot", "UserPromptSubmit"), ("cursor", "beforeSubmitPrompt"), ("cursor", "afterFileEdit"),
    ("cursor", "beforeReadFile"), ("cursor", "preCompact"), ("gemini", "BeforeTool"),
])
def test_context_is_dropped_where_a_client_has_no_channel_for_it(client: str, event: str) -> None:
    adapter = CLIENTS[client]
    call = adapter.parse(event, {})
    assert not adapter.can_add_context(call)
    assert adapter.render(call, HookAnswer(context=GUIDE)) == adapter.NEUTRAL_OUTPUT


def test_codex_never_gets_allow_or_ask_which_it_rejects() -> None:
    codex = CLIENTS["codex"]
    call = codex.parse("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert codex.render(call, HookAnswer(decision="allow")) == ""
    assert codex.render(call, HookAnswer(decision="ask", reason="sure?")) == ""


def test_blocking_a_prompt_and_a_read_uses_each_clients_fields() -> None:
    no = HookAnswer(decision="deny", reason="not now")
    claude = CLIENTS["claude-code"]
    cursor = CLIENTS["cursor"]
    assert json.loads(claude.render(claude.parse("UserPromptSubmit", {}), no)) == {"decision": "block",
                                                                                  "reason": "not now"}
    assert json.loads(cursor.render(cursor.parse("beforeSubmitPrompt", {}), no)) == {"continue": False,
                                                                                    "user_message": "not now"}
    assert json.loads(cursor.render(cursor.parse("beforeReadFile", {}), no)) == {"permission": "deny"}



def test_every_event_that_setup_registers_is_one_the_hook_understands() -> None:
    from context_kernel.setup.clients import CLIENTS as SETUP

    unknown = {name: [e for e in client.events if e not in CLIENTS[name].EVENTS] for name, client in SETUP.items()}
    assert unknown == {name: [] for name in SETUP}

"""Claude Code hooks.

Format: https://code.claude.com/docs/en/hooks (formerly docs.anthropic.com/en/docs/claude-code/hooks).
Input (stdin): `session_id`, `transcript_path`, `cwd`, `hook_event_name`, plus per event
`tool_name`/`tool_input`/`tool_response` (tools), `error` (PostToolUseFailure), `prompt`
(UserPromptSubmit), `source` = startup|resume|clear|compact (SessionStart), `trigger` (PreCompact).
Output (stdout, exit 0): `hookSpecificOutput` with `hookEventName` and
`permissionDecision`/`permissionDecisionReason`/`additionalContext` (PreToolUse) or
`additionalContext` (PostToolUse, UserPromptSubmit, SessionStart); `decision: "block"` + `reason`
blocks a prompt or flags a tool result. PreCompact only takes the common fields, so what we say
there goes to `systemMessage` (shown to the user). Claude Code's tool names are our vocabulary, so
nothing is renamed here.
"""

from __future__ import annotations

from typing import Any

from .. import client_events
from ..model import HookAnswer, HookCall, HookEvent
from . import copilot
from .common import (
    as_dict,
    claude_style_doc,
    dumps,
    normalised_input,
    text,
    with_event_name,
)

NAME = "claude-code"
EVENTS: dict[str, HookEvent] = client_events.EVENTS[NAME]
_DEFAULT_NAME = client_events.CLAUDE_STYLE_NAMES
NEUTRAL_OUTPUT = client_events.NEUTRAL_OUTPUT[NAME]


def parse(event_name: str, payload: dict[str, Any]) -> HookCall:
    if "hookEventName" in payload and "hook_event_name" not in payload and event_name in copilot.EVENTS:
        # VS Code also runs the hooks of .claude/settings.json, with its own payload (sessionId,
        # run_in_terminal, filePath…); its answers have Claude Code's shape, so only parsing differs.
        return copilot.parse(event_name, payload)
    tool = text(payload.get("tool_name"))
    response = payload.get("tool_response")
    if event_name == "PostToolUseFailure":
        response = {"error": payload.get("error"), "is_interrupt": payload.get("is_interrupt")}
    return HookCall(
        client=NAME,
        event=EVENTS[event_name],
        session_id=text(payload.get("session_id")) or "unknown",
        cwd=text(payload.get("cwd")),
        tool=tool,
        raw_tool=tool,
        tool_input=normalised_input(tool, as_dict(payload.get("tool_input"))),
        tool_response=response,
        prompt=text(payload.get("prompt")),
        source=text(payload.get("source")),
        raw=with_event_name(payload, event_name),
    )


def can_add_context(call: HookCall) -> bool:
    if call.client == copilot.NAME:
        # VS Code running these hooks: its UserPromptSubmit takes the common output only, so text put
        # there is dropped (and a one-time restore after PreCompact would be spent on it).
        return copilot.can_add_context(call)
    return call.event in ("pre_tool", "post_tool", "prompt", "session_start")


def render(call: HookCall, answer: HookAnswer) -> str:
    if answer.neutral:
        return NEUTRAL_OUTPUT
    name = text(call.raw.get("hook_event_name")) or _DEFAULT_NAME[call.event]
    if call.event == "pre_tool":
        specific: dict[str, Any] = {"hookEventName": name}
        if answer.decision:
            specific["permissionDecision"] = answer.decision
        if answer.reason:
            specific["permissionDecisionReason"] = answer.reason
        if answer.context:
            specific["additionalContext"] = answer.context
        return dumps({"hookSpecificOutput": specific})
    doc = claude_style_doc(call, answer, name, blockable=("post_tool", "prompt"))
    return dumps(doc) if doc else NEUTRAL_OUTPUT

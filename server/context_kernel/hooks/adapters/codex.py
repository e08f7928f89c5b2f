"""Codex CLI hooks.

Format: https://developers.openai.com/codex/hooks; the wire schemas are generated in the Codex
repository (openai/codex codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json)
and enforced by codex-rs/hooks/src/engine/output_parser.rs.
Input: `session_id`, `turn_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`,
`permission_mode`; tools add `tool_name`, `tool_input`, `tool_use_id` and `tool_response`
(PostToolUse); UserPromptSubmit adds `prompt`; SessionStart `source`
(startup|resume|clear|compact); PreCompact `trigger`.
Output: Claude-style `hookSpecificOutput` with `hookEventName`. PreToolUse accepts
`permissionDecision: "deny"` + a non-empty `permissionDecisionReason`, and `additionalContext`;
Codex REJECTS `permissionDecision: "allow"` without `updatedInput` and `"ask"` (the hook is then
reported as failed), so allow/ask are never emitted. PostToolUse, UserPromptSubmit and
SessionStart take `additionalContext`; PreCompact only the common fields (`systemMessage`).
Not used: PermissionRequest, PostCompact, SubagentStart/Stop.

Tool names: shell tools arrive as `Bash` (older builds: shell, local_shell, exec_command,
shell_command, also mapped to Bash); `apply_patch` → Edit (its patch stays in
`tool_input.command`; the first file it touches becomes `file_path`); MCP tools are already
`mcp__<server>__<tool>`.
"""

from __future__ import annotations

import re
from typing import Any

from .. import client_events
from ..model import HookAnswer, HookCall, HookEvent
from .common import (
    as_dict,
    claude_style_doc,
    dumps,
    normalised_input,
    text,
    with_event_name,
)

NAME = "codex"
EVENTS: dict[str, HookEvent] = client_events.EVENTS[NAME]
_DEFAULT_NAME = client_events.CLAUDE_STYLE_NAMES
TOOLS: dict[str, str] = {
    "shell": "Bash", "local_shell": "Bash", "exec_command": "Bash", "shell_command": "Bash",
    "apply_patch": "Edit",
}
NEUTRAL_OUTPUT = client_events.NEUTRAL_OUTPUT[NAME]
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def parse(event_name: str, payload: dict[str, Any]) -> HookCall:
    raw_tool = text(payload.get("tool_name"))
    tool = TOOLS.get(raw_tool, raw_tool) if raw_tool else None
    tool_input = as_dict(payload.get("tool_input"))
    if raw_tool == "apply_patch" and isinstance(tool_input.get("command"), str):
        # The patch names its files in its headers; the first one is what the agent edited.
        found = _PATCH_FILE.search(tool_input["command"])
        if found:
            tool_input = {**tool_input, "file_path": found.group(1).strip()}
    return HookCall(
        client=NAME,
        event=EVENTS[event_name],
        session_id=text(payload.get("session_id")) or "unknown",
        cwd=text(payload.get("cwd")),
        tool=tool,
        raw_tool=raw_tool,
        tool_input=normalised_input(tool, tool_input),
        tool_response=payload.get("tool_response"),
        prompt=text(payload.get("prompt")),
        source=text(payload.get("source")),
        raw=with_event_name(payload, event_name),
    )


def can_add_context(call: HookCall) -> bool:
    return call.event in ("pre_tool", "post_tool", "prompt", "session_start")


def render(call: HookCall, answer: HookAnswer) -> str:
    if answer.neutral:
        return NEUTRAL_OUTPUT
    name = text(call.raw.get("hook_event_name")) or _DEFAULT_NAME[call.event]
    doc: dict[str, Any] = {}
    if call.event == "pre_tool":
        specific: dict[str, Any] = {"hookEventName": name}
        if answer.decision == "deny":
            specific["permissionDecision"] = "deny"
            specific["permissionDecisionReason"] = answer.reason or "blocked by context-kernel"
        if answer.context:
            specific["additionalContext"] = answer.context
        if len(specific) > 1:
            doc["hookSpecificOutput"] = specific
    else:
        doc = claude_style_doc(call, answer, name, blockable=("post_tool", "prompt"))
    return dumps(doc) if doc else NEUTRAL_OUTPUT

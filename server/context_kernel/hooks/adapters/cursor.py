"""Cursor agent hooks (`.cursor/hooks.json`, version 1).

Format: https://cursor.com/docs/agent/hooks (field lists cross-checked with the hook libraries
that wrap it: cursor-hooks on npm, CorridorSecurity/hookshot docs/reference-cursor.md, and
context-mode's Cursor adapter).
Input, all events: `hook_event_name`, `conversation_id` (the session id; `session_id` on newer
builds), `generation_id`, `workspace_roots`. Per event: beforeShellExecution/afterShellExecution
`command`, `cwd` (+ `output`, `duration`); beforeMCPExecution/afterMCPExecution `tool_name`,
`tool_input` (a JSON string on some builds), `url` or `command` of the server (+ `result_json`);
beforeReadFile `file_path`, `content`; afterFileEdit `file_path`, `edits`; beforeSubmitPrompt
`prompt`; the newer generic preToolUse/postToolUse `tool_name`, `tool_input` (+ `tool_output`);
sessionStart `source`; preCompact `trigger`.
Output: before* and preToolUse answer `{"permission": "allow"|"deny"|"ask", "user_message": (shown
to the user), "agent_message": (sent to the agent)}`; beforeReadFile only reads `permission`;
beforeSubmitPrompt answers `{"continue": bool, "user_message"}`; sessionStart and postToolUse take
`{"additional_context"}`; the after* events and preCompact are observe-only. Cursor treats an
empty stdout as "no valid response", so a neutral answer is `{}`.

Missing compared with Claude Code: the classic event set (Cursor 1.7) has no SessionStart and no
compaction event; builds that ship `sessionStart`/`preCompact` are supported, older ones simply
never call them. beforeSubmitPrompt, beforeReadFile and the after* events cannot inject context.
MCP events do not name the server, so MCP tools become `mcp__unknown__<tool>` unless the payload
carries a `server`/`server_name`.
"""

from __future__ import annotations

from typing import Any

from .. import client_events
from ..model import HookAnswer, HookCall, HookEvent
from .common import as_dict, dumps, first, mcp_name, normalised_input, text, with_event_name

NAME = "cursor"
EVENTS: dict[str, HookEvent] = client_events.EVENTS[NAME]
# Tool names of the generic preToolUse/postToolUse events (the matchers Cursor documents).
TOOLS: dict[str, str] = {"Shell": "Bash", "Terminal": "Bash", "Read": "Read", "Write": "Write", "Edit": "Edit",
                         "Grep": "Grep", "Glob": "Glob", "WebFetch": "WebFetch", "Task": "Task"}
NEUTRAL_OUTPUT = client_events.NEUTRAL_OUTPUT[NAME]
_CAN_ASK = ("beforeShellExecution", "beforeMCPExecution", "preToolUse")


def _mcp_tool(payload: dict[str, Any], raw: str) -> str:
    if raw.startswith("mcp__"):
        return raw
    bare = raw.split(":", 1)[1] if raw.startswith("MCP:") else raw
    return mcp_name(text(first(payload, "server", "server_name")), bare)


def _tool(event_name: str, payload: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any]]:
    """(normalised tool, Cursor's own name, tool input) for one event."""
    if event_name in ("beforeShellExecution", "afterShellExecution"):
        return "Bash", event_name, {"command": payload.get("command"), "cwd": payload.get("cwd")}
    if event_name == "beforeReadFile":
        return "Read", event_name, {"file_path": payload.get("file_path")}
    if event_name == "afterFileEdit":
        return "Edit", event_name, {"file_path": payload.get("file_path"), "edits": payload.get("edits")}
    raw = text(payload.get("tool_name"))
    if raw is None:
        return None, None, {}
    tool_input = as_dict(payload.get("tool_input"))
    if event_name in ("beforeMCPExecution", "afterMCPExecution") or raw.startswith(("MCP:", "mcp__")):
        return _mcp_tool(payload, raw), raw, tool_input
    return TOOLS.get(raw, raw), raw, tool_input


def parse(event_name: str, payload: dict[str, Any]) -> HookCall:
    tool, raw_tool, tool_input = _tool(event_name, payload)
    tool_input = {k: v for k, v in tool_input.items() if v is not None}
    roots = payload.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    return HookCall(
        client=NAME,
        event=EVENTS[event_name],
        session_id=text(first(payload, "conversation_id", "session_id")) or "unknown",
        cwd=text(payload.get("cwd")) or root,
        tool=tool,
        raw_tool=raw_tool,
        tool_input=normalised_input(tool, tool_input),
        tool_response=first(payload, "tool_output", "output", "result_json", "error_message"),
        prompt=text(payload.get("prompt")),
        source=text(first(payload, "source", "trigger")) if event_name == "sessionStart" else None,
        raw=with_event_name(payload, event_name),
    )


def _event_name(call: HookCall) -> str:
    return text(call.raw.get("hook_event_name")) or {
        "pre_tool": "preToolUse", "post_tool": "postToolUse", "prompt": "beforeSubmitPrompt",
        "pre_compact": "preCompact", "session_start": "sessionStart", "stop": "stop",
    }[call.event]


def can_add_context(call: HookCall) -> bool:
    name = _event_name(call)
    return name in _CAN_ASK or name in ("postToolUse", "sessionStart")


def render(call: HookCall, answer: HookAnswer) -> str:
    if answer.neutral:
        return NEUTRAL_OUTPUT
    name = _event_name(call)
    doc: dict[str, Any] = {}
    if name == "beforeReadFile":
        if answer.decision in ("allow", "deny"):
            doc["permission"] = answer.decision
    elif name in _CAN_ASK:
        if answer.decision:
            doc["permission"] = answer.decision
        if answer.reason and answer.decision in ("deny", "ask"):
            doc["user_message"] = answer.reason
            doc["agent_message"] = answer.reason
        elif answer.context:
            doc["agent_message"] = answer.context
    elif name == "beforeSubmitPrompt":
        if answer.decision == "deny":
            doc["continue"] = False
            if answer.reason:
                doc["user_message"] = answer.reason
    elif name in ("postToolUse", "sessionStart") and answer.context:
        doc["additional_context"] = answer.context
    return dumps(doc) if doc else NEUTRAL_OUTPUT

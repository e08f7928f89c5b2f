"""Gemini CLI hooks.

Format: https://geminicli.com/docs/hooks/reference (source: google-gemini/gemini-cli
docs/hooks/reference.md and packages/core/src/hooks/types.ts).
Input: `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`; BeforeTool/AfterTool
add `tool_name`, `tool_input`, `tool_response` (AfterTool) and `mcp_context` {server_name,
tool_name} for MCP tools; BeforeAgent adds `prompt`; SessionStart `source` (startup|resume|clear);
PreCompress `trigger`.
Output: `decision` ("allow" | "deny"/"block" | "ask") with `reason` (sent to the agent), and
`hookSpecificOutput.additionalContext` on AfterTool, BeforeAgent and SessionStart.
Missing: BeforeTool cannot add context (only deny/rewrite), so no nudges reach a Gemini agent
before a tool runs; PreCompress is advisory (`systemMessage` only). AfterAgent (end of a turn) is
our `stop`. Gemini has no SessionStart "compact" source: after compression the agent is not
re-primed.

Tool names are mapped to Claude Code's: run_shell_command→Bash, read_file→Read, write_file→Write,
replace→Edit, grep_search (formerly search_file_content)→Grep, glob→Glob, web_fetch→WebFetch,
google_web_search→WebSearch, write_todos→TodoWrite; MCP tools → mcp__<server>__<tool>.
"""

from __future__ import annotations

from typing import Any

from .. import client_events
from ..model import HookAnswer, HookCall, HookEvent
from .common import as_dict, dumps, mcp_name, normalised_input, text, with_event_name

NAME = "gemini"
EVENTS: dict[str, HookEvent] = client_events.EVENTS[NAME]
_DEFAULT_NAME = {"pre_tool": "BeforeTool", "post_tool": "AfterTool", "prompt": "BeforeAgent",
                 "pre_compact": "PreCompress", "session_start": "SessionStart", "stop": "AfterAgent"}
TOOLS: dict[str, str] = {
    "run_shell_command": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "replace": "Edit",
    "grep_search": "Grep",
    "search_file_content": "Grep",
    "glob": "Glob",
    "web_fetch": "WebFetch",
    "google_web_search": "WebSearch",
    "write_todos": "TodoWrite",
}
NEUTRAL_OUTPUT = client_events.NEUTRAL_OUTPUT[NAME]


def _tool(payload: dict[str, Any]) -> tuple[str | None, str | None]:
    raw = text(payload.get("tool_name"))
    if raw is None:
        return None, None
    mcp = payload.get("mcp_context")
    if isinstance(mcp, dict) and text(mcp.get("tool_name")):
        return mcp_name(text(mcp.get("server_name")), str(mcp["tool_name"])), raw
    return TOOLS.get(raw, raw), raw


def parse(event_name: str, payload: dict[str, Any]) -> HookCall:
    tool, raw_tool = _tool(payload)
    return HookCall(
        client=NAME,
        event=EVENTS[event_name],
        session_id=text(payload.get("session_id")) or "unknown",
        cwd=text(payload.get("cwd")),
        tool=tool,
        raw_tool=raw_tool,
        tool_input=normalised_input(tool, as_dict(payload.get("tool_input"))),
        tool_response=payload.get("tool_response"),
        prompt=text(payload.get("prompt")),
        source=text(payload.get("source")),
        raw=with_event_name(payload, event_name),
    )


def can_add_context(call: HookCall) -> bool:
    return call.event in ("post_tool", "prompt", "session_start")


def render(call: HookCall, answer: HookAnswer) -> str:
    if answer.neutral:
        return NEUTRAL_OUTPUT
    name = text(call.raw.get("hook_event_name")) or _DEFAULT_NAME[call.event]
    doc: dict[str, Any] = {}
    if call.event == "pre_compact":
        if answer.context or answer.reason:
            doc["systemMessage"] = answer.context or answer.reason
        return dumps(doc) if doc else NEUTRAL_OUTPUT
    if call.event in ("pre_tool", "post_tool", "prompt") and answer.decision:
        doc["decision"] = answer.decision
        if answer.reason:
            doc["reason"] = answer.reason
    if answer.context and can_add_context(call):
        doc["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": answer.context}
    return dumps(doc) if doc else NEUTRAL_OUTPUT

"""VS Code Copilot agent hooks (Preview), `.github/hooks/*.json`.

Format: https://code.visualstudio.com/docs/agent-customization/hooks and the reference
https://code.visualstudio.com/docs/agents/reference/hooks-reference (microsoft/vscode-docs).
Input, all events: `timestamp`, `cwd`, `sessionId` (camelCase, unlike the other clients),
`hookEventName`, `transcript_path`; tools add `tool_name`, `tool_input` (VS Code's own camelCase
keys, e.g. `filePath`), `tool_use_id` and `tool_response` (PostToolUse); UserPromptSubmit adds
`prompt`; SessionStart `source` (currently always "new"); PreCompact `trigger`.
Output: `hookSpecificOutput` {hookEventName, permissionDecision, permissionDecisionReason,
additionalContext} for PreToolUse; `decision: "block"` + `reason` and
`hookSpecificOutput.additionalContext` for PostToolUse; `hookSpecificOutput.additionalContext` for
SessionStart. UserPromptSubmit and PreCompact take only the common fields (`continue`,
`stopReason`, `systemMessage`), so nothing can be injected there; a PreCompact message goes to
`systemMessage`. SessionStart never says "compact": the agent is not re-primed after compaction.

Tool names (vscode-copilot-chat src/extension/tools/common/toolNames.ts) are mapped to Claude
Code's: run_in_terminal→Bash, read_file→Read, create_file→Write, replace_string_in_file /
multi_replace_string_in_file / insert_edit_into_file / apply_patch→Edit, grep_search→Grep,
file_search→Glob, fetch_webpage→WebFetch, manage_todo_list→TodoWrite, runSubagent→Task (plus the
names used in the VS Code docs' examples: runTerminalCommand, editFiles, createFile). MCP tools
named `mcp_<server>_<tool>` become `mcp__<server>__<tool>` for our own tools.
"""

from __future__ import annotations

from typing import Any

from .. import client_events
from ..model import HookAnswer, HookCall, HookEvent
from .common import (
    as_dict,
    claude_style_doc,
    dumps,
    first,
    normalised_input,
    split_prefixed_mcp,
    text,
    with_event_name,
)

NAME = "copilot"
EVENTS: dict[str, HookEvent] = client_events.EVENTS[NAME]
_DEFAULT_NAME = client_events.CLAUDE_STYLE_NAMES
TOOLS: dict[str, str] = {
    "run_in_terminal": "Bash", "runTerminalCommand": "Bash",
    "read_file": "Read", "copilot_readFile": "Read",
    "create_file": "Write", "createFile": "Write", "copilot_createFile": "Write",
    "replace_string_in_file": "Edit", "multi_replace_string_in_file": "Edit", "insert_edit_into_file": "Edit",
    "apply_patch": "Edit", "editFiles": "Edit", "copilot_replaceString": "Edit",
    "copilot_multiReplaceString": "Edit", "copilot_insertEdit": "Edit", "copilot_applyPatch": "Edit",
    "grep_search": "Grep", "copilot_findTextInFiles": "Grep",
    "file_search": "Glob", "copilot_findFiles": "Glob",
    "fetch_webpage": "WebFetch", "copilot_fetchWebPage": "WebFetch",
    "manage_todo_list": "TodoWrite",
    "runSubagent": "Task",
}
NEUTRAL_OUTPUT = client_events.NEUTRAL_OUTPUT[NAME]


def parse(event_name: str, payload: dict[str, Any]) -> HookCall:
    raw_tool = text(payload.get("tool_name"))
    tool = (TOOLS.get(raw_tool) or split_prefixed_mcp(raw_tool) or raw_tool) if raw_tool else None
    tool_input = as_dict(payload.get("tool_input"))
    replacements = tool_input.get("replacements")
    if tool == "Edit" and isinstance(replacements, list) and replacements and isinstance(replacements[0], dict):
        # multi_replace_string_in_file: the first replacement names the file.
        path = first(replacements[0], "filePath", "file_path")
        if path is not None and "filePath" not in tool_input:
            tool_input = {**tool_input, "filePath": path}
    return HookCall(
        client=NAME,
        event=EVENTS[event_name],
        session_id=text(first(payload, "sessionId", "session_id")) or "unknown",
        cwd=text(payload.get("cwd")),
        tool=tool,
        raw_tool=raw_tool,
        tool_input=normalised_input(tool, tool_input),
        tool_response=payload.get("tool_response"),
        prompt=text(payload.get("prompt")),
        source=text(payload.get("source")),
        raw=with_event_name(payload, event_name, key="hookEventName"),
    )


def can_add_context(call: HookCall) -> bool:
    return call.event in ("pre_tool", "post_tool", "session_start")


def render(call: HookCall, answer: HookAnswer) -> str:
    if answer.neutral:
        return NEUTRAL_OUTPUT
    name = text(first(call.raw, "hookEventName", "hook_event_name")) or _DEFAULT_NAME[call.event]
    doc: dict[str, Any] = {}
    if call.event == "pre_tool":
        specific: dict[str, Any] = {"hookEventName": name}
        if answer.decision:
            specific["permissionDecision"] = answer.decision
        if answer.reason:
            specific["permissionDecisionReason"] = answer.reason
        if answer.context:
            specific["additionalContext"] = answer.context
        doc["hookSpecificOutput"] = specific
    else:  # UserPromptSubmit output cannot carry context in VS Code: only PostToolUse is blockable
        doc = claude_style_doc(call, answer, name, blockable=("post_tool",))
    return dumps(doc) if doc else NEUTRAL_OUTPUT

"""Helpers shared by the client adapters (standard library only).

Every client sends roughly the same facts (a session id, a tool name, its input) under different
keys and names; these helpers do the boring part of translating them into `HookCall`'s vocabulary
(Claude Code's tool names and input keys), so routing and event extraction are written once.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import HookAnswer, HookCall

# Our own MCP tools, longest first so `ctx_execute_file` is not mistaken for `ctx_execute`.
CTX_TOOLS: tuple[str, ...] = tuple(sorted(
    ("ctx_execute", "ctx_execute_file", "ctx_batch_execute", "ctx_index", "ctx_search",
     "ctx_fetch_and_index", "ctx_stats", "ctx_doctor", "ctx_purge", "ctx_upgrade", "ctx_insight",
     "ctx_export"),
    key=len, reverse=True,
))

_URL = re.compile(r"https?://[^\s\"'<>)\]]+")


def dumps(doc: dict[str, Any]) -> str:
    """The exact stdout of a hook: one compact JSON object."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def with_event_name(payload: dict[str, Any], event_name: str, key: str = "hook_event_name") -> dict[str, Any]:
    """The payload, stamped with the event the hook was invoked for (what `render` answers to)."""
    return payload if payload.get(key) == event_name else {**payload, key: event_name}


def text(value: Any) -> str | None:
    """A non-empty string, or None (clients send null, numbers or nothing for missing fields)."""
    if value is None:
        return None
    value = value if isinstance(value, str) else str(value)
    return value or None


def as_dict(value: Any) -> dict[str, Any]:
    """Tool input as a dict: some clients send it as a JSON string (Cursor's MCP events)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def first(mapping: dict[str, Any], *keys: str) -> Any:
    """The first present, non-empty value among `keys`."""
    for key in keys:
        value = mapping.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def first_url(value: Any) -> str | None:
    """The first http(s) URL in a string or a list of strings (Gemini's web_fetch takes a prompt)."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str):
            found = _URL.search(item)
            if found:
                return found.group(0)
    return None


def mcp_name(server: str | None, tool: str) -> str:
    return f"mcp__{server or 'unknown'}__{tool}"


def split_prefixed_mcp(name: str, prefix: str = "mcp_") -> str | None:
    """`mcp_<server>_<tool>` (single underscores, as VS Code names MCP tools) → `mcp__<server>__<tool>`.

    The server/tool boundary is ambiguous in general; it is only recovered for our own tools,
    whose names we know. Other names are left as they are (None).
    """
    if not name.startswith(prefix) or name.startswith("mcp__"):
        return None
    rest = name[len(prefix):]
    for tool in CTX_TOOLS:
        if rest == tool:
            return mcp_name(None, tool)
        if rest.endswith("_" + tool):
            return mcp_name(rest[: -len(tool) - 1], tool)
    return None


def normalised_input(tool: str | None, raw_input: dict[str, Any]) -> dict[str, Any]:
    """Add Claude Code's input keys for the tools routing and extraction care about.

    The client's own keys are kept (the extractor may want them); ours are added alongside.
    """
    ti = dict(raw_input)
    if tool == "Bash":
        command = first(ti, "command", "cmd", "commandLine")
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        if command is not None:
            ti["command"] = str(command)
    elif tool in ("Read", "Write", "Edit"):
        path = first(ti, "file_path", "filePath", "absolute_path", "path", "target_file", "file")
        if path is None and isinstance(ti.get("files"), list) and ti["files"]:
            path = ti["files"][0]
        if path is not None:
            ti["file_path"] = str(path)
        if tool == "Write" and "content" not in ti and ti.get("contents") is not None:
            ti["content"] = ti["contents"]
        if tool == "Edit":
            for ours, theirs in (("old_string", "oldString"), ("new_string", "newString")):
                if ours not in ti and theirs in ti:
                    ti[ours] = ti[theirs]
    elif tool == "Grep":
        pattern = first(ti, "pattern", "query", "regex")
        if pattern is not None:
            ti["pattern"] = str(pattern)
        path = first(ti, "path", "dir_path")
        if path is not None:
            ti["path"] = str(path)
    elif tool == "WebFetch":
        url = first(ti, "url", "uri") or first_url(first(ti, "urls", "prompt", "query"))
        if url is not None:
            ti["url"] = str(url)
    return ti


def claude_style_doc(call: HookCall, answer: HookAnswer, name: str, blockable: tuple[str, ...]) -> dict[str, Any]:
    """The answer to every event but PreToolUse in Claude Code's shape, which Codex and VS Code share.

    `blockable`: the events whose result a `decision: block` can flag (they differ per client).
    """
    doc: dict[str, Any] = {}
    if call.event in blockable or call.event == "session_start":
        if answer.decision == "deny" and call.event in blockable:
            doc["decision"] = "block"
            doc["reason"] = answer.reason or "blocked by context-kernel"
        if answer.context:
            doc["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": answer.context}
    elif call.event == "pre_compact" and (answer.context or answer.reason):
        doc["systemMessage"] = answer.context or answer.reason  # no client injects text here
    return doc

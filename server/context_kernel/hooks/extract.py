"""Hook calls → session events: what a PostToolUse / UserPromptSubmit tells us worth remembering.

A pure function of the `HookCall` (standard library only, no I/O): it runs inside the hook process on
every tool call. Tool names and payloads are Claude Code's, which every adapter normalises to. The
shapes come from the hooks reference (https://code.claude.com/docs/en/hooks, "PostToolUse input":
`tool_name`, `tool_input`, `tool_response`; "PostToolUseFailure input": `error`, `is_interrupt`) and
the per-tool `tool_input` fields collected in https://github.com/anthropics/claude-code/issues/3671
(Read/Write/Edit `file_path`, MultiEdit `edits`, NotebookEdit `notebook_path`, Bash `command` with
a `{stdout, stderr, interrupted, isImage}` response, TodoWrite `todos[{content, status, activeForm}]`,
Task/Agent `{description, prompt, subagent_type}`; Claude Code 2.1.63 renamed Task to Agent and 2.1.16
added TaskCreate/TaskUpdate next to TodoWrite).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from .model import Event, HookCall
from .prompts import classify_prompt, prompt_events
from .shell_commands import shell_events
from .text import SCAN_CHARS, clip, error_line, first_line, one_line, relative_path, text_of

# The public surface hook_cli and the tests import from here; prompts, shell commands and text helpers
# live in their own modules and are re-exported so `from .extract import ...` keeps working.
__all__ = [
    "OUR_TOOLS", "RULE_NAMES", "SCAN_CHARS", "classify_prompt", "events_from", "is_rule_file",
    "prompt_events", "shell_events",
]

# Files whose content is a standing instruction to the agent: reading one means a rule is in force.
RULE_NAMES = frozenset({
    "claude.md", "claude.local.md", "agents.md", "agent.md", "gemini.md", ".cursorrules", ".windsurfrules",
    ".clinerules", "copilot-instructions.md", "contributing.md", ".editorconfig", "conventions.md",
})
RULE_DIRS = (".cursor/rules/", ".github/instructions/", ".claude/rules/", ".windsurf/rules/", ".clinerules/")

OUR_TOOLS = frozenset({
    "ctx_execute", "ctx_execute_file", "ctx_follow", "ctx_batch_execute", "ctx_search", "ctx_fetch_and_index",
    "ctx_index", "ctx_export", "ctx_stats", "ctx_purge",
})
# Read-only bookkeeping tools: nothing about the work changes when they run.
SILENT_TOOLS = frozenset({"TodoRead", "TaskList", "TaskGet", "TaskOutput", "BashOutput", "KillShell", "LS",
                          "ListMcpResourcesTool", "ReadMcpResourceTool"})
SECRET_KEY = re.compile(r"token|secret|passw|api_?key|auth|cookie|credential|private", re.IGNORECASE)


_Handler = Callable[[HookCall, dict[str, Any]], list[Event]]


def events_from(call: HookCall) -> list[Event]:
    """The events one hook call yields (often none). Never raises on odd payloads."""
    if call.event == "prompt":
        return prompt_events(call.prompt or "")
    if call.event == "session_start":
        return _session_start(call)
    if call.event != "post_tool" or not call.tool:
        return []
    tool_input = call.tool_input if isinstance(call.tool_input, dict) else {}
    failure = _failure(call)
    if failure is _INTERRUPTED:
        return []  # the user pressed Esc: neither an error nor a finished action
    if failure is not None:
        return [Event("error", "errors", _error_data(_describe(call.tool, tool_input, call.cwd), failure))]
    handler = _HANDLERS.get(call.tool)
    if handler is not None:
        return handler(call, tool_input)
    if call.tool.startswith("mcp__"):
        return _mcp(call, tool_input)
    if call.tool in SILENT_TOOLS:
        return []
    return [Event("tool", "tools", clip(call.tool, 100), priority=4)]


# --- failures ------------------------------------------------------------------------------------

_INTERRUPTED = "\0interrupted"


def _failure(call: HookCall) -> str | None:
    """The error text when the tool failed, `_INTERRUPTED` when the user stopped it, else None."""
    raw = call.raw if isinstance(call.raw, dict) else {}
    if raw.get("is_interrupt") is True:
        return _INTERRUPTED
    if raw.get("hook_event_name") == "PostToolUseFailure" or isinstance(raw.get("error"), str):
        return text_of(raw.get("error") or raw.get("error_message")) or "failed"
    response = call.tool_response
    if isinstance(response, dict):
        if response.get("is_interrupt") is True or (response.get("interrupted") is True
                                                     and not response.get("stderr")):
            return _INTERRUPTED
        if response.get("is_error") is True or response.get("isError") is True:
            return text_of(response.get("content") or response.get("error") or response) or "failed"
        if response.get("error"):  # Gemini AfterTool and others: {"llmContent", "returnDisplay", "error"}
            return text_of(response["error"]) or "failed"
    return None


def _describe(tool: str, tool_input: dict[str, Any], cwd: str | None) -> str:
    """A short name for what was attempted, to head an error event."""
    if tool == "Bash":
        return clip(one_line(str(tool_input.get("command") or "")[:1000]), 120) or "Bash"
    path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path")
    if isinstance(path, str) and path:
        return f"{tool} {relative_path(path, cwd)}"
    if tool.startswith("mcp__"):
        return _mcp_summary(tool, tool_input, cwd)
    if isinstance(tool_input.get("url"), str):
        return f"{tool} {tool_input['url']}"
    return tool


def _error_data(what: str, error_text: str) -> str:
    return clip(f"{clip(what, 140)} → {clip(error_line(error_text), 150)}", 300)


# --- files, rules --------------------------------------------------------------------------------

def is_rule_file(path: str) -> bool:
    posix = path.replace("\\", "/")
    return PurePath(posix).name.lower() in RULE_NAMES or any(d in posix for d in RULE_DIRS)


def _file(kind: str) -> _Handler:
    def handler(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path")
        if not isinstance(path, str) or not path:
            return []
        rel = relative_path(path, call.cwd)
        if kind == "file_read":
            # A rule file read is the rule coming into force; as a plain read it would only be noise.
            if is_rule_file(path):
                return [Event("rule", "rules", rel)]
            return [Event("file_read", "files", rel, priority=2)]
        events = [Event(kind, "files", rel)]
        if is_rule_file(path):
            events.append(Event("rule", "rules", f"{rel} (changed)"))
        return events
    return handler


# --- tasks ---------------------------------------------------------------------------------------

def _task(status: str, content: str) -> Event:
    status = status or "pending"
    if status in ("completed", "deleted", "cancelled"):
        # Done work matters less than open work once the context is cut.
        return Event("task_done", "tasks", clip(f"[{status}] {content}", 300), priority=2)
    return Event("task", "tasks", clip(f"[{status}] {content}", 300))


def _todo_write(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    todos = tool_input.get("todos")
    if not isinstance(todos, list):
        return []
    events = []
    for todo in todos:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str) and todo["content"].strip():
            events.append(_task(str(todo.get("status") or "pending"), one_line(todo["content"])))
    return events


def _task_id(call: HookCall, tool_input: dict[str, Any]) -> str | None:
    ident = tool_input.get("taskId")
    response = call.tool_response
    if ident is None and isinstance(response, dict):
        task = response.get("task")
        ident = task.get("id") if isinstance(task, dict) else response.get("taskId")
    return str(ident) if ident not in (None, "") else None


def _task_create(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    subject = one_line(str(tool_input.get("subject") or tool_input.get("description") or ""))
    if not subject:
        return []
    ident = _task_id(call, tool_input)
    # "(#id)" lets the snapshot match a later TaskUpdate that names only the id.
    return [_task("pending", f"{subject} (#{ident})" if ident else subject)]


def _task_update(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    status = tool_input.get("status")
    ident = _task_id(call, tool_input)
    subject = one_line(str(tool_input.get("subject") or ""))
    if not isinstance(status, str) or not (subject or ident):
        return []
    content = f"{subject} (#{ident})" if subject and ident else subject or f"task #{ident}"
    return [_task(status, content)]


# --- shell, agents, web --------------------------------------------------------------------------

def _bash(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    command = tool_input.get("command")
    if not isinstance(command, str) or not command.strip():
        return []
    events = shell_events(command, call.cwd)
    response = call.tool_response
    if isinstance(response, dict):
        problem = _bash_problem(response)
        if problem:
            events.append(Event("error", "errors", _error_data(_describe("Bash", tool_input, call.cwd), problem)))
    return events


_STDERR_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception)\b|^(?:[Ee]rror|fatal|ERROR|FATAL)\b"
    r"|command not found|No such file or directory|Permission denied|^panic:|\bFAILED\b", re.MULTILINE)


def _bash_problem(response: dict[str, Any]) -> str | None:
    """Error text of a Bash result that reported success (older clients, other adapters)."""
    code = next((response[k] for k in ("exit_code", "exitCode", "returncode", "return_code") if k in response), 0)
    stderr = text_of(response.get("stderr"))
    if isinstance(code, int) and code != 0:
        return stderr or text_of(response.get("stdout")) or f"exit code {code}"
    if stderr and _STDERR_ERROR.search(stderr):
        return stderr
    return None


def _subagent(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    kind = str(tool_input.get("subagent_type") or "agent")
    what = one_line(str(tool_input.get("description") or first_line(str(tool_input.get("prompt") or ""))))
    return [Event("subagent", "tools", clip(f"{kind}: {what}" if what else kind, 300))]


def _web_fetch(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    url = tool_input.get("url")
    return [Event("web", "tools", clip(f"fetch {url}", 300))] if isinstance(url, str) and url else []


def _web_search(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    query = tool_input.get("query")
    return [Event("web", "tools", clip(f"search: {one_line(query)}", 300))] if isinstance(query, str) else []


def _search(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    pattern = tool_input.get("pattern")
    if not isinstance(pattern, str):
        return []
    where = tool_input.get("path")
    place = f" in {relative_path(where, call.cwd)}" if isinstance(where, str) and where else ""
    return [Event("search", "tools", clip(f"{call.tool} {one_line(pattern)}{place}", 300), priority=4)]


def _plan(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    plan = tool_input.get("plan")
    if not isinstance(plan, str) or not plan.strip():
        return []
    # The approved plan is a decision the user made; its first line is usually its title.
    return [Event("plan", "decisions", clip("plan: " + first_line(plan.lstrip("# ")), 300))]


# --- MCP tools (ours and others) -----------------------------------------------------------------

def _split_mcp(tool: str) -> tuple[str, str]:
    parts = tool.split("__", 2)
    return (parts[1], parts[2]) if len(parts) == 3 else ("", tool)


def _mcp_summary(tool: str, tool_input: dict[str, Any], cwd: str | None) -> str:
    _, name = _split_mcp(tool)
    if name in OUR_TOOLS:
        return _ours_summary(name, tool_input, cwd)
    args: list[str] = []
    for key, value in tool_input.items():
        if len(args) == 3:
            break
        if SECRET_KEY.search(key) or not isinstance(value, (str, int, float, bool)):
            continue
        args.append(f"{key}={clip(one_line(str(value)), 40)}")
    return clip(f"{tool} {' '.join(args)}".rstrip(), 300)


def _ours_summary(name: str, tool_input: dict[str, Any], cwd: str | None) -> str:
    get = tool_input.get
    if name == "ctx_execute":
        what = get("intent") or first_line(str(get("code") or ""))
        return clip(f"ctx_execute {get('kernel') or get('language') or ''}: {one_line(str(what))}", 300)
    if name == "ctx_execute_file":
        return clip(f"ctx_execute_file {relative_path(str(get('path') or ''), cwd)}", 300)
    if name == "ctx_search":
        queries = get("queries")
        listed = " | ".join(str(q) for q in queries) if isinstance(queries, list) else ""
        return clip(f"ctx_search: {one_line(listed)}", 300)
    if name == "ctx_fetch_and_index":
        requests = get("requests")
        count = f" +{len(requests)} more" if isinstance(requests, list) and requests else ""
        return clip(f"ctx_fetch_and_index {get('url') or ''}{count}".rstrip(), 300)
    if name == "ctx_index":
        return clip(f"ctx_index {get('path') or get('source') or 'text'}", 300)
    if name == "ctx_batch_execute":
        commands = get("commands")
        return f"ctx_batch_execute {len(commands) if isinstance(commands, list) else 0} commands"
    return name


def _mcp(call: HookCall, tool_input: dict[str, Any]) -> list[Event]:
    assert call.tool is not None
    _, name = _split_mcp(call.tool)
    summary = _mcp_summary(call.tool, tool_input, call.cwd)
    events = [Event("mcp_tool", "tools", summary)]
    if name == "ctx_execute_file" and isinstance(tool_input.get("path"), str):
        # Processing a file through the kernel is reading it, minus the flood.
        events.append(Event("file_read", "files", relative_path(tool_input["path"], call.cwd), priority=2))
    return events


def _session_start(call: HookCall) -> list[Event]:
    if not call.cwd or call.source not in (None, "startup", "clear"):
        return []  # on resume/compact the directory is already recorded
    return [Event("cwd", "environment", call.cwd, priority=3)]


_HANDLERS: dict[str, _Handler] = {
    "Read": _file("file_read"), "NotebookRead": _file("file_read"),
    "Edit": _file("file_edit"), "MultiEdit": _file("file_edit"), "NotebookEdit": _file("file_edit"),
    "Write": _file("file_write"),
    "TodoWrite": _todo_write, "TaskCreate": _task_create, "TaskUpdate": _task_update,
    "Bash": _bash, "Task": _subagent, "Agent": _subagent,
    "WebFetch": _web_fetch, "WebSearch": _web_search, "Grep": _search, "Glob": _search,
    "ExitPlanMode": _plan,
}

"""PreToolUse policy: which tool calls to deny, redirect or nudge (standard library only).

Order of the rules:
1. Deny rules (Claude Code's `permissions.deny`, loaded by `security.deny`) always apply, server or
   not: a Bash command → `check_shell`; our own MCP tools → `ctx_execute` / `ctx_execute_file`
   code → `check_code`, each `ctx_batch_execute` command → `check_shell`, the `path` of
   `ctx_execute_file` / `ctx_index` → `check_path`. A match denies with the rule in the reason.
2. Only while a context-kernel server is alive (else the agent would be sent to tools nobody
   answers): WebFetch is denied with a pointer to ctx_fetch_and_index + ctx_search, and a Bash
   command that would print a web page (the rule: `shell_fetch`) with a pointer to
   ctx_fetch_and_index / ctx_execute.
3. Still only with a live server: the first Read, Grep and Bash of a session get a one-line nudge
   in the agent's context (never a denial), when the client can carry context at this event.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from . import nudges
from .adapters.common import CTX_TOOLS
from .model import NEUTRAL, HookAnswer, HookCall
from .shell_fetch import PrintingFetch, find_printing_fetch

if TYPE_CHECKING:  # creating Protocol classes costs ~2 ms; only the type checker needs them
    class Violation(Protocol):
        @property
        def reason(self) -> str: ...

    class DenyRulesLike(Protocol):
        """What routing needs from `security.deny.DenyRules`."""

        def check_shell(self, command: str, /) -> Violation | None: ...

        def check_code(self, language: str, code: str, /) -> Violation | None: ...

        def check_path(self, path: str, project_dir: Path, home: Path | None = None, /) -> Violation | None: ...

        def check_url(self, url: str, /) -> Violation | None: ...


@dataclass
class RoutingContext:
    """What the policy needs to know besides the call itself."""

    home: Path
    project_dir: Path
    server_alive: bool
    load_rules: Callable[[], DenyRulesLike | None] = lambda: None
    """Builds the deny rules; called at most once, and only for calls that need them."""
    can_nudge: bool = True
    """False when the client cannot show text to the agent at this event (a nudge would be lost)."""
    user_home: Path | None = None
    """The user's home directory, for `Read(~/...)` rules."""
    _loaded: bool = field(default=False, init=False, repr=False)
    _rules: DenyRulesLike | None = field(default=None, init=False, repr=False)

    def rules(self) -> DenyRulesLike | None:
        if not self._loaded:
            self._rules, self._loaded = self.load_rules(), True
        return self._rules


NUDGES: dict[str, str] = {
    "Read": ("context-kernel (shown once): to analyse a large file without loading it into your context, "
             "call ctx_execute_file(path, language, code): the file is in FILE_CONTENT and only what "
             "your code prints comes back."),
    "Grep": ("context-kernel (shown once): to search fetched docs, indexed files or earlier long outputs, "
             "ctx_search(queries=[...]) returns only the matching snippets; to scan many files, "
             "ctx_execute(language=\"shell\", code=...) and print only what you need."),
    "Bash": ("context-kernel (shown once): for commands with long output (builds, tests, logs), use "
             "ctx_execute(language=\"shell\", code=..., intent=\"what you look for\"): the full output "
             "is indexed and only the relevant lines come back."),
}


def decide(call: HookCall, ctx: RoutingContext) -> HookAnswer:
    """The answer to a pre_tool call, by the rules in this module's docstring (neutral otherwise)."""
    if call.event != "pre_tool" or not call.tool:
        return NEUTRAL
    violation = _deny_rule_violation(call, ctx)
    if violation is not None:
        return HookAnswer(decision="deny", reason=violation[:1].upper() + violation[1:])
    if not ctx.server_alive or ctx_tool(call.tool):
        return NEUTRAL
    if call.tool == "WebFetch":
        return HookAnswer(decision="deny", reason=_webfetch_reason(call.tool_input))
    if call.tool == "Bash":
        fetch = find_printing_fetch(str(call.tool_input.get("command") or ""))
        if fetch is not None:
            return HookAnswer(decision="deny", reason=_shell_fetch_reason(fetch))
    if call.tool in NUDGES and ctx.can_nudge and nudges.claim(ctx.home, call.session_id, call.tool):
        return HookAnswer(context=NUDGES[call.tool])
    return NEUTRAL


def ctx_tool(tool: str) -> str | None:
    """`ctx_execute` for `mcp__<any server>__ctx_execute`; None for every other tool."""
    if not tool.startswith("mcp__"):
        return None
    name = tool.rsplit("__", 1)[-1]
    return name if name in CTX_TOOLS else None


def _deny_rule_violation(call: HookCall, ctx: RoutingContext) -> str | None:
    """The reason of the first deny rule the call breaks (its path, then commands, code, URLs), or None."""
    ti = call.tool_input
    name = ctx_tool(call.tool or "")
    urls = _fetch_urls(ti) if name == "ctx_fetch_and_index" else []
    paths = [ti["path"]] if name in ("ctx_execute_file", "ctx_index") and isinstance(ti.get("path"), str) else []
    shell, code = _commands_and_code(call.tool, name, ti)
    if not (paths or shell or code or urls):
        return None  # nothing a rule could match: the rules are not even loaded
    rules = ctx.rules()
    if rules is None:
        return None
    found = (
        [rules.check_path(p, ctx.project_dir, ctx.user_home) for p in paths]
        + [rules.check_shell(c) for c in shell]
        + [rules.check_code(lang, src) for lang, src in code]
        + [rules.check_url(u) for u in urls]
    )
    return next((v.reason for v in found if v is not None), None)


def _fetch_urls(ti: dict[str, Any]) -> list[str]:
    """The addresses a ctx_fetch_and_index call asks for: WebFetch rules follow the page to our fetch
    tool, which must not be a way around them."""
    requests = ti.get("requests")
    items: list[Any] = requests if isinstance(requests, list) else []
    return [u for u in [ti.get("url"), *(r.get("url") for r in items if isinstance(r, dict))] if isinstance(u, str)]


def _commands_and_code(tool: str | None, name: str | None,
                       ti: dict[str, Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """The shell commands (a Bash call, each command of a batch) and the (language, code) a call would run."""
    if tool == "Bash" and isinstance(ti.get("command"), str):
        return [ti["command"]], []
    if name in ("ctx_execute", "ctx_execute_file") and isinstance(ti.get("code"), str):
        return [], [(str(ti.get("language") or ""), ti["code"])]
    if name == "ctx_batch_execute" and isinstance(ti.get("commands"), list):
        # A batch's commands come as {"label", "command"} objects or as bare strings; others are skipped.
        commands = (item.get("command") if isinstance(item, dict) else item for item in ti["commands"])
        return [command for command in commands if isinstance(command, str)], []
    return [], []


def _webfetch_reason(tool_input: dict[str, Any]) -> str:
    url = str(tool_input.get("url") or "<url>")
    return (f"WebFetch is routed through context-kernel while its server runs: call "
            f"ctx_fetch_and_index(url=\"{url}\", source=\"{_label(url)}\") to fetch and index the page, "
            f"then ctx_search(queries=[...], source=\"{_label(url)}\") for the parts you need. "
            f"The raw page never enters your context.")


def _shell_fetch_reason(fetch: PrintingFetch) -> str:
    url = fetch.url or "<url>"
    return (f"This command would print a web page into your context ({fetch.tool}). Use "
            f"ctx_fetch_and_index(url=\"{url}\", source=\"{_label(url)}\") and then ctx_search(queries=[...]) "
            f"to read only the parts you need, or run it with ctx_execute(language=\"shell\", code=...) where "
            f"only what you print comes back. Downloads to a file (curl -o/-O, wget, > file) and silent "
            f"checks (curl -s -o /dev/null -w ..., curl -I) are not redirected.")


def _label(url: str) -> str:
    host = re.sub(r"^https?://", "", url).split("/", 1)[0]
    return host or "web"

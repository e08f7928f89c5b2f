"""What each agent client reads: where its MCP, hook and instruction files live, their shapes, its hook events.

Everything here is data taken from the clients' own documentation (URLs next to each entry), so
that `apply.py` can stay generic: it only knows JSON objects, TOML tables and marked text blocks.

Sources:
- Claude Code: https://docs.claude.com/en/docs/claude-code/hooks (settings files, hook groups),
  https://code.claude.com/docs/en/mcp (`.mcp.json` project scope, `~/.claude.json` user scope).
- Gemini CLI: https://geminicli.com/docs/hooks (events, `{"matcher", "hooks": [{"name", "type",
  "command"}]}`, project `.gemini/settings.json`, user `~/.gemini/settings.json`),
  https://geminicli.com/docs/hooks/reference.
- Codex CLI: https://developers.openai.com/codex/hooks (hooks on by default, `[features] hooks =
  false` turns them off; `~/.codex/hooks.json` in Claude Code's shape; project layers load only in
  trusted projects; new hooks run only once trusted in `/hooks`), MCP servers as
  `[mcp_servers.<name>]` in `~/.codex/config.toml` (https://developers.openai.com/codex/mcp).
- Cursor: https://cursor.com/docs/agent/hooks (`hooks.json` `{"version": 1, "hooks": {event:
  [{"command"}]}}` at project or user level), `.cursor/mcp.json` `{"mcpServers": ...}`,
  `.cursor/rules/*.mdc` rules with front matter.
- VS Code Copilot: https://code.visualstudio.com/docs/agent-customization/hooks (`.github/hooks/*.json`,
  user `~/.copilot/hooks`, `{"hooks": {Event: [{"type": "command", "command"}]}}`),
  https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (`.vscode/mcp.json`
  `{"servers": {name: {"type": "stdio", ...}}}`, or the user profile's `mcp.json`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..clients import CLIENT_NAMES
from ..locations import UserDirs

SERVER_NAME = "context-kernel"
BACKUP_SUFFIX = ".context-kernel.bak"

HookStyle = Literal["grouped", "flat"]
"""grouped: `{Event: [{"matcher"?, "hooks": [entry]}]}` (Claude Code, Gemini, Codex);
flat: `{event: [entry]}` (Cursor, VS Code)."""


@dataclass(frozen=True)
class Scope:
    """Where to write: a project (default) or the user's own files (`--global`)."""

    project_dir: Path
    home_dir: Path
    is_global: bool = False
    platform: str = sys.platform
    dirs: UserDirs | None = None
    """The clients' user directories (CLAUDE_CONFIG_DIR, CODEX_HOME, …); None: the defaults under home_dir."""

    @property
    def user(self) -> UserDirs:
        return self.dirs or UserDirs(self.home_dir)


@dataclass(frozen=True)
class Files:
    """The files setup writes for one client in one scope; None where the client has no such file."""

    mcp: Path | None
    hooks: Path | None
    instructions: Path | None


@dataclass(frozen=True)
class HttpEndpoint:
    """`setup --http URL`: the client connects to a running `serve --transport http` instead of starting one."""

    url: str
    token: str | None
    """The bearer token the entry sends (the server's token file); None for a server started with --no-auth."""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


@dataclass(frozen=True)
class Client:
    name: str
    """The name used on the command line and in `hook <client> <Event>`."""
    title: str
    events: tuple[str, ...]
    """Hook events we register, in the client's own spelling."""
    tool_events: tuple[str, ...]
    """Events that filter by tool; they get `matcher` (grouped style)."""
    matcher: str | None
    """Matcher for tool events (all tools); None leaves it out, which also means all tools."""
    hook_style: HookStyle
    hook_type_field: bool
    """Entries carry `"type": "command"`."""
    hook_name_field: bool
    """Entries carry a `name` (Gemini uses it for `/hooks enable|disable` and `hooksConfig.disabled`)."""
    servers_key: str
    """Key of the MCP server map: mcpServers, servers (VS Code) or mcp_servers (Codex TOML)."""
    server_type_field: bool
    """The server entry carries `"type": "stdio"` (or `"http"`)."""
    http_url_key: str = "url"
    """The key of an HTTP server's address (Gemini: `httpUrl`; its `url` means the old SSE transport)."""
    hooks_boilerplate: tuple[str, ...] = ()
    """Top-level keys we add to a hooks file we create (Cursor's `version`), not user content."""
    instructions_preamble: str = ""
    """Text that opens an instruction file we create (Cursor's rule front matter)."""
    notes: tuple[str, ...] = ()
    """Printed after setup: what the user still has to do or know."""
    project_notes: tuple[str, ...] = ()
    """Printed after a project set-up only (not with --global)."""

    def files(self, scope: Scope) -> Files:
        return _FILES[self.name](scope)

    def status_hook_files(self, project_dir: Path, home_dir: Path, dirs: UserDirs | None = None) -> list[Path]:
        """Every file the client reads hooks from, project first, for `hooks_status`."""
        return _STATUS_FILES[self.name](project_dir, dirs or UserDirs(home_dir))

    def mcp_files(self, project_dir: Path, home_dir: Path, dirs: UserDirs | None = None) -> list[Path]:
        """Every file the client reads MCP servers from that setup can write (both scopes)."""
        found: list[Path] = []
        for is_global in (False, True):
            path = self.files(Scope(project_dir, home_dir, is_global, dirs=dirs)).mcp
            if path is not None and path not in found:
                found.append(path)
        return found

    def hook_name(self, event: str) -> str:
        return f"{SERVER_NAME}-{event}"


def _claude_files(s: Scope) -> Files:
    if s.is_global:
        # User-scope MCP servers live in ~/.claude.json (what `claude mcp add -s user` writes).
        return Files(s.user.claude_json, s.user.claude / "settings.json", s.user.claude / "CLAUDE.md")
    return Files(s.project_dir / ".mcp.json", s.project_dir / ".claude" / "settings.json",
                 s.project_dir / "CLAUDE.md")


def _gemini_files(s: Scope) -> Files:
    # MCP servers and hooks share one settings.json; apply.py merges the edits of one file.
    if s.is_global:
        settings = s.user.gemini / "settings.json"
        return Files(settings, settings, s.user.gemini / "GEMINI.md")
    settings = s.project_dir / ".gemini" / "settings.json"
    return Files(settings, settings, s.project_dir / "GEMINI.md")


def _codex_files(s: Scope) -> Files:
    # Codex reads a project's .codex/ layer only once the project is trusted, so the server and
    # hooks always go to the user layer; only AGENTS.md follows the scope.
    codex = s.user.codex
    return Files(codex / "config.toml", codex / "hooks.json",
                 codex / "AGENTS.md" if s.is_global else s.project_dir / "AGENTS.md")


def _cursor_files(s: Scope) -> Files:
    if s.is_global:
        # Cursor's user rules live in its settings UI, not in a file: no instruction file here.
        return Files(s.home_dir / ".cursor" / "mcp.json", s.home_dir / ".cursor" / "hooks.json", None)
    cursor = s.project_dir / ".cursor"
    return Files(cursor / "mcp.json", cursor / "hooks.json", cursor / "rules" / f"{SERVER_NAME}.mdc")


def vscode_user_dir(home_dir: Path, platform: str) -> Path:
    """The default profile's folder, where VS Code keeps the user `mcp.json`."""
    if platform == "darwin":
        return home_dir / "Library" / "Application Support" / "Code" / "User"
    if platform.startswith("win"):
        return home_dir / "AppData" / "Roaming" / "Code" / "User"
    return home_dir / ".config" / "Code" / "User"


def _copilot_files(s: Scope) -> Files:
    if s.is_global:
        # VS Code has no user-level instructions file (they live in the profile's settings).
        return Files(vscode_user_dir(s.home_dir, s.platform) / "mcp.json",
                     s.home_dir / ".copilot" / "hooks" / f"{SERVER_NAME}.json", None)
    # A hooks file of our own: VS Code loads every *.json in .github/hooks.
    return Files(s.project_dir / ".vscode" / "mcp.json", s.project_dir / ".github" / "hooks" / f"{SERVER_NAME}.json",
                 s.project_dir / ".github" / "copilot-instructions.md")


_FILES = {
    "claude-code": _claude_files, "gemini": _gemini_files, "codex": _codex_files,
    "cursor": _cursor_files, "copilot": _copilot_files,
}

_STATUS_FILES = {
    "claude-code": lambda p, u: [p / ".claude" / "settings.local.json", p / ".claude" / "settings.json",
                                 u.claude / "settings.json"],
    "gemini": lambda p, u: [p / ".gemini" / "settings.json", u.gemini / "settings.json"],
    "codex": lambda p, u: [p / ".codex" / "hooks.json", u.codex / "hooks.json"],
    "cursor": lambda p, u: [p / ".cursor" / "hooks.json", u.home / ".cursor" / "hooks.json"],
    "copilot": lambda p, u: [*sorted((p / ".github" / "hooks").glob("*.json")),
                             *sorted((u.home / ".copilot" / "hooks").glob("*.json"))],
}

CURSOR_RULE_PREAMBLE = (
    "---\n"
    "description: Route output-heavy work through the context-kernel MCP tools\n"
    "alwaysApply: true\n"
    "---\n"
)

CLIENTS: dict[str, Client] = {
    "claude-code": Client(
        name="claude-code", title="Claude Code",
        # PostToolUseFailure: a failed tool call (a command that exits non-zero, an edit that does
        # not apply) fires it instead of PostToolUse — without it the session's errors go unrecorded.
        events=("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "PreCompact", "SessionStart"),
        tool_events=("PreToolUse", "PostToolUse", "PostToolUseFailure"), matcher="",
        hook_style="grouped", hook_type_field=True, hook_name_field=False,
        servers_key="mcpServers", server_type_field=True,
        project_notes=(("Claude Code asks once before it starts a server from a project's .mcp.json: approve "
                        "context-kernel there (or in /mcp)."),),
    ),
    "gemini": Client(
        name="gemini", title="Gemini CLI",
        # BeforeAgent is Gemini's UserPromptSubmit (the docs' Claude Code migration table).
        events=("BeforeTool", "AfterTool", "BeforeAgent", "PreCompress", "SessionStart"),
        tool_events=("BeforeTool", "AfterTool"), matcher="*",
        hook_style="grouped", hook_type_field=True, hook_name_field=True,
        servers_key="mcpServers", server_type_field=False, http_url_key="httpUrl",
        notes=("Gemini CLI runs hooks unless `hooksConfig.enabled` is false; `/hooks panel` lists them.",),
        project_notes=(("With folder trust on, Gemini CLI ignores a project's .gemini/settings.json (so this MCP "
                        "server and these hooks) until you trust the folder: accept when Gemini asks, or use "
                        "/permissions."),),
    ),
    "codex": Client(
        name="codex", title="Codex CLI",
        events=("PreToolUse", "PostToolUse", "UserPromptSubmit", "PreCompact", "SessionStart"),
        tool_events=("PreToolUse", "PostToolUse"), matcher=None,
        hook_style="grouped", hook_type_field=True, hook_name_field=False,
        servers_key="mcp_servers", server_type_field=False,
        notes=("Codex runs a new or changed hook only after you trust it: open /hooks in Codex once.",
               "The MCP server and hooks are in ~/.codex, so they apply to every project."),
    ),
    "cursor": Client(
        name="cursor", title="Cursor",
        # The six events of Cursor's first hooks release, plus session start and compaction.
        events=("beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "afterFileEdit",
                "beforeSubmitPrompt", "stop", "sessionStart", "preCompact"),
        tool_events=(), matcher=None,
        hook_style="flat", hook_type_field=False, hook_name_field=False,
        servers_key="mcpServers", server_type_field=False,
        hooks_boilerplate=("version",), instructions_preamble=CURSOR_RULE_PREAMBLE,
    ),
    "copilot": Client(
        name="copilot", title="VS Code Copilot",
        events=("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact"),
        tool_events=(), matcher=None,
        hook_style="flat", hook_type_field=True, hook_name_field=False,
        servers_key="servers", server_type_field=True,
        notes=(("VS Code also runs the hooks in .claude/settings.json: if Claude Code is set up in this "
                "project too, VS Code runs both sets."),),
    ),
}


assert tuple(CLIENTS) == CLIENT_NAMES, "setup/clients.py and clients.py must name the same clients"


def get_client(name: str) -> Client:
    try:
        return CLIENTS[name]
    except KeyError:
        raise ValueError(f"unknown client {name!r}; choose one of {', '.join(CLIENTS)}") from None

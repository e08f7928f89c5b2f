"""Is context-kernel wired into a client? For `context-kernel doctor` and ctx_doctor.

Read-only and forgiving: a file that cannot be read or parsed is reported, never raised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..locations import UserDirs
from . import jsonfile, tomlfile
from .apply import display, read_file
from .clients import Client, Scope, get_client
from .errors import ConfigFileError

HookState = tuple[str, bool, str]
"""(event, active, where): where names the file, or says why the hook is not active."""


def hooks_status(client: str, project_dir: Path, home_dir: Path, dirs: UserDirs | None = None) -> list[HookState]:
    """One row per hook event the client supports, in either scope (project first)."""
    c = get_client(client)
    scope = Scope(project_dir, home_dir, dirs=dirs)
    found: dict[str, Path] = {}
    problems: list[str] = []
    for path in c.status_hook_files(project_dir, home_dir, dirs):
        try:
            data = _load_json(path)
        except ConfigFileError as exc:
            problems.append(f"{display(path, scope)}: {exc.problem}")
            continue
        for event in jsonfile.hook_events_present(data, c):
            found.setdefault(event, path)
    off = _switched_off(c, scope)
    names_off = _gemini_disabled_names(scope) if c.name == "gemini" else set()
    rows: list[HookState] = []
    for event in c.events:
        if event not in found:
            rows.append((event, False, "not set up" + (f" ({'; '.join(problems)})" if problems else "")))
            continue
        where = display(found[event], scope)
        disabled = f"{c.hook_name(event)} is in hooksConfig.disabled" if c.hook_name(event) in names_off else None
        reason = off or disabled
        rows.append((event, reason is None, where if reason is None else f"{where}, but {reason}"))
    return rows


def mcp_entry_where(client: str, project_dir: Path, home_dir: Path, dirs: UserDirs | None = None) -> Path | None:
    """The file that registers our MCP server for this client (project scope first), if any."""
    c = get_client(client)
    for path in c.mcp_files(project_dir, home_dir, dirs):
        try:
            text = read_file(path)
            if text is None:
                continue
            if path.suffix == ".toml":
                present = tomlfile.server_present(tomlfile.parse_toml(path, text))
            else:
                present = jsonfile.server_present(jsonfile.parse_json(path, text)[0], c)
        except ConfigFileError:
            continue
        if present:
            return path
    return None


def mcp_entry_present(client: str, project_dir: Path, home_dir: Path, dirs: UserDirs | None = None) -> bool:
    return mcp_entry_where(client, project_dir, home_dir, dirs) is not None


def _load_json(path: Path) -> dict[str, Any]:
    return jsonfile.parse_json(path, read_file(path))[0]


def _quiet_json(path: Path) -> dict[str, Any]:
    try:
        return _load_json(path)
    except ConfigFileError:
        return {}


def _switched_off(c: Client, scope: Scope) -> str | None:
    """A client-wide setting that stops every hook from running."""
    if c.name == "claude-code":
        # https://docs.claude.com/en/docs/claude-code/settings: "disableAllHooks"
        for path in c.status_hook_files(scope.project_dir, scope.home_dir, scope.dirs):
            if _quiet_json(path).get("disableAllHooks") is True:
                return f"disableAllHooks is true in {display(path, scope)}"
    elif c.name == "gemini":
        # https://geminicli.com/docs/hooks: the hooks system can be switched off as a whole.
        for path in c.status_hook_files(scope.project_dir, scope.home_dir, scope.dirs):
            data = _quiet_json(path)
            for key in ("hooksConfig", "hooks"):
                section = data.get(key)
                if isinstance(section, dict) and section.get("enabled") is False:
                    return f"{key}.enabled is false in {display(path, scope)}"
    elif c.name == "codex":
        path = scope.user.codex / "config.toml"
        try:
            text = read_file(path)
            setting = tomlfile.hooks_switched_off(tomlfile.parse_toml(path, text)) if text is not None else None
        except ConfigFileError:
            setting = None
        if setting:
            return f"{setting} in {display(path, scope)}"
    return None


def _gemini_disabled_names(scope: Scope) -> set[str]:
    # Disabled hook names are a union over every settings layer (the docs' "UNION merge strategy").
    names: set[str] = set()
    for path in get_client("gemini").status_hook_files(scope.project_dir, scope.home_dir, scope.dirs):
        data = _quiet_json(path)
        for key in ("hooksConfig", "hooks"):
            section = data.get(key)
            if isinstance(section, dict) and isinstance(section.get("disabled"), list):
                names.update(n for n in section["disabled"] if isinstance(n, str))
    return names

"""Where things are: the data dir, the project dir, the user's home and the clients' settings files.

One set of rules for the server and the hooks, so the two always agree on which project a call
belongs to and where its state lives. Standard library only (the hooks import it on every tool
call of the agent), and no environment is read here: callers pass the environment the CLI read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .datadir import data_dir, home_dir

# What clients set to tell a server or a hook which project it serves, in order of preference
# (Gemini CLI sets both GEMINI_ and CLAUDE_PROJECT_DIR).
PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR")
# The directory VS Code was started from: a weaker hint than the agent's own working directory.
LAUNCH_DIR_VAR = "VSCODE_CWD"


def data_home(env: Mapping[str, str]) -> Path:
    """All state: `CONTEXT_KERNEL_HOME`, else `$XDG_DATA_HOME/context-kernel`, else `~/.local/share/context-kernel`."""
    return Path(data_dir(env))


def user_home(env: Mapping[str, str]) -> Path:
    """`HOME`, else the password database's entry for this user (raises RuntimeError if neither exists)."""
    return Path(home_dir(env))


def project_dir(env: Mapping[str, str], *, explicit: str | None = None, agent_cwd: str | None = None) -> Path:
    """The project a server or a hook call serves, resolved.

    In order: an explicit choice (`--project`); the first client project variable naming an
    existing absolute directory (deny rules and the server live at the project root even when the
    agent has cd'ed elsewhere); the agent's working directory when the call says it (hook
    payloads do); `VSCODE_CWD`; the process's own working directory.
    """
    if explicit:
        return Path(explicit).expanduser().resolve()
    for var in PROJECT_VARS:
        value = env.get(var)
        if value and os.path.isabs(value) and os.path.isdir(value):
            return Path(value).resolve()
    if agent_cwd and os.path.isabs(agent_cwd):
        return Path(agent_cwd).resolve()
    launch = env.get(LAUNCH_DIR_VAR)
    if launch and os.path.isabs(launch) and os.path.isdir(launch):
        return Path(launch).resolve()
    return Path.cwd().resolve()


@dataclass(frozen=True)
class UserDirs:
    """Where each client keeps its user-level files, after the variables each one documents.

    - Claude Code: `CLAUDE_CONFIG_DIR` moves `~/.claude` (settings.json, CLAUDE.md) and the user
      config `~/.claude.json` into it (`$CLAUDE_CONFIG_DIR/.claude.json`).
    - Codex: `CODEX_HOME` replaces `~/.codex` (config.toml, hooks.json, AGENTS.md).
    - Gemini CLI: `GEMINI_CLI_HOME` is the root its `.gemini` folder is made in (default: home).
    - Cursor and VS Code document no such variable (VS Code moves its data only by a command-line
      flag or portable mode, which a config writer cannot see).
    """

    home: Path
    claude_config: Path | None = None
    codex_home: Path | None = None
    gemini_home: Path | None = None

    @property
    def claude(self) -> Path:
        return self.claude_config or self.home / ".claude"

    @property
    def claude_json(self) -> Path:
        """The user config holding user-scope MCP servers (what `claude mcp add -s user` writes)."""
        return self.claude_config / ".claude.json" if self.claude_config else self.home / ".claude.json"

    @property
    def codex(self) -> Path:
        return self.codex_home or self.home / ".codex"

    @property
    def gemini(self) -> Path:
        return (self.gemini_home or self.home) / ".gemini"


CLIENT_DIR_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")


def user_dirs(env: Mapping[str, str]) -> UserDirs:
    def given(name: str) -> Path | None:
        value = env.get(name)
        return Path(value).expanduser().absolute() if value else None

    return UserDirs(user_home(env), given("CLAUDE_CONFIG_DIR"), given("CODEX_HOME"), given("GEMINI_CLI_HOME"))


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's user directory: `CLAUDE_CONFIG_DIR` moves `~/.claude`."""
    return user_dirs(env).claude


def claude_user_settings(env: Mapping[str, str]) -> Path:
    """Claude Code's global settings file, where the user's own deny rules live."""
    return claude_config_dir(env) / "settings.json"

"""Helpers for the setup tests: each client's pre-existing user config, and a temporary home and project."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLIENT_NAMES = ("claude-code", "gemini", "codex", "cursor", "copilot")

CODEX_TOML = """\
# my Codex settings
model = "o3"  # the one I like

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]  # keep this comment

[profiles.fast]
model = "o4-mini"
"""

MARKDOWN = "# Notes for agents\n\nUse tabs, and run `make test` before committing.\n"


def _json(data: Any, indent: int = 2) -> str:
    return json.dumps(data, indent=indent) + "\n"


def _user_hook(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command}


# Where each client's user already has config, relative to "project" or "home", and what is in it.
SEEDS: dict[str, dict[tuple[str, str], str]] = {
    "claude-code": {
        ("project", ".mcp.json"): _json({"mcpServers": {"docs": {"command": "npx", "args": ["docs"]}}}, indent=4),
        ("project", ".claude/settings.json"): _json({
            "permissions": {"deny": ["Read(./.env)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [_user_hook("./check-bash.sh")]}],
                      "Stop": [{"hooks": [_user_hook("notify-send done")]}]},
        }),
        ("project", "CLAUDE.md"): MARKDOWN,
    },
    "gemini": {
        ("project", ".gemini/settings.json"): _json({
            "theme": "GitHub",
            "mcpServers": {"docs": {"command": "npx", "args": ["docs"]}},
            "hooks": {"BeforeTool": [{"matcher": "write_file",
                                      "hooks": [{"name": "lint", **_user_hook("./lint.sh")}]}]},
        }),
        ("project", "GEMINI.md"): MARKDOWN,
    },
    "codex": {
        ("home", ".codex/config.toml"): CODEX_TOML,
        ("home", ".codex/hooks.json"): _json({"hooks": {"Stop": [{"hooks": [_user_hook("say done")]}]}}),
        ("project", "AGENTS.md"): MARKDOWN,
    },
    "cursor": {
        ("project", ".cursor/mcp.json"): _json({"mcpServers": {"docs": {"command": "npx", "args": ["docs"]}}}),
        ("project", ".cursor/hooks.json"): _json({"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}]}}),
    },
    "copilot": {
        ("project", ".vscode/mcp.json"): _json({
            "inputs": [{"type": "promptString", "id": "token", "password": True}],
            "servers": {"docs": {"type": "stdio", "command": "node", "args": ["docs.js"]}},
        }),
        ("project", ".github/hooks/format.json"): _json({"hooks": {"PostToolUse": [_user_hook("npx prettier -w .")]}}),
        ("project", ".github/copilot-instructions.md"): MARKDOWN,
    },
}


@dataclass
class SetupEnv:
    root: Path
    home: Path
    project: Path
    exe: str
    run_cli: Callable[..., tuple[int, str, str]]

    def path(self, where: str, rel: str) -> Path:
        return (self.project if where == "project" else self.home) / rel

    def run(self, *argv: str, exe: str | None = None) -> tuple[int, str, str]:
        return self.run_cli(list(argv), exe or self.exe)

    def seed(self, client: str) -> dict[Path, str]:
        written: dict[Path, str] = {}
        for (where, rel), text in SEEDS[client].items():
            path = self.path(where, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written[path] = text
        return written

    def snapshot(self) -> dict[str, bytes]:
        return {str(p.relative_to(self.root)): p.read_bytes() for p in sorted(self.root.rglob("*")) if p.is_file()}


def parse_as(suffix: str, text: str) -> Any:
    """A config file's content as data (JSON, TOML) or text (markdown)."""
    if suffix == ".json":
        return json.loads(text)
    if suffix == ".toml":
        return tomllib.loads(text)
    return text


def parsed(path: Path) -> Any:
    return parse_as(path.suffix, path.read_text())


def contains(new: Any, old: Any) -> bool:
    """Everything in `old` is still in `new` (dict keys recursively; list items as they were)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and contains(new[k], v) for k, v in old.items())
    if isinstance(old, list):
        return isinstance(new, list) and all(item in new for item in old)
    if isinstance(old, str) and isinstance(new, str) and old.startswith("# Notes"):
        return new.startswith(old)  # instruction files: the user's text comes first, unchanged
    return bool(new == old)



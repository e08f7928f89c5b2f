"""The server's use of deny rules: loaded from the project's and the user's Claude Code settings,
reloaded when one of those files changes, and turned into a `Denied` error the agent can act on.

Hooks check the same rules before a tool call reaches us, but a client without hooks (or with
hooks not set up) reaches the server directly, so the server checks too.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import Denied
from .deny import LOCAL_SETTINGS, PROJECT_SETTINGS, Denial, DenyRules

USER_SETTINGS = Path(".claude") / "settings.json"


class DenyGuard:
    def __init__(self, project_dir: Path, user_home: Path | None, user_settings: Path | None = None) -> None:
        """`user_settings`: Claude Code's global settings file (CLAUDE_CONFIG_DIR moves it; the CLI
        decides); by default `~/.claude/settings.json` under `user_home`."""
        self._project_dir = project_dir
        self._user_home = user_home
        self._user_settings = user_settings or (user_home / USER_SETTINGS if user_home else None)
        self._files = [project_dir / LOCAL_SETTINGS, project_dir / PROJECT_SETTINGS]
        if self._user_settings is not None:
            self._files.append(self._user_settings)
        self._stamp: tuple[float | None, ...] | None = None
        self._rules = DenyRules()

    def _mtimes(self) -> tuple[float | None, ...]:
        stamps: list[float | None] = []
        for path in self._files:
            try:
                stamps.append(path.stat().st_mtime_ns)
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    @property
    def rules(self) -> DenyRules:
        # A stat per file per call (microseconds) buys rules that apply the moment the user edits them.
        stamp = self._mtimes()
        if stamp != self._stamp:
            self._rules = DenyRules.load(self._project_dir, self._user_settings)
            self._stamp = stamp
        return self._rules

    def check_code(self, language: str, code: str) -> None:
        _raise(self.rules.check_code(language, code))

    def check_shell(self, command: str) -> None:
        _raise(self.rules.check_shell(command))

    def check_path(self, path: str) -> None:
        _raise(self.rules.check_path(path, self._project_dir, self._user_home))

    def check_url(self, url: str) -> None:
        _raise(self.rules.check_url(url))

    def path_denied_by(self, path: str) -> str | None:
        """The Read rule that denies `path`, or None: for filtering the files of a directory."""
        denial = self.rules.check_path(path, self._project_dir, self._user_home)
        return denial.rule if denial else None


def _raise(denial: Denial | None) -> None:
    if denial is not None:
        raise Denied(denial.reason, rule=denial.rule, source=denial.source)

"""The real `context-kernel hook` console script on a temporary home, for the review tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLI = Path(sys.executable).parent / "context-kernel"


@dataclass(frozen=True)
class Answer:
    returncode: int
    stdout: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout) if self.stdout.strip() else None


class HookCli:
    """A temporary context-kernel home, project and user home; `run` feeds one payload to the CLI."""

    def __init__(self, root: Path) -> None:
        self.home = root / "ck-home"
        self.project = root / "project"
        self.user_home = root / "user"
        for path in (self.project, self.user_home):
            path.mkdir(parents=True)
        # No CLAUDE_PROJECT_DIR and no real ~/.claude/settings.json leak in from the machine.
        self.env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.user_home), "LANG": "C.UTF-8",
                    "CONTEXT_KERNEL_HOME": str(self.home)}

    def run(self, client: str, event: str, payload: dict[str, Any] | str, timeout: float = 60,
            **env: str) -> Answer:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        done = subprocess.run([str(CLI), "hook", client, event], input=data, capture_output=True, text=True,
                              env={**self.env, **env}, cwd=self.project, timeout=timeout, check=False)
        return Answer(done.returncode, done.stdout)

    def deny(self, *rules: str) -> None:
        settings = self.project / ".claude" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"permissions": {"deny": list(rules)}}))

    def spool_rows(self) -> list[dict[str, Any]]:
        folder = self.home / "spool"
        if not folder.is_dir():
            return []
        return [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.read_text().splitlines()]

    def log_lines(self) -> list[str]:
        path = self.home / "logs" / "hooks.log"
        return path.read_text().splitlines() if path.exists() else []


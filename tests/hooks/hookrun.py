"""The one harness of the hook tests: the real `context-kernel hook <client> <event>` console script,
on a temporary home, fed documented payloads (`fixtures/`) or hand-made ones.

The `hooks` fixture (conftest.py) gives each test a `Hooks`; tests elsewhere (e2e) build one on their tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from context_kernel.hooks import liveness

FIXTURES = Path(__file__).parent / "fixtures"
PLACEHOLDER = "/path/to/project"
CLI = Path(sys.executable).parent / "context-kernel"
TIMEOUT = 60  # seconds for one hook call (a client waits 60 s, then runs the tool anyway)


@dataclass(frozen=True)
class HookRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def answer(self) -> Any:
        """The parsed stdout; None when the hook printed nothing."""
        return json.loads(self.stdout) if self.stdout.strip() else None


class Hooks:
    """A temporary context-kernel home, project and user home, and the console script to call."""

    def __init__(self, root: Path) -> None:
        self.home = root / "ck-home"
        self.project = root / "project"
        self.user_home = root / "user"
        for path in (self.project / "src", self.user_home):
            path.mkdir(parents=True)
        (self.project / "src" / "main.py").write_text("print('hi')\n")
        # A controlled environment: no CLAUDE_PROJECT_DIR, no real ~/.claude/settings.json.
        # Hooks record before they exit (never deferred, however slowly the machine starts them): tests
        # read the spool right after a hook. test_hook_overload.py sets its own.
        self.env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.user_home), "LANG": "C.UTF-8",
                    "CONTEXT_KERNEL_HOME": str(self.home), "CONTEXT_KERNEL_HOOK_DEFER_AFTER_S": "inf"}
        if os.environ.get("PYTHONPATH"):  # a checkout under test that is not the installed one
            self.env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    def payload(self, client: str, fixture: str, **tool_input: Any) -> dict[str, Any]:
        """A documented payload with the placeholder project replaced; `tool_input` keys overridden."""
        text = (FIXTURES / client / f"{fixture}.json").read_text()
        doc: dict[str, Any] = json.loads(text.replace(PLACEHOLDER, json.dumps(str(self.project))[1:-1]))
        if tool_input:
            doc["tool_input"] = {**doc["tool_input"], **tool_input}
        return doc

    def run(self, client: str, event: str, stdin: dict[str, Any] | str, **env: str) -> HookRun:
        """One hook call: `stdin` (a payload, or raw text) in; `env` added to the controlled environment."""
        data = stdin if isinstance(stdin, str) else json.dumps(stdin)
        done = subprocess.run(self.argv(client, event), input=data, capture_output=True, text=True,
                              env={**self.env, **env}, cwd=self.project, timeout=TIMEOUT, check=False)
        return HookRun(done.returncode, done.stdout, done.stderr)

    def start(self, client: str, event: str) -> subprocess.Popen[str]:
        """A hook call left running, for tests of concurrent calls: write its stdin with `communicate`."""
        return subprocess.Popen(self.argv(client, event), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.project)

    @staticmethod
    def argv(client: str, event: str) -> list[str]:
        return [str(CLI), "hook", client, event]

    def call(self, client: str, fixture: str, **tool_input: Any) -> HookRun:
        """Run a fixture; the event is the part of its name before the first dash."""
        return self.run(client, fixture.split("-", 1)[0], self.payload(client, fixture, **tool_input))

    @contextmanager
    def server_alive(self) -> Iterator[None]:
        # The test process itself plays the running server: its pid is alive for the whole test.
        marker = liveness.mark_alive(self.home, self.project)
        try:
            yield
        finally:
            liveness.clear(marker)

    def deny(self, *rules: str) -> None:
        settings = self.project / ".claude" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"permissions": {"deny": list(rules)}}))

    def log_lines(self) -> list[str]:
        path = self.home / "logs" / "hooks.log"
        return path.read_text().splitlines() if path.exists() else []

    def spool_rows(self) -> list[dict[str, Any]]:
        folder = self.home / "spool"
        return [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.read_text().splitlines()]

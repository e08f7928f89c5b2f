"""The hook path runs on every tool call: it must import the standard library and our own stdlib-only
modules, never the server stack (SQLAlchemy alone costs more than a hook's budget)."""

from __future__ import annotations

import subprocess
import sys

from hookrun import Hooks

HEAVY = ("sqlalchemy", "anyio", "mcp", "jupyter_client", "httpx", "zmq", "tornado", "nbformat")


def imported(importtime_stderr: str) -> set[str]:
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.split(".")[0] in HEAVY)


def test_importing_the_hook_modules_pulls_in_no_server_dependency() -> None:
    modules = ("context_kernel.hooks.hook_cli", "context_kernel.hooks.routing", "context_kernel.hooks.shell_fetch",
               "context_kernel.hooks.nudges",
               "context_kernel.hooks.liveness", "context_kernel.hooks.spool", "context_kernel.hooks.extract",
               "context_kernel.security.deny", "context_kernel.security.redact", "context_kernel.shell")
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import " + ", ".join(modules)],
                          capture_output=True, text=True, check=True, timeout=60)
    names = imported(done.stderr)
    assert "context_kernel.hooks.hook_cli" in names
    assert heavy(names) == []


def test_the_console_script_answers_pre_and_post_tool_use_without_the_server_stack(hooks: Hooks) -> None:
    hooks.deny("Bash(rm -rf *)")  # the deny rules are loaded too
    for event, fixture, used in (("PreToolUse", "PreToolUse-Bash", "context_kernel.security.deny"),
                                 ("PostToolUse", "PostToolUse-Read", "context_kernel.security.redact"),
                                 ("UserPromptSubmit", "UserPromptSubmit", "context_kernel.hooks.extract")):
        done = hooks.run("claude-code", event, hooks.payload("claude-code", fixture), PYTHONPROFILEIMPORTTIME="1")
        assert done.returncode == 0, done.stderr
        names = imported(done.stderr)
        assert {"context_kernel.hooks.hook_cli", used} <= names, event
        assert heavy(names) == [], event
    assert hooks.log_lines() == []


def test_with_the_pattern_cache_filled_a_recording_hook_imports_neither_detect_secrets_nor_requests(
        hooks: Hooks) -> None:
    payload = hooks.payload("claude-code", "UserPromptSubmit")
    first = hooks.run("claude-code", "UserPromptSubmit", payload, PYTHONPROFILEIMPORTTIME="1")
    assert first.returncode == 0, first.stderr
    assert "detect_secrets" in imported(first.stderr)  # the first call reads the plugins into the cache
    again = hooks.run("claude-code", "UserPromptSubmit", payload, PYTHONPROFILEIMPORTTIME="1")
    names = imported(again.stderr)
    assert "context_kernel.security.secret_shapes" in names
    assert sorted(n for n in names if n.split(".")[0] in ("detect_secrets", "requests", "urllib3")) == []

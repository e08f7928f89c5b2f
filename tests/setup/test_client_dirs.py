"""Setup, uninstall and doctor honour the config-location variables each client documents.

Run through the real CLI in a scratch home with the variable set; the result is read back where
the client itself looks (Claude Code: `$CLAUDE_CONFIG_DIR/.claude.json` and `settings.json`;
Codex: `$CODEX_HOME/config.toml` and `hooks.json`; Gemini CLI: `$GEMINI_CLI_HOME/.gemini/settings.json`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

CLI = [sys.executable, "-m", "context_kernel"]


def run(tmp_path: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")}
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=60, cwd=project,
                          env={**base, "HOME": str(tmp_path / "home"), "CONTEXT_KERNEL_HOME": str(tmp_path / "data"),
                               **env})


def doctor_line(tmp_path: Path, client: str, **env: str) -> str:
    done = run(tmp_path, "doctor", "--no-start", "--project", str(tmp_path / "project"), **env)
    return next(line for line in done.stdout.splitlines() if f" {client}:" in line)


def test_claude_config_dir_moves_the_user_config_settings_and_instructions(tmp_path: Path) -> None:
    moved = tmp_path / "claude-work"
    done = run(tmp_path, "setup", "claude-code", "--global", CLAUDE_CONFIG_DIR=str(moved))
    assert done.returncode == 0, done.stderr
    assert json.loads((moved / ".claude.json").read_text())["mcpServers"]["context-kernel"]["args"] == ["serve"]
    hooks = json.loads((moved / "settings.json").read_text())["hooks"]
    assert "PreToolUse" in hooks and "context-kernel" in json.dumps(hooks)
    assert "context-kernel" in (moved / "CLAUDE.md").read_text()
    assert not (tmp_path / "home" / ".claude.json").exists() and not (tmp_path / "home" / ".claude").exists()
    assert "CLAUDE_CONFIG_DIR" not in done.stdout or str(moved) in done.stdout
    assert doctor_line(tmp_path, "claude-code", CLAUDE_CONFIG_DIR=str(moved)).startswith(
        "[OK] hooks claude-code: all 6 active")
    # Without the variable doctor looks in ~/.claude, where nothing is set up.
    assert "not set up" in doctor_line(tmp_path, "claude-code")
    assert run(tmp_path, "uninstall", "claude-code", "--global", CLAUDE_CONFIG_DIR=str(moved)).returncode == 0
    assert not (moved / ".claude.json").exists() and not (moved / "settings.json").exists()


def test_codex_home_holds_the_server_and_hooks_even_for_a_project_set_up(tmp_path: Path) -> None:
    moved = tmp_path / "codex-home"
    done = run(tmp_path, "setup", "codex", CODEX_HOME=str(moved))
    assert done.returncode == 0, done.stderr
    assert tomllib.loads((moved / "config.toml").read_text())["mcp_servers"]["context-kernel"]["args"] == ["serve"]
    assert "context-kernel" in (moved / "hooks.json").read_text()
    assert (tmp_path / "project" / "AGENTS.md").is_file()  # instructions follow the scope
    assert not (tmp_path / "home" / ".codex").exists()
    assert doctor_line(tmp_path, "codex", CODEX_HOME=str(moved)).startswith("[OK] hooks codex: all 5 active")
    assert run(tmp_path, "uninstall", "codex", CODEX_HOME=str(moved)).returncode == 0
    assert not (moved / "config.toml").exists()


def test_gemini_cli_home_is_the_root_of_the_user_gemini_folder(tmp_path: Path) -> None:
    root = tmp_path / "gemini-root"
    done = run(tmp_path, "setup", "gemini", "--global", GEMINI_CLI_HOME=str(root))
    assert done.returncode == 0, done.stderr
    settings = json.loads((root / ".gemini" / "settings.json").read_text())
    assert settings["mcpServers"]["context-kernel"]["args"] == ["serve"] and "BeforeTool" in settings["hooks"]
    assert not (tmp_path / "home" / ".gemini").exists()
    assert doctor_line(tmp_path, "gemini", GEMINI_CLI_HOME=str(root)).startswith("[OK] hooks gemini: all 5 active")


def test_notes_fit_the_scope_claude_global_has_no_approval_note_and_gemini_mentions_folder_trust(
        tmp_path: Path) -> None:
    project_out = run(tmp_path, "setup", "claude-code").stdout
    global_out = run(tmp_path, "setup", "claude-code", "--global").stdout
    assert "approve context-kernel" in project_out and "approve" not in global_out
    gemini = run(tmp_path, "setup", "gemini").stdout
    assert "folder trust" in gemini and "/permissions" in gemini
    assert "folder trust" not in run(tmp_path, "setup", "gemini", "--global").stdout


def test_a_dry_run_into_a_pipe_that_closes_early_ends_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert reader.stdin is not None
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CONTEXT_KERNEL_HOME": str(tmp_path / "data")}
    # A big diff: the reader leaves after one byte while we still write.
    (tmp_path / "project" / "CLAUDE.md").write_text("x\n" * 200_000)
    done = subprocess.run([*CLI, "setup", "claude-code", "--dry-run"], stdout=reader.stdin, stderr=subprocess.PIPE,
                          text=True, timeout=60, cwd=tmp_path / "project", env=env)
    reader.stdin.close()
    reader.wait(timeout=10)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141  # as a tool killed by SIGPIPE reports itself to the shell

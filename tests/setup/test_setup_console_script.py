"""The installed `context-kernel` script, run for real: setup, dry run, uninstall."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from context_kernel.setup.status import hooks_status, mcp_entry_present

SCRIPT = Path(sys.executable).with_name("context-kernel")


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60, cwd=home, check=False,
                          env={**os.environ, "HOME": str(home)})


def test_dry_run_of_the_real_script_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    done = run(tmp_path, "setup", "claude-code", "--project", str(project), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "+++ b/.mcp.json" in done.stdout and "+++ b/.claude/settings.json" in done.stdout
    assert f'"command": "{SCRIPT}"' in done.stdout, "the server is started by this install's script"
    assert f"{SCRIPT} hook claude-code PreToolUse" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"] and list(project.iterdir()) == []


def test_the_real_script_sets_up_and_uninstalls_a_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    done = run(tmp_path, "setup", "gemini", "--project", str(project))
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".gemini" / "settings.json").read_text())
    command = settings["mcpServers"]["context-kernel"]["command"]
    assert Path(command).is_file() and Path(command) == SCRIPT
    assert mcp_entry_present("gemini", project, tmp_path)
    assert all(active for _, active, _ in hooks_status("gemini", project, tmp_path))
    assert "already set up" in run(tmp_path, "setup", "gemini", "--project", str(project)).stdout
    done = run(tmp_path, "uninstall", "gemini", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert list(project.iterdir()) == []


def test_the_real_script_refuses_a_broken_file_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text("model = \n")
    done = run(tmp_path, "setup", "codex", "--global")
    assert done.returncode == 2
    assert "config.toml: not valid TOML" in done.stderr
    assert (tmp_path / ".codex" / "config.toml").read_text() == "model = \n"

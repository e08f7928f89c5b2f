"""Where things are: one answer for the server and the hooks (locations.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_kernel.locations import claude_user_settings, data_home, project_dir, user_home


def test_the_data_dir_is_context_kernel_home_then_xdg_then_the_home_default(tmp_path: Path) -> None:
    assert data_home({"CONTEXT_KERNEL_HOME": "~/ck", "HOME": str(tmp_path)}) == Path("~/ck").expanduser()
    assert data_home({"XDG_DATA_HOME": str(tmp_path / "xdg"), "HOME": "/h"}) == tmp_path / "xdg" / "context-kernel"
    assert data_home({"HOME": str(tmp_path)}) == tmp_path / ".local" / "share" / "context-kernel"


def test_claude_settings_follow_claude_config_dir_else_the_home(tmp_path: Path) -> None:
    assert claude_user_settings({"HOME": str(tmp_path)}) == tmp_path / ".claude" / "settings.json"
    assert claude_user_settings({"HOME": "/h", "CLAUDE_CONFIG_DIR": str(tmp_path / "c")}) == \
        tmp_path / "c" / "settings.json"
    assert user_home({"HOME": str(tmp_path)}) == tmp_path


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    names = ("explicit", "claude", "gemini", "agent", "vscode", "process")
    made = {name: (tmp_path / name) for name in names}
    for path in made.values():
        path.mkdir()
    monkeypatch.chdir(made["process"])  # the process's own working directory, the last resort
    return {name: path.resolve() for name, path in made.items()}


def test_the_project_is_chosen_in_the_documented_order(dirs: dict[str, Path]) -> None:
    env = {"CLAUDE_PROJECT_DIR": str(dirs["claude"]), "GEMINI_PROJECT_DIR": str(dirs["gemini"]),
           "VSCODE_CWD": str(dirs["vscode"])}
    agent = str(dirs["agent"])
    assert project_dir(env, explicit=str(dirs["explicit"]), agent_cwd=agent) == dirs["explicit"]
    assert project_dir(env, agent_cwd=agent) == dirs["claude"]
    assert project_dir({k: v for k, v in env.items() if k != "CLAUDE_PROJECT_DIR"}, agent_cwd=agent) == dirs["gemini"]
    assert project_dir({"VSCODE_CWD": str(dirs["vscode"])}, agent_cwd=agent) == dirs["agent"]
    assert project_dir({"VSCODE_CWD": str(dirs["vscode"])}) == dirs["vscode"]
    assert project_dir({}) == dirs["process"]


def test_a_project_variable_that_names_no_directory_is_skipped(dirs: dict[str, Path], tmp_path: Path) -> None:
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path / "missing"), "CURSOR_PROJECT_DIR": "relative/path"}
    assert project_dir(env, agent_cwd=str(dirs["agent"])) == dirs["agent"]
    assert project_dir(env, agent_cwd="not/absolute") == dirs["process"]


def test_server_and_hook_agree_on_the_project_whatever_the_agent_s_cwd(dirs: dict[str, Path]) -> None:
    # They used to differ: the hook took the payload's cwd when it lay outside the project variable.
    env = {"CLAUDE_PROJECT_DIR": str(dirs["claude"])}
    server = project_dir(env)
    for cwd in (dirs["claude"], dirs["claude"] / "sub", dirs["agent"], Path("/")):
        assert project_dir(env, agent_cwd=str(cwd)) == server

"""What setup does with config that users really have: comments, tweaks, symlinks, switches, odd shapes."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from setup_helpers import CODEX_TOML, MARKDOWN, SetupEnv

from context_kernel.setup.clients import vscode_user_dir
from context_kernel.setup.instructions import (
    BLOCK,
    END,
    ROUTING,
    START,
    remove_block,
    upsert_block,
)
from context_kernel.setup.status import hooks_status, mcp_entry_present, mcp_entry_where


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_codex_config_keeps_comments_and_layout_and_uninstall_gives_it_back_byte_for_byte(env: SetupEnv) -> None:
    config = write(env.home / ".codex" / "config.toml", CODEX_TOML)
    env.run("setup", "codex")
    text = config.read_text()
    assert "# my Codex settings\n" in text and 'model = "o3"  # the one I like\n' in text
    assert 'args = ["-y", "docs-server"]  # keep this comment\n' in text
    assert f'[mcp_servers.context-kernel]\ncommand = "{env.exe}"\nargs = ["serve"]\n\n[profiles.fast]' in text
    env.run("uninstall", "codex")
    assert config.read_text() == CODEX_TOML


def test_codex_hooks_switched_off_in_features_are_reported_inactive(env: SetupEnv) -> None:
    write(env.home / ".codex" / "config.toml", "[features]\nhooks = false\n")
    code, out, _ = env.run("setup", "codex")
    assert code == 0
    assert "warning: hook PreToolUse is not active" in out
    rows = hooks_status("codex", env.project, env.home)
    assert rows and not any(active for _, active, _ in rows)
    assert all("[features] hooks = false" in where for _, _, where in rows)


def test_gemini_hooks_disabled_as_a_whole_or_one_by_one_are_reported(env: SetupEnv) -> None:
    settings = write(env.project / ".gemini" / "settings.json",
                     json.dumps({"hooksConfig": {"disabled": ["context-kernel-BeforeTool"]}}))
    env.run("setup", "gemini")
    rows = {event: (active, where) for event, active, where in hooks_status("gemini", env.project, env.home)}
    assert rows["BeforeTool"][0] is False and "hooksConfig.disabled" in rows["BeforeTool"][1]
    assert rows["AfterTool"] == (True, ".gemini/settings.json")
    data = json.loads(settings.read_text())
    data["hooksConfig"]["enabled"] = False
    settings.write_text(json.dumps(data))
    assert not any(active for _, active, _ in hooks_status("gemini", env.project, env.home))


def test_claude_disable_all_hooks_is_reported(env: SetupEnv) -> None:
    env.run("setup", "claude-code")
    write(env.project / ".claude" / "settings.local.json", '{"disableAllHooks": true}\n')
    rows = hooks_status("claude-code", env.project, env.home)
    assert all(not active and "disableAllHooks" in where for _, active, where in rows)


def test_global_setup_writes_the_users_files_and_nothing_in_the_project(env: SetupEnv) -> None:
    state = write(env.home / ".claude.json", json.dumps({"numStartups": 12, "projects": {"/x": {"a": 1}}}))
    state.chmod(0o600)
    code, out, _ = env.run("setup", "claude-code", "--global")
    assert code == 0 and "your user files" in out
    assert list(env.project.iterdir()) == []
    data = json.loads(state.read_text())
    assert data["numStartups"] == 12 and data["projects"] == {"/x": {"a": 1}}
    assert data["mcpServers"]["context-kernel"]["command"] == env.exe
    assert stat.S_IMODE(state.stat().st_mode) == 0o600, "a private file stays private"
    assert (env.home / ".claude" / "CLAUDE.md").read_text().startswith(START)
    assert mcp_entry_where("claude-code", env.project, env.home) == state
    assert {where for _, _, where in hooks_status("claude-code", env.project, env.home)} == {"~/.claude/settings.json"}
    env.run("uninstall", "claude-code", "--global")
    assert json.loads(state.read_text()) == {"numStartups": 12, "projects": {"/x": {"a": 1}}}
    assert not (env.home / ".claude").exists()


def test_global_copilot_uses_the_vscode_profile_and_the_copilot_hooks_folder(env: SetupEnv) -> None:
    code, out, _ = env.run("setup", "copilot", "--global")
    assert code == 0
    assert "keeps user-level instructions in its settings" in out
    user_mcp = vscode_user_dir(env.home, sys.platform) / "mcp.json"
    assert json.loads(user_mcp.read_text())["servers"]["context-kernel"]["type"] == "stdio"
    assert (env.home / ".copilot" / "hooks" / "context-kernel.json").is_file()
    assert all(active for _, active, _ in hooks_status("copilot", env.project, env.home))


def test_a_moved_install_updates_commands_in_place_and_keeps_the_users_tweaks(env: SetupEnv) -> None:
    env.run("setup", "claude-code")
    mcp = env.project / ".mcp.json"
    settings = env.project / ".claude" / "settings.json"
    data = json.loads(mcp.read_text())
    data["mcpServers"]["context-kernel"]["env"] = {"CONTEXT_KERNEL_HOME": "/data/ck"}
    mcp.write_text(json.dumps(data, indent=2))
    hooks = json.loads(settings.read_text())
    hooks["hooks"]["PreToolUse"][0]["matcher"] = "Bash|Read"
    hooks["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 10
    settings.write_text(json.dumps(hooks, indent=2))
    before = env.snapshot()
    assert "already set up" in env.run("setup", "claude-code")[1]
    assert env.snapshot() == before, "the user's tweaks are not 'fixed' back"

    moved = str(env.root / "new venv" / "bin" / "context-kernel")
    env.run("setup", "claude-code", exe=moved)
    server = json.loads(mcp.read_text())["mcpServers"]["context-kernel"]
    assert server == {"type": "stdio", "command": moved, "args": ["serve"], "env": {"CONTEXT_KERNEL_HOME": "/data/ck"}}
    pre = json.loads(settings.read_text())["hooks"]["PreToolUse"]
    quoted = f"'{moved}'"
    assert pre == [{"matcher": "Bash|Read", "hooks": [
        {"type": "command", "command": f"{quoted} hook claude-code PreToolUse", "timeout": 10}]}]


def test_duplicates_and_events_we_no_longer_use_are_cleaned_up(env: SetupEnv) -> None:
    ours = {"type": "command", "command": f"{env.exe} hook claude-code PreToolUse"}
    stale = {"type": "command", "command": f"{env.exe} hook claude-code Stop"}
    users = {"type": "command", "command": "notify-send done"}
    write(env.project / ".claude" / "settings.json", json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "", "hooks": [ours]}, {"matcher": "", "hooks": [dict(ours)]}],
        "Stop": [{"hooks": [stale, users]}],
    }}))
    env.run("setup", "claude-code")
    hooks = json.loads((env.project / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": "", "hooks": [ours]}]
    assert hooks["Stop"] == [{"hooks": [users]}]


def test_uninstall_takes_our_hook_out_of_a_group_the_user_shares_with_it(env: SetupEnv) -> None:
    env.run("setup", "claude-code")
    settings = env.project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"].append({"type": "command", "command": "./audit.sh"})
    settings.write_text(json.dumps(data))
    env.run("uninstall", "claude-code")
    assert json.loads(settings.read_text()) == {"hooks": {"PreToolUse": [
        {"matcher": "", "hooks": [{"type": "command", "command": "./audit.sh"}]}]}}


def test_a_symlinked_config_is_written_through_and_stays_a_link(env: SetupEnv) -> None:
    target = write(env.root / "dotfiles" / "mcp.json", '{"mcpServers": {}}\n')
    link = env.project / ".mcp.json"
    link.symlink_to(target)
    env.run("setup", "claude-code")
    assert link.is_symlink()
    assert "context-kernel" in json.loads(target.read_text())["mcpServers"]
    backup = env.project / ".mcp.json.context-kernel.bak"
    assert not backup.is_symlink() and backup.read_text() == '{"mcpServers": {}}\n'


def test_the_files_indentation_is_kept(env: SetupEnv) -> None:
    mcp = write(env.project / ".mcp.json", json.dumps({"mcpServers": {"docs": {"command": "npx"}}}, indent=4))
    env.run("setup", "claude-code")
    assert '\n    "mcpServers": {\n        "docs"' in mcp.read_text()
    tabs = write(env.project / ".cursor" / "mcp.json", json.dumps({"mcpServers": {}}, indent="\t"))
    env.run("setup", "cursor")
    assert '\n\t"mcpServers": {\n\t\t"context-kernel"' in tabs.read_text()


def test_a_file_that_existed_before_setup_stays_even_when_left_empty(env: SetupEnv) -> None:
    mcp = write(env.project / ".mcp.json", "{}\n")
    env.run("setup", "claude-code")
    env.run("uninstall", "claude-code")
    assert json.loads(mcp.read_text()) == {}


def test_json_with_comments_is_refused_with_a_hint_and_left_as_it_is(env: SetupEnv) -> None:
    text = '{\n  // my servers\n  "servers": {}\n}\n'
    mcp = write(env.project / ".vscode" / "mcp.json", text)
    code, _, err = env.run("setup", "copilot")
    assert code == 2 and "it has comments, which setup cannot keep" in err
    assert mcp.read_text() == text


def test_a_config_of_the_wrong_shape_is_refused(env: SetupEnv) -> None:
    mcp = write(env.project / ".cursor" / "mcp.json", '{"mcpServers": ["docs"]}\n')
    code, _, err = env.run("setup", "cursor")
    assert code == 2 and '"mcpServers" should be a JSON object, found an array' in err
    assert mcp.read_text() == '{"mcpServers": ["docs"]}\n'
    write(env.project / ".gemini" / "settings.json", '["not", "an", "object"]')
    code, _, err = env.run("setup", "gemini")
    assert code == 2 and "expected a JSON object at the top level" in err


def test_one_bad_file_stops_the_whole_run_before_anything_is_written(env: SetupEnv) -> None:
    write(env.project / ".claude" / "settings.json", '{"hooks": {"PreToolUse": {"matcher": "x"}}}')
    before = env.snapshot()
    code, _, err = env.run("setup", "claude-code")
    assert code == 2 and '"hooks.PreToolUse" should be a JSON array' in err
    assert env.snapshot() == before
    assert not (env.project / ".mcp.json").exists() and not (env.project / "CLAUDE.md").exists()


def test_hooks_status_names_a_file_it_cannot_parse(env: SetupEnv) -> None:
    write(env.project / ".cursor" / "hooks.json", "{oops")
    rows = hooks_status("cursor", env.project, env.home)
    assert all(not active and ".cursor/hooks.json: not valid JSON" in where for _, active, where in rows)
    assert not mcp_entry_present("cursor", env.project, env.home)


def test_a_missing_project_directory_is_refused(env: SetupEnv) -> None:
    code, _, err = env.run("setup", "gemini", "--project", "no-such-dir")
    assert code == 2 and "no such project directory" in err
    code, _, _ = env.run("setup", "gemini", "--project", "~")
    assert code == 0 and (env.home / "GEMINI.md").is_file(), "~ is the home directory we were given"


def test_an_unknown_client_is_a_usage_error(env: SetupEnv) -> None:
    with pytest.raises(SystemExit) as exc:
        env.run("setup", "emacs")
    assert exc.value.code == 2


def test_the_routing_block_is_small_and_names_the_tools() -> None:
    assert len(BLOCK.encode()) < 1024
    for tool in ("ctx_execute", "ctx_execute_file", "ctx_batch_execute", "ctx_fetch_and_index", "ctx_search",
                 "ctx_export"):
        assert f"`{tool}`" in ROUTING


def test_a_stale_block_is_replaced_where_it_is_and_the_text_around_it_kept() -> None:
    old = f"# Top\n\n{START}\nold advice\n{END}\n\n## Mine, after it\n"
    new = upsert_block(old)
    assert new == f"# Top\n\n{BLOCK}\n## Mine, after it\n"
    assert remove_block(new) == "# Top\n\n## Mine, after it\n"
    assert upsert_block(new) == new


def test_a_block_added_to_a_file_comes_out_cleanly() -> None:
    assert remove_block(upsert_block(MARKDOWN)) == MARKDOWN
    assert remove_block(upsert_block("no newline at the end")) == "no newline at the end\n"
    assert upsert_block(None) == BLOCK and remove_block(BLOCK) == ""

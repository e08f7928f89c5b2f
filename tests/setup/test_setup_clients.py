"""setup / uninstall for every client, on real files in a temporary home and project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from setup_helpers import CLIENT_NAMES, SetupEnv, contains, parse_as, parsed

from context_kernel.setup.clients import Scope, get_client
from context_kernel.setup.instructions import END, START
from context_kernel.setup.status import hooks_status, mcp_entry_present

BAK = ".context-kernel.bak"


def our_files(env: SetupEnv, client: str) -> list[Path]:
    files = get_client(client).files(Scope(env.project, env.home))
    return sorted({p for p in (files.mcp, files.hooks, files.instructions) if p is not None})


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_setup_adds_server_hooks_and_instructions_and_keeps_the_users_config(env: SetupEnv, client: str) -> None:
    seeded = env.seed(client)
    code, out, err = env.run("setup", client)
    assert (code, err) == (0, "")
    assert "context-kernel set up" in out
    for path, text in seeded.items():
        assert contains(parsed(path), parse_as(path.suffix, text)), path
    assert mcp_entry_present(client, env.project, env.home)
    rows = hooks_status(client, env.project, env.home)
    assert [event for event, _, _ in rows] == list(get_client(client).events)
    assert all(active for _, active, _ in rows), rows
    instructions = get_client(client).files(Scope(env.project, env.home)).instructions
    assert instructions is not None
    text = instructions.read_text()
    assert START in text and END in text and "ctx_fetch_and_index" in text


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_setup_backs_up_each_existing_file_it_changes_once(env: SetupEnv, client: str) -> None:
    seeded = env.seed(client)
    env.run("setup", client)
    for path in our_files(env, client):
        backup = path.with_name(path.name + BAK)
        if path in seeded:
            assert backup.read_text() == seeded[path], "the backup holds the file as it was"
        else:
            assert not backup.exists(), "a file setup created has nothing to back up"
    # A file we do not touch keeps no backup either (VS Code's other hooks file).
    untouched = [p for p in seeded if p not in our_files(env, client)]
    assert all(not p.with_name(p.name + BAK).exists() for p in untouched)
    assert all(p.read_text() == seeded[p] for p in untouched)


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_second_setup_changes_nothing_and_says_already_set_up(env: SetupEnv, client: str) -> None:
    env.seed(client)
    env.run("setup", client)
    before = env.snapshot()
    code, out, _ = env.run("setup", client)
    assert code == 0
    assert "already set up" in out
    assert env.snapshot() == before


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_dry_run_prints_a_diff_and_writes_nothing(env: SetupEnv, client: str) -> None:
    env.seed(client)
    before = env.snapshot()
    code, out, _ = env.run("setup", client, "--dry-run")
    assert code == 0
    assert env.snapshot() == before
    assert "nothing was written" in out
    assert out.count("\n+++ ") + out.startswith("+++ ") >= 1
    assert "--- " in out and "@@ " in out
    assert '"context-kernel"' in out or "[mcp_servers.context-kernel]" in out
    assert f"hook {client} " in out
    # And the same for uninstall once set up.
    env.run("setup", client)
    installed = env.snapshot()
    code, out, _ = env.run("uninstall", client, "--dry-run")
    assert code == 0 and env.snapshot() == installed
    assert "nothing was written" in out
    assert any(line.startswith("-") and f"hook {client} " in line for line in out.splitlines())


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_uninstall_restores_the_users_config_and_removes_created_files(env: SetupEnv, client: str) -> None:
    seeded = env.seed(client)
    files_before = set(env.snapshot())
    env.run("setup", client)
    code, out, err = env.run("uninstall", client)
    assert (code, err) == (0, "")
    assert "context-kernel removed" in out
    for path, text in seeded.items():
        assert parsed(path) == parse_as(path.suffix, text), path
    created = [p for p in our_files(env, client) if p not in seeded]
    assert not any(p.exists() for p in created)  # e.g. the Cursor rule, our VS Code hooks file
    backups = {str(p.relative_to(env.root)) + BAK for p in our_files(env, client) if p in seeded}
    assert set(env.snapshot()) == files_before | backups, "only the backups are left over"
    assert not mcp_entry_present(client, env.project, env.home)
    assert not any(active for _, active, _ in hooks_status(client, env.project, env.home))
    code, out, _ = env.run("uninstall", client)
    assert code == 0 and "not set up" in out


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_an_unparsable_config_is_refused_with_exit_2_and_nothing_is_written(env: SetupEnv, client: str) -> None:
    env.seed(client)
    broken = get_client(client).files(Scope(env.project, env.home)).mcp
    assert broken is not None
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text('[mcp_servers.docs\ncommand = "npx"\n' if broken.suffix == ".toml" else '{"mcpServers": {,}\n')
    before = env.snapshot()
    code, _, err = env.run("setup", client)
    assert code == 2
    assert str(broken) in err and ("not valid JSON" in err or "not valid TOML" in err)
    assert "Nothing was changed" in err
    assert env.snapshot() == before
    code, _, err = env.run("uninstall", client)
    assert code == 2 and env.snapshot() == before


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_setup_from_nothing_then_uninstall_leaves_nothing(env: SetupEnv, client: str) -> None:
    before = env.snapshot()
    env.run("setup", client)
    assert all(p.exists() for p in our_files(env, client))
    env.run("uninstall", client)
    assert env.snapshot() == before
    # Directories setup made (.claude, .cursor/rules, .github/hooks, ~/.codex …) are gone too.
    assert sorted(p.name for p in env.project.iterdir()) == []
    assert sorted(p.name for p in env.home.iterdir()) == []


def test_entries_have_each_clients_documented_shape(env: SetupEnv) -> None:
    for client in CLIENT_NAMES:
        env.run("setup", client)
    exe = env.exe
    claude_mcp = json.loads((env.project / ".mcp.json").read_text())
    assert claude_mcp["mcpServers"]["context-kernel"] == {"type": "stdio", "command": exe, "args": ["serve"]}
    claude_hooks = json.loads((env.project / ".claude/settings.json").read_text())["hooks"]
    assert claude_hooks["PreToolUse"] == [{"matcher": "", "hooks": [
        {"type": "command", "command": f"{exe} hook claude-code PreToolUse"}]}]
    assert claude_hooks["SessionStart"] == [{"hooks": [
        {"type": "command", "command": f"{exe} hook claude-code SessionStart"}]}]

    gemini = json.loads((env.project / ".gemini/settings.json").read_text())
    assert gemini["mcpServers"]["context-kernel"] == {"command": exe, "args": ["serve"]}
    assert gemini["hooks"]["BeforeTool"] == [{"matcher": "*", "hooks": [
        {"name": "context-kernel-BeforeTool", "type": "command", "command": f"{exe} hook gemini BeforeTool"}]}]
    assert set(gemini["hooks"]) == {"BeforeTool", "AfterTool", "BeforeAgent", "PreCompress", "SessionStart"}

    codex_toml = (env.home / ".codex/config.toml").read_text()
    assert codex_toml == f'[mcp_servers.context-kernel]\ncommand = "{exe}"\nargs = ["serve"]\n'
    codex_hooks = json.loads((env.home / ".codex/hooks.json").read_text())["hooks"]
    assert codex_hooks["PreToolUse"] == [{"hooks": [{"type": "command", "command": f"{exe} hook codex PreToolUse"}]}]

    cursor_hooks = json.loads((env.project / ".cursor/hooks.json").read_text())
    assert cursor_hooks["version"] == 1
    assert cursor_hooks["hooks"]["beforeShellExecution"] == [{"command": f"{exe} hook cursor beforeShellExecution"}]
    assert {"beforeMCPExecution", "beforeReadFile", "afterFileEdit", "beforeSubmitPrompt", "stop"} <= set(
        cursor_hooks["hooks"])
    rule = (env.project / ".cursor/rules/context-kernel.mdc").read_text()
    assert rule.startswith("---\n") and "alwaysApply: true\n---\n" in rule

    vscode = json.loads((env.project / ".vscode/mcp.json").read_text())
    assert vscode == {"servers": {"context-kernel": {"type": "stdio", "command": exe, "args": ["serve"]}}}
    copilot_hooks = json.loads((env.project / ".github/hooks/context-kernel.json").read_text())["hooks"]
    assert copilot_hooks["PreToolUse"] == [{"type": "command", "command": f"{exe} hook copilot PreToolUse"}]

"""The server applies the user's Claude Code deny rules itself (clients without hooks reach it directly)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of

from context_kernel.settings import Settings
from context_kernel.tools.server import create_server

pytestmark = pytest.mark.anyio


def _deny(settings_file: Path, *rules: str) -> None:
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(json.dumps({"permissions": {"deny": list(rules)}}))


@pytest.fixture
def guarded(tmp_path: Path, project: Path) -> Settings:
    _deny(project / ".claude" / "settings.json", "Bash(rm -rf *)", "Read(./.env)")
    _deny(tmp_path / "user" / ".claude" / "settings.json", "Bash(curl:*)")
    (project / ".env").write_text("API_KEY=abc123456789\n")
    (project / "build").mkdir()
    return make_settings(tmp_path, project, user_home=tmp_path / "user")


@pytest.fixture
async def guarded_client(guarded: Settings) -> AsyncIterator[Client]:
    async with Client(create_server(guarded)) as c:
        yield c


async def test_denied_shell_segment_refuses_the_whole_command(guarded_client: Client, project: Path) -> None:
    result = await guarded_client.call_tool(
        "ctx_execute", {"language": "shell", "code": "touch ran.txt && echo hi && rm -rf build"})
    assert result.is_error
    text = text_of(result)
    assert "Bash(rm -rf *)" in text and ".claude/settings.json" in text
    assert (project / "build").is_dir() and not (project / "ran.txt").exists()


@pytest.mark.kernels
async def test_shell_escapes_inside_python_are_checked(guarded_client: Client, project: Path) -> None:
    result = await guarded_client.call_tool(
        "ctx_execute", {"language": "python", "code": "import subprocess\nsubprocess.run(['rm', '-rf', 'build'])"})
    assert result.is_error and "Bash(rm -rf *)" in text_of(result)
    assert (project / "build").is_dir()
    allowed = await guarded_client.call_tool("ctx_execute", {"language": "python", "code": "print('fine')"})
    assert not allowed.is_error and text_of(allowed).strip() == "fine"


async def test_read_rules_cover_execute_file_and_index(guarded_client: Client) -> None:
    for tool, args in (("ctx_execute_file", {"path": ".env", "language": "python", "code": "print(FILE_CONTENT)"}),
                       ("ctx_index", {"path": "./.env"})):
        result = await guarded_client.call_tool(tool, args)
        assert result.is_error, tool
        assert "Read(./.env)" in text_of(result) and "abc123456789" not in text_of(result)


async def test_user_rules_deny_a_batch_before_any_command_runs(guarded_client: Client, project: Path) -> None:
    result = await guarded_client.call_tool("ctx_batch_execute", {"commands": [
        {"label": "mark", "command": "touch batch-ran.txt"},
        {"label": "page", "command": "curl -s http://127.0.0.1:9/"}]})
    assert result.is_error and "Bash(curl:*)" in text_of(result) and "user settings" in text_of(result)
    assert not (project / "batch-ran.txt").exists()


@pytest.mark.kernels
async def test_a_rule_added_while_the_server_runs_applies_at_once(guarded_client: Client, project: Path) -> None:
    first = await guarded_client.call_tool("ctx_execute", {"language": "shell", "code": "echo before"})
    assert not first.is_error
    _deny(project / ".claude" / "settings.local.json", "Bash(echo:*)")
    second = await guarded_client.call_tool("ctx_execute", {"language": "shell", "code": "echo after"})
    assert second.is_error and "settings.local.json" in text_of(second)


async def test_a_denied_call_is_recorded_as_refused(guarded_client: Client, guarded: Settings) -> None:
    await guarded_client.call_tool("ctx_execute", {"language": "shell", "code": "rm -rf build"})
    exported = await guarded_client.call_tool("ctx_export", {})
    notebooks = list((guarded.home / "exports").rglob("*.ipynb"))
    assert notebooks, text_of(exported)
    cells = [c for nb in notebooks for c in json.loads(nb.read_text())["cells"]]
    refused = [c for c in cells if c["cell_type"] == "markdown" and "Bash(rm -rf *)" in "".join(c["source"])]
    assert refused


async def test_indexing_a_directory_leaves_out_files_a_read_rule_denies(guarded_client: Client, project: Path) -> None:
    (project / "notes.md").write_text("# Notes\n\nThe deploy uses blue-green switching.\n")
    result = await guarded_client.call_tool("ctx_index", {"path": "."})
    assert not result.is_error
    assert "1 denied by a Read rule" in text_of(result)
    found = text_of(await guarded_client.call_tool("ctx_search", {"queries": ["API_KEY abc123456789"]}))
    assert "(no results)" in found  # the reply only echoes the query: .env was never indexed
    notes = text_of(await guarded_client.call_tool("ctx_search", {"queries": ["blue-green deploy"]}))
    assert "blue-green" in notes


async def test_claude_config_dir_moves_the_user_rules(tmp_path: Path, project: Path) -> None:
    moved = tmp_path / "claude-config" / "settings.json"
    _deny(moved, "Bash(shutdown:*)")
    settings = make_settings(tmp_path, project, user_home=tmp_path / "nobody", claude_settings=moved)
    async with Client(create_server(settings)) as c:
        result = await c.call_tool("ctx_execute", {"language": "shell", "code": "shutdown -h now"})
        assert result.is_error and "Bash(shutdown:*)" in text_of(result)


def test_webfetch_rules_deny_a_domain_and_its_subdomains() -> None:
    from context_kernel.security import DenyRules

    rules = DenyRules.from_strings(["WebFetch(domain:internal.example.com)"], ".claude/settings.json")
    for url in ("https://internal.example.com/x", "http://api.internal.example.com:8080/y",
                "HTTPS://INTERNAL.EXAMPLE.COM./z"):
        denial = rules.check_url(url)
        assert denial is not None and denial.rule == "WebFetch(domain:internal.example.com)", url
    for url in ("https://example.com/", "https://notinternal.example.com/", "https://internal.example.com.evil.org/"):
        assert rules.check_url(url) is None, url
    assert DenyRules.from_strings(["WebFetch"]).check_url("https://anything.org/") is not None
    assert DenyRules.from_strings(["WebFetch(domain:*)"]).check_url("https://anything.org/") is not None
    assert DenyRules.from_strings(["Bash(curl:*)"]).check_url("https://anything.org/") is None


async def test_fetch_honours_webfetch_rules_on_every_redirect_hop(tmp_path: Path, project: Path) -> None:
    from tests.web.local_http import LocalServer

    _deny(project / ".claude" / "settings.json", "WebFetch(domain:localhost)")
    settings = make_settings(tmp_path, project, user_home=tmp_path / "nobody")
    with LocalServer() as server:
        target = server.url("/page", host="localhost")
        async with Client(create_server(settings)) as c:
            direct = await c.call_tool("ctx_fetch_and_index", {"url": target})
            assert direct.is_error and "WebFetch(domain:localhost)" in text_of(direct)
            via = server.url(f"/to?location={target}")  # 127.0.0.1 redirects to the denied host
            redirected = await c.call_tool("ctx_fetch_and_index", {"url": via})
            assert redirected.is_error and "WebFetch(domain:localhost)" in text_of(redirected)
            allowed = await c.call_tool("ctx_fetch_and_index", {"url": server.url("/page")})
            assert not allowed.is_error
        paths = [s.requestline.split()[1] for s in server.seen]
        assert paths.count("/page") == 1  # only the allowed fetch reached the page; the denied hop never left

"""`setup CLIENT --global --http URL`: each client's own HTTP entry, carrying the server's bearer token.

The end-to-end test runs a real `serve --transport http`, writes Claude Code's user config with the
real CLI, and connects the SDK's client with exactly the URL and headers the written entry holds.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from setup_helpers import CODEX_TOML, SetupEnv
from tests.helpers import text_of
from tests.serving.http_harness import HTTP_TIMEOUT, http_server, server_env

from context_kernel.security.http_token import write_token
from context_kernel.setup.cli import main

URL = "http://127.0.0.1:8765/mcp"
TOKEN = "test-token-0123456789abcdefghijklmnopqrstuv"

# Where each client keeps its user-level MCP entry, and the entry --http must write there.
USER_ENTRIES = {
    "claude-code": (".claude.json", "mcpServers", {"type": "http", "url": URL,
                                                   "headers": {"Authorization": f"Bearer {TOKEN}"}}),
    "gemini": (".gemini/settings.json", "mcpServers", {"httpUrl": URL,
                                                       "headers": {"Authorization": f"Bearer {TOKEN}"}}),
    "codex": (".codex/config.toml", "mcp_servers", {"url": URL, "http_headers": {"Authorization": f"Bearer {TOKEN}"}}),
    "cursor": (".cursor/mcp.json", "mcpServers", {"url": URL, "headers": {"Authorization": f"Bearer {TOKEN}"}}),
    "copilot": (".config/Code/User/mcp.json", "servers", {"type": "http", "url": URL,
                                                         "headers": {"Authorization": f"Bearer {TOKEN}"}}),
}


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "http-token"
    write_token(path, TOKEN)
    return path


def run(env: SetupEnv, token_file: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv), home_dir=env.home, cwd=env.project, executable=env.exe, token_file=token_file)
    out = capsys.readouterr()
    return code, out.out, out.err


def entry(env: SetupEnv, client: str) -> dict[str, object]:
    rel, key, _ = USER_ENTRIES[client]
    path = env.home / rel
    data = tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
    found = data[key]["context-kernel"]
    assert isinstance(found, dict)
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="the copilot user dir above is Linux's")
@pytest.mark.parametrize("client", list(USER_ENTRIES))
def test_each_client_gets_its_own_http_entry_with_the_token_in_a_private_user_file(
        env: SetupEnv, token_file: Path, client: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(env, token_file, "setup", client, "--global", "--http", URL, capsys=capsys)
    assert code == 0, err
    assert entry(env, client) == USER_ENTRIES[client][2]
    path = env.home / USER_ENTRIES[client][0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"sends the token of {token_file}" in out and TOKEN not in out + err
    # Set up again: nothing to change. Uninstall: our entry is gone.
    assert "nothing to change" in run(env, token_file, "setup", client, "--global", "--http", URL, capsys=capsys)[1]
    assert run(env, token_file, "uninstall", client, "--global", capsys=capsys)[0] == 0
    assert not path.exists() or "context-kernel" not in path.read_text()


def test_switching_a_stdio_entry_to_http_and_back_keeps_the_users_other_keys(
        env: SetupEnv, token_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = env.home / ".claude.json"
    config.write_text(json.dumps({"mcpServers": {"context-kernel": {
        "type": "stdio", "command": "/old/context-kernel", "args": ["serve"], "env": {"A": "1"},
        "headers": {"X-Mine": "kept"}}}}))
    assert run(env, token_file, "setup", "claude-code", "--global", "--http", URL, capsys=capsys)[0] == 0
    assert entry(env, "claude-code") == {"type": "http", "url": URL, "env": {"A": "1"},
                                         "headers": {"X-Mine": "kept", "Authorization": f"Bearer {TOKEN}"}}
    assert run(env, token_file, "setup", "claude-code", "--global", capsys=capsys)[0] == 0
    assert entry(env, "claude-code") == {"type": "stdio", "command": env.exe, "args": ["serve"], "env": {"A": "1"},
                                         "headers": {"X-Mine": "kept"}}


def test_codex_config_keeps_the_users_layout_when_its_entry_becomes_http(
        env: SetupEnv, token_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = env.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_TOML)
    assert run(env, token_file, "setup", "codex", "--http", URL, capsys=capsys)[0] == 0  # Codex: always ~/.codex
    text = config.read_text()
    assert text.startswith(CODEX_TOML.split("[profiles.fast]")[0])
    assert f'[mcp_servers.context-kernel]\nurl = "{URL}"\nhttp_headers = {{Authorization = "Bearer {TOKEN}"}}\n' in text
    assert run(env, token_file, "uninstall", "codex", capsys=capsys)[0] == 0
    assert config.read_text() == CODEX_TOML


def test_a_token_is_never_written_into_a_project_file_and_dry_run_hides_it(
        env: SetupEnv, token_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(env, token_file, "setup", "claude-code", "--http", URL, capsys=capsys)
    assert code == 2
    assert "bearer token in .mcp.json inside the project" in err and "add --global" in err
    assert not (env.project / ".mcp.json").exists()
    code, out, _ = run(env, token_file, "setup", "claude-code", "--global", "--http", URL, "--dry-run", capsys=capsys)
    assert code == 0 and TOKEN not in out
    assert '"Authorization": "Bearer <the token of `context-kernel token path`>"' in out
    # A server run with --no-auth needs no token, so a project file may hold its entry.
    code, _, err = run(env, token_file, "setup", "cursor", "--http", URL, "--no-token", capsys=capsys)
    assert code == 0, err
    written = json.loads((env.project / ".cursor" / "mcp.json").read_text())
    assert written["mcpServers"]["context-kernel"] == {"url": URL}


@pytest.mark.parametrize("url", ["127.0.0.1:8765/mcp", "ftp://host/mcp", "http:///mcp"])
def test_a_url_that_is_not_http_is_refused_with_an_example(
        env: SetupEnv, token_file: Path, url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(env, token_file, "setup", "gemini", "--global", "--http", url, capsys=capsys)
    assert code == 2
    assert f"{url!r} is not an http(s) URL" in err and "http://127.0.0.1:8765/mcp" in err
    assert not (env.home / ".gemini").exists()


@pytest.mark.anyio
@pytest.mark.kernels
async def test_the_entry_setup_writes_connects_to_a_real_http_server(tmp_path: Path, project: Path) -> None:
    home, user = tmp_path / "home", tmp_path / "user"
    user.mkdir()
    with http_server(home, project) as server:
        argv = [sys.executable, "-m", "context_kernel", "setup", "claude-code", "--global", "--http", server.url]
        done = await anyio.to_thread.run_sync(lambda: subprocess.run(
            argv, capture_output=True, text=True, timeout=60, cwd=project, env={**server_env(home), "HOME": str(user)}))
        assert done.returncode == 0, done.stderr
        written = json.loads((user / ".claude.json").read_text())["mcpServers"]["context-kernel"]
        assert written["url"] == server.url and written["headers"] == server.auth()
        async with httpx2.AsyncClient(headers=written["headers"], timeout=HTTP_TIMEOUT) as h, \
                Client(streamable_http_client(written["url"], http_client=h)) as client:
            result = await client.call_tool("ctx_execute", {"language": "python", "code": "print(6 * 7)"})
        assert (result.is_error, text_of(result).strip()) == (False, "42")

"""Only the owner drives the HTTP transport, and its sessions are capabilities, not labels.

Every test starts a real `context-kernel serve --transport http` on 127.0.0.1 (or 0.0.0.0 where
the bind is the point) and talks to it with the SDK's client or, for what a hostile or plain HTTP
client sends, with raw httpx2 and urllib.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from tests.helpers import server_command, text_of, uncited
from tests.serving.http_harness import HTTP_TIMEOUT, MODERN, HttpServer, http_server, server_env, tools_call

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SESSION_KEY = "context-kernel/session"


@pytest.fixture
def server(tmp_path: Path, project: Path) -> Iterator[HttpServer]:
    with http_server(tmp_path / "home", project) as running:
        yield running


def cli(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "context_kernel", *args], capture_output=True, text=True,
                          env=server_env(home), timeout=timeout)


def code(source: str) -> dict[str, str]:
    return {"language": "python", "code": source}


# --- the token ---------------------------------------------------------------------------------

@pytest.mark.kernels
async def test_a_request_without_the_right_token_is_refused_with_401_and_runs_nothing(
        server: HttpServer, project: Path) -> None:
    marker = project / "ran.txt"
    headers, body = tools_call("ctx_execute", code(f"open({str(marker)!r}, 'w').write('ran')"))
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as raw:
        bare = await raw.post(server.url, headers=headers, content=body)
        wrong = await raw.post(server.url, headers={**headers, "Authorization": "Bearer not-the-token"}, content=body)
        assert (bare.status_code, wrong.status_code) == (401, 401)
        # No resource_metadata and no error code (RFC 6750: no credentials sent), but what to send, in words.
        assert bare.headers["www-authenticate"] == (
            'Bearer realm="context-kernel", error_description="send the header Authorization: Bearer <token>; '
            'context-kernel token show prints the token (this server has no OAuth sign-in)"')
        assert "context-kernel setup claude-code --global --http " + server.url in bare.json()["fix"]
        assert wrong.headers["www-authenticate"].startswith('Bearer realm="context-kernel", error="invalid_token"')
        assert bare.json()["token_file"] == str(server.token_file)
        assert bare.json()["send"] == "Authorization: Bearer <token>"
        assert "set-cookie" not in bare.headers
        assert not marker.exists()
        # The same request with the token runs: what stopped the two above was the token alone.
        good = await raw.post(server.url, headers={**headers, **server.auth()}, content=body)
    assert good.status_code == 200, good.text
    assert marker.read_text() == "ran"


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                                  "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"])
async def test_oauth_discovery_finds_nothing_so_clients_do_not_start_a_sign_in(server: HttpServer, path: str) -> None:
    # A 401 here would send Claude, Gemini and the Inspector on to an OAuth flow this server does not have.
    origin = server.url.removesuffix("/mcp")
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as raw:
        found = await raw.get(origin + path)
    assert found.status_code == 404
    assert "Authorization: Bearer <token>" in found.json()["error_description"]


def test_the_token_file_is_private_and_its_place_is_printed_but_never_the_token(server: HttpServer) -> None:
    assert stat.S_IMODE(server.token_file.stat().st_mode) == 0o600
    assert str(server.token_file) in server.announced
    assert server.token() not in server.announced


NOBODY_CLIENT = r"""
import json, os, sys, urllib.error, urllib.request
token_file, url, headers, body = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4].encode()
out = {"uid": os.getuid()}
try:
    out["mode"] = oct(os.stat(token_file).st_mode & 0o777)
except PermissionError:
    out["mode"] = "PermissionError"  # the data dir is 0700: not even the file's mode shows
try:
    open(token_file).read()
    out["read"] = "read the token"
except PermissionError:
    out["read"] = "PermissionError"
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    out["status"] = opener.open(urllib.request.Request(url, data=body, headers=headers), timeout=30).status
except urllib.error.HTTPError as exc:
    out["status"], out["body"] = exc.code, json.loads(exc.read())
print(json.dumps(out))
"""


def _python_for(user: str) -> str | None:
    """An interpreter `user` can run (the venv's may live under a home only root can enter)."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        try:
            subprocess.run([candidate, "-c", "pass"], user=user, check=True, capture_output=True, timeout=30)
            return candidate
        except (OSError, subprocess.SubprocessError):
            continue
    return None


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user may enter (pytest's tmp_path is root's alone): the file mode must be what protects."""
    path = Path(tempfile.mkdtemp(prefix="ck-http-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


@pytest.mark.kernels
def test_another_local_user_cannot_read_the_token_and_is_refused(shared_dir: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to run a client as another user")
    python = _python_for("nobody")
    if python is None:
        pytest.skip("no interpreter the user nobody can run")
    project = shared_dir / "project"
    project.mkdir(mode=0o777)
    project.chmod(0o777)  # nobody could write the marker itself: only the server must not
    marker = project / "ran.txt"
    with http_server(shared_dir / "home", project) as running:
        headers, body = tools_call("ctx_execute", code(f"open({str(marker)!r}, 'w').write('ran')"))
        out = subprocess.run([python, "-c", NOBODY_CLIENT, str(running.token_file), running.url, json.dumps(headers),
                              body.decode()], user="nobody", capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        seen = json.loads(out.stdout)
        assert seen["uid"] != 0 and seen["mode"] == seen["read"] == "PermissionError"
        assert stat.S_IMODE(running.token_file.stat().st_mode) == 0o600
        assert seen["status"] == 401 and seen["body"]["error"] == "unauthorized"
        assert not marker.exists()
        with httpx2.Client(timeout=HTTP_TIMEOUT) as owner:  # the owner's identical request runs
            assert owner.post(running.url, headers={**headers, **running.auth()}, content=body).status_code == 200
        assert marker.read_text() == "ran"


@pytest.mark.kernels
async def test_a_rotated_token_is_refused_at_once_and_the_new_one_accepted_without_a_restart(
        server: HttpServer) -> None:
    old = server.token()
    async with server.http_client(old) as h, Client(streamable_http_client(server.url, http_client=h)) as client:
        made = await client.call_tool("ctx_execute", code("secret = 41"))
    handle = (made.meta or {})[SESSION_KEY]
    rotated = cli(server.home, "token", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    new = server.token()
    assert new != old and new not in rotated.stdout + rotated.stderr
    assert stat.S_IMODE(server.token_file.stat().st_mode) == 0o600
    headers, body = tools_call("ctx_stats", {})
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as raw:
        refused = await raw.post(server.url, headers={**headers, **server.auth(old)}, content=body)
    assert refused.status_code == 401 and "rotated" in refused.json()["error_description"]
    async with server.http_client(new) as h, Client(streamable_http_client(server.url, http_client=h)) as client:
        # The old token's session is bound to the old token: its handle reaches nothing under the new one.
        after = await client.call_tool("ctx_execute", code("print(globals().get('secret'))"),
                                       meta={SESSION_KEY: handle})
    assert (after.is_error, text_of(after)) == (False, "None")


def test_the_token_command_shows_rotates_and_prints_the_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = cli(home, "token", "path")
    assert path.stdout.strip() == str(home / "http-token") and not (home / "http-token").exists()
    shown = cli(home, "token", "show")
    token = shown.stdout.strip()
    assert shown.returncode == 0 and len(token) >= 40
    assert (home / "http-token").read_text().strip() == token
    assert stat.S_IMODE((home / "http-token").stat().st_mode) == 0o600
    assert cli(home, "token", "show").stdout.strip() == token  # made once
    assert json.loads(cli(home, "token", "header").stdout) == {"Authorization": f"Bearer {token}"}
    assert cli(home, "token", "rotate").returncode == 0
    assert cli(home, "token", "show").stdout.strip() not in ("", token)


def test_serve_refuses_a_token_file_others_can_read(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    cli(home, "token", "show")
    (home / "http-token").chmod(0o644)
    out = subprocess.run(server_command("--transport", "http", "--port", "0", "--project", str(project)),
                         env=server_env(home), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "readable or writable by others (mode 0644)" in out.stderr and "token rotate" in out.stderr


def test_no_auth_is_an_explicit_flag_with_a_warning(tmp_path: Path, project: Path) -> None:
    with http_server(tmp_path / "home", project, "--no-auth") as running:
        assert "WARNING: authentication is off (--no-auth)" in running.announced
        headers, body = tools_call("ctx_stats", {})
        with httpx2.Client(timeout=HTTP_TIMEOUT) as raw:
            assert raw.post(running.url, headers=headers, content=body).status_code == 200
    assert not (tmp_path / "home" / "http-token").exists()


# --- where it listens, and Host/Origin -----------------------------------------------------------

@pytest.mark.parametrize("flags, message", [
    (("--host", "0.0.0.0"), "binds beyond loopback only with --allow-remote"),
    (("--host", "0.0.0.0", "--allow-remote", "--no-auth"), "--no-auth is for loopback binds only"),
])
def test_a_non_loopback_bind_is_refused_at_start_without_the_explicit_flag(
        tmp_path: Path, project: Path, flags: tuple[str, ...], message: str) -> None:
    out = subprocess.run(server_command("--transport", "http", "--port", "0", "--project", str(project), *flags),
                         env=server_env(tmp_path / "home"), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert message in out.stderr and "listening" not in out.stderr


def test_a_non_loopback_bind_still_checks_host_and_origin(tmp_path: Path, project: Path) -> None:
    flags = ("--host", "0.0.0.0", "--allow-remote", "--allowed-host", "ck.example",
             "--allowed-origin", "http://ck.example:*")
    with http_server(tmp_path / "home", project, *flags) as running:
        port = running.url.split(":")[2].split("/")[0]
        url = f"http://127.0.0.1:{port}/mcp"
        headers, body = tools_call("ctx_stats", {})
        headers.update(running.auth())

        def status(**extra: str) -> int:
            with httpx2.Client(timeout=HTTP_TIMEOUT) as raw:
                return raw.post(url, headers={**headers, **extra}, content=body).status_code

        assert "ck.example" in running.announced  # the accepted hosts are printed
        assert status(Host=f"evil.example:{port}") == 421
        assert status(Origin="http://evil.example") == 403
        assert status(Host=f"ck.example:{port}", Origin=f"http://ck.example:{port}") == 200
        assert status() == 200  # 127.0.0.1
        # Host is checked before the token: a rebinding page learns nothing, not even where the token is.
        bare = {k: v for k, v in headers.items() if k != "Authorization"}
        with httpx2.Client(timeout=HTTP_TIMEOUT) as raw:
            assert raw.post(url, headers={**bare, "Host": "evil.example"}, content=body).status_code == 421


# --- sessions ------------------------------------------------------------------------------------

@pytest.mark.kernels
async def test_two_default_sdk_clients_over_the_stateless_protocol_do_not_share_state(server: HttpServer) -> None:
    async with (server.http_client() as ha, server.http_client() as hb,
                Client(streamable_http_client(server.url, http_client=ha)) as a,
                Client(streamable_http_client(server.url, http_client=hb)) as b):
        assert (a.protocol_version, b.protocol_version) == (MODERN, MODERN)
        await a.call_tool("ctx_execute", code("x = 1"))
        mine = await a.call_tool("ctx_execute", code("print(x)"))
        theirs = await b.call_tool("ctx_execute", code("print(x)"))
        await b.call_tool("ctx_execute", code("x = 2"))
        mine_again = await a.call_tool("ctx_execute", code("print(x)"))
    assert text_of(mine) == "1" and text_of(mine_again) == "1"
    assert theirs.is_error and "NameError" in text_of(theirs)


def _reply_text(response: httpx2.Response) -> str:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    return uncited("".join(block.get("text", "") for block in result["content"]), result.get("_meta"))


@pytest.mark.kernels
async def test_naming_another_clients_session_does_not_reach_it(tmp_path: Path, project: Path) -> None:
    captured: list[str] = []

    async def keep_session_id(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            captured.append(response.headers["mcp-session-id"])

    probe = code("print(globals().get('x'))")
    with http_server(tmp_path / "home", project, "--max-kernels", "48") as server:  # a kernel per attempt
        legacy_http = httpx2.AsyncClient(headers=server.auth(), timeout=HTTP_TIMEOUT,
                                         event_hooks={"response": [keep_session_id]})
        async with (server.http_client() as ha, legacy_http, server.http_client() as hb,
                    httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as raw,
                    server.http_client(headers={"x-context-kernel-session": "alpha"}) as hn,
                    Client(streamable_http_client(server.url, http_client=ha)) as a,
                    Client(streamable_http_client(server.url, http_client=hn)) as named,
                    Client(streamable_http_client(server.url, http_client=legacy_http), mode="legacy") as old,
                    Client(streamable_http_client(server.url, http_client=hb)) as b):
            await a.call_tool("ctx_execute", code("x = 'a'"))
            await named.call_tool("ctx_execute", code("x = 'alpha'"))
            await old.call_tool("ctx_execute", code("x = 'old'"))
            # What another client can see: every session id, on the page ctx_insight writes.
            page_reply = text_of(await b.call_tool("ctx_insight", {}))
            page = Path(re.search(r"Wrote (\S+\.html)", page_reply).group(1))  # type: ignore[union-attr]
            listed = set(re.findall(r"<tr><td><code>([^<]+)</code>", await anyio.Path(page).read_text()))
            assert len(listed) == 3, page_reply
            names = listed | {sid.removeprefix("http-") for sid in listed}  # an id, or the name behind it
            seen = [text_of(await b.call_tool("ctx_execute", probe, meta={SESSION_KEY: name})) for name in names]
            for carrier in [{"x-context-kernel-session": name} for name in names] + [{"mcp-session-id": captured[0]}]:
                headers, body = tools_call("ctx_execute", probe)
                seen.append(_reply_text(await raw.post(server.url, headers={**headers, **server.auth(), **carrier},
                                                       content=body)))
            kept = [text_of(await c.call_tool("ctx_execute", code("print(x)"))) for c in (a, named, old)]
    assert seen == ["None"] * len(seen)
    assert kept == ["a", "alpha", "old"]


@pytest.mark.kernels
async def test_a_client_without_cookies_continues_its_session_with_the_handle_from_the_reply(
        server: HttpServer) -> None:
    async with server.http_client() as h, Client(streamable_http_client(server.url, http_client=h)) as client:
        h.cookies.clear()
        first = await client.call_tool("ctx_execute", code("z = 3"))
        handle = (first.meta or {})[SESSION_KEY]
        h.cookies.clear()
        kept = await client.call_tool("ctx_execute", code("print(z)"), meta={SESSION_KEY: handle})
        h.cookies.clear()
        lost = await client.call_tool("ctx_execute", code("print(globals().get('z'))"))
    assert text_of(kept) == "3"
    assert text_of(lost) == "None"
    assert isinstance(handle, str) and len(handle) >= 32


@pytest.mark.kernels
async def test_stdio_is_unchanged_no_token_and_one_session(tmp_path: Path, project: Path) -> None:
    from mcp.client.stdio import StdioServerParameters

    cmd = server_command("--project", str(project))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env(tmp_path / "home"))
    async with Client(params) as client:
        await client.call_tool("ctx_execute", code("kept = 'yes'"))
        reply = await client.call_tool("ctx_execute", code("print(kept)"))
    assert text_of(reply) == "yes" and SESSION_KEY not in (reply.meta or {})
    assert not (tmp_path / "home" / "http-token").exists()


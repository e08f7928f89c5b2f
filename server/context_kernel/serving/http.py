"""The streamable HTTP app: only its owner drives it, and every client gets a session of its own.

Every HTTP request passes, in this order, before the SDK sees it:

1. Host and Origin checks (the SDK's DNS-rebinding protection), on for every bind: loopback
   names always, the bound address when it is a specific one, and whatever `--allowed-host` /
   `--allowed-origin` add. A bad Host is answered 421, a bad Origin 403.
2. The bearer token (`security/http_token.py`) unless auth was turned off: `Authorization:
   Bearer <token>`, compared in constant time against the file, which is re-read when it
   changes. Anything else is answered 401 with `WWW-Authenticate: Bearer` (no `resource_metadata`:
   there is no OAuth) and a JSON body saying what to send, where the token is and how a client
   is given it; `/.well-known/…` is answered 404 instead, which ends a client's OAuth discovery
   before it tries a sign-in. The request then carries the SDK's
   `AuthenticatedUser` named by the token's fingerprint, so the SDK binds 2025-style
   `Mcp-Session-Id` sessions to the token, and `tools/sessions.py` binds ours.
3. The session handle: a request without the `context-kernel-session` cookie gets a fresh
   unguessable one (seen by `tools/sessions.py` as if the client had sent it, and set on the
   response), so no two clients share a session unless they choose to.

Inside, `resumption.py` keeps each 2025-protocol stream's events so a client whose stream dropped
gets the rest (the reply of a long call included) when it reconnects.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..security.http_token import TokenFile, TokenFileError, ensure_token
from ..tools.sessions import SESSION_COOKIE, session_cookie
from .resumption import RETRY_INTERVAL_MS, SessionBinding, SessionEventStore

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_BINDS = ("0.0.0.0", "::", "")
_HAS_PORT = re.compile(r":(\d+|\*)$")
WELL_KNOWN = "/.well-known/"
HOW_TO_SEND = ("send the header Authorization: Bearer <token>; context-kernel token show prints the token (this "
               "server has no OAuth sign-in)")


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def _host_patterns(host: str) -> list[str]:
    """`name` allows it with any port or none; `name:port` (or `name:*`) exactly that."""
    if _HAS_PORT.search(host) and not host.endswith("]"):
        return [host]
    return [host, f"{host}:*"]


def transport_security(bind: str, hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> TransportSecuritySettings:
    """Host/Origin validation for a bind: loopback always, the bound address if specific, plus the extras."""
    names = list(LOOPBACK_NAMES)
    if bind not in WILDCARD_BINDS and not is_loopback(bind):
        names.append(f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind)
    allowed_hosts = [p for name in [*names, *hosts] for p in _host_patterns(name)]
    allowed_origins = [f"http://{name}:*" for name in LOOPBACK_NAMES] + [f"http://{name}" for name in LOOPBACK_NAMES]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts,
                                     allowed_origins=[*allowed_origins, *origins])


class OwnerOnly:
    """ASGI middleware: Host/Origin, then the token, then the session handle (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, security: TransportSecuritySettings, token: TokenFile | None) -> None:
        self.app = app
        self.guard = TransportSecurityMiddleware(security)
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan
            return
        refused = await self.guard.validate_request(Request(scope), is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        if scope["path"].startswith(WELL_KNOWN):
            # Nothing is published there. A 404 (not the 401 every other path gets without the token)
            # ends a client's OAuth discovery, which would otherwise go on to a sign-in we do not have.
            await JSONResponse({"error": "not_found", "error_description": f"no OAuth here: {HOW_TO_SEND}"},
                               status_code=404)(scope, receive, send)
            return
        scope = dict(scope)
        user: AuthenticatedUser | None = None
        if self.token is not None:
            owner = self._authenticate(scope)
            if owner is None:
                await self._refuse(scope, receive, send)
                return
            user = AuthenticatedUser(AccessToken(token="", client_id=owner, scopes=[]))
            scope["user"], scope["auth"] = user, AuthCredentials([])
        minted = None
        if session_cookie(Headers(scope=scope)) is None:
            minted = secrets.token_urlsafe(24)
            scope["headers"] = _with_cookie(scope["headers"], f"{SESSION_COOKIE}={minted}")

        async def send_with_cookie(message: Message) -> None:
            if minted is not None and message["type"] == "http.response.start":
                cookie = f"{SESSION_COOKIE}={minted}; Path=/; HttpOnly; SameSite=Strict"
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        reset = auth_context_var.set(user) if user is not None else None
        try:
            await self.app(scope, receive, send_with_cookie)
        finally:
            if reset is not None:
                auth_context_var.reset(reset)

    def _authenticate(self, scope: Scope) -> str | None:
        assert self.token is not None
        header = Headers(scope=scope).get("authorization", "")
        scheme, _, credential = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not credential.strip():
            return None
        fingerprint = self.token.check(credential.strip())
        return f"token:{fingerprint}" if fingerprint is not None else None

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.token is not None
        offered = "authorization" in Headers(scope=scope)
        problem = self.token.problem()
        if problem:
            description = f"the server has no usable token: {problem}"
        elif offered:
            description = "the bearer token is not this server's token (was it rotated?)"
        else:
            description = "every request needs the header `Authorization: Bearer <token>`"
        client = scope.get("client")
        log.warning("refused an HTTP request from %s: %s", f"{client[0]}:{client[1]}" if client else "?", description)
        # No resource_metadata: there is no authorization server to discover. Without credentials RFC 6750
        # wants no error code, but the description stays: clients show it, and it is the way in.
        challenge = 'Bearer realm="context-kernel"'
        if offered or problem:
            challenge += f', error="invalid_token", error_description="{_quotable(description)}"'
        else:
            challenge += f', error_description="{_quotable(HOW_TO_SEND)}"'
        url = str(Request(scope).url.replace(query=None, fragment=None))
        body: dict[str, Any] = {
            "error": "unauthorized",
            "error_description": description,
            "send": "Authorization: Bearer <token>",
            "token_file": str(self.token.path),
            "how": "the token is the file's only line, readable only by the user who runs the server; "
                   "`context-kernel token show` prints it",
            "fix": f"give your client that header: `context-kernel setup claude-code --global --http {url}` "
                   "writes it into Claude Code's config (likewise codex, gemini); the MCP Inspector takes it under "
                   "Authentication (Bearer Token). This server has no OAuth sign-in.",
        }
        await JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})(scope, receive, send)


def _quotable(text: str) -> str:
    """`text` as an auth-param's quoted string may hold it (RFC 6750: printable ASCII without `"` and `\\`)."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "'" if c == '"' else "?" for c in text)


def _with_cookie(headers: list[tuple[bytes, bytes]], cookie: str) -> list[tuple[bytes, bytes]]:
    """The request's headers with `cookie` added to its Cookie header (or as one)."""
    out, added = [], False
    for name, value in headers:
        if name == b"cookie" and not added:
            value, added = value + b"; " + cookie.encode(), True
        out.append((name, value))
    return out if added else [*out, (b"cookie", cookie.encode())]


def http_app(server: Any, *, bind: str, token: TokenFile | None, hosts: Iterable[str] = (),
             origins: Iterable[str] = ()) -> ASGIApp:
    """The server's streamable HTTP app behind `OwnerOnly`; `token=None` turns authentication off."""
    security = transport_security(bind, hosts, origins)
    inner = server.streamable_http_app(host=bind, transport_security=security, event_store=SessionEventStore(),
                                       retry_interval=RETRY_INTERVAL_MS)
    return OwnerOnly(SessionBinding(inner), security=security, token=token)


def start_refusal(bind: str, *, allow_remote: bool, auth: bool, token_file: Path) -> str | None:
    """Why `serve --transport http` must not start so (None: it may); makes the token file if there is none."""
    remote = not is_loopback(bind)
    if remote and not allow_remote:
        return (f"--host {bind} would accept connections from other machines; context-kernel runs code as you, so "
                "it binds beyond loopback only with --allow-remote (the token and the Host/Origin checks stay on: "
                "add the names clients use with --allowed-host)")
    if remote and not auth:
        return "--no-auth is for loopback binds only: with --allow-remote anyone who can reach the port would run code"
    if auth:
        try:
            ensure_token(token_file)
        except (OSError, TokenFileError) as exc:
            return f"cannot use the token file: {exc}"
    return None


def start_notes(bind: str, port: int, *, token: TokenFile | None, remote: bool, hosts: Iterable[str]) -> list[str]:
    """What `serve` says on stderr before it listens: where the token is (never the token), or that there is none."""
    if token is None:
        notes = [f"context-kernel WARNING: authentication is off (--no-auth): any process that can reach "
                 f"{bind}:{port} runs code as this user"]
    else:
        notes = [f"context-kernel: HTTP requests need `Authorization: Bearer <token>`; the token is in {token.path} "
                 "(`context-kernel token show` prints it)"]
    if remote:
        allowed = ", ".join(transport_security(bind, hosts).allowed_hosts)
        notes.append(f"context-kernel: --allow-remote: requests must name one of these hosts: {allowed}")
    return notes

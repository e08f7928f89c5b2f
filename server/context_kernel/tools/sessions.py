"""Which client session a tool call belongs to: kernels and records are kept per session.

Over stdio (and in memory) one server process serves exactly one client: the session is the
server's lifespan, or a name the client gives in `_meta["context-kernel/session"]`.

Over HTTP a session is a capability, never a label: its id is derived from the credential of the
request (the token's fingerprint, see `serving/http.py`; "anonymous" when auth is off) and from
something only that client holds, so naming a session id seen elsewhere (`ctx_insight`,
`context-kernel sessions`) reaches nothing, and a client holding another token reaches none of
this token's sessions. What identifies the client, first match wins:

1. a name it gives: `_meta["context-kernel/session"]` or the header `x-context-kernel-session`
   (scoped to its credential: two clients sharing a token share a session only by sending the
   same name on purpose);
2. the `Mcp-Session-Id` of a 2025-protocol session — only on that protocol, where the SDK has
   checked that the session exists and belongs to this credential;
3. the session handle: an unguessable value the server mints for any request that brings none
   and sends back as the cookie `context-kernel-session` (clients that keep cookies, the SDK's
   httpx client among them, continue their session without doing anything) and in the reply's
   `_meta["context-kernel/session"]` (a client that keeps no cookies sends it back as 1.);
4. nothing (an app built without `serving/http.py`): a session for this one request.
"""

from __future__ import annotations

import hashlib
import uuid
from http.cookies import CookieError, SimpleCookie
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.mcpserver import Context
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from ..execution.requests import SessionRef

SESSION_META_KEY = "context-kernel/session"
SESSION_HEADER = "x-context-kernel-session"
SESSION_COOKIE = "context-kernel-session"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
ANONYMOUS = "anonymous"
MAX_NAME = 256
_ONE_REQUEST = "context_kernel.session"  # scope key: the id of a request that brought no handle


class SessionIds:
    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.default_id = uuid.uuid4().hex[:16]

    def resolve(self, ctx: Context[Any, Any]) -> SessionRef:
        meta = _meta_dict(ctx)
        client = _client_name(ctx, meta)
        if self.transport != "http":
            explicit = meta.get(SESSION_META_KEY)
            if isinstance(explicit, str) and explicit:
                safe = "".join(ch for ch in explicit[:64] if ch.isalnum() or ch in "-_.")
                return SessionRef(id=f"{self.transport}-{safe}", client=client, transport=self.transport)
            return SessionRef(id=self.default_id, client=client, transport=self.transport)
        return SessionRef(id=self._http_id(ctx, meta), client=client, transport=self.transport)

    def _http_id(self, ctx: Context[Any, Any], meta: dict[str, object]) -> str:
        headers = ctx.headers or {}
        owner = principal(ctx)
        named = meta.get(SESSION_META_KEY) or headers.get(SESSION_HEADER)
        if isinstance(named, str) and named:
            return _derive(owner, "name", named[:MAX_NAME])
        legacy = headers.get("mcp-session-id")
        if legacy and ctx.request_context.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            return _derive(owner, "mcp-session", legacy)
        handle = session_cookie(headers)
        if handle:
            return _derive(owner, "name", handle)
        scope = _scope(ctx)
        one = scope.setdefault(_ONE_REQUEST, uuid.uuid4().hex) if scope is not None else uuid.uuid4().hex
        return _derive(owner, "request", one)

    def handle_to_return(self, ctx: Context[Any, Any]) -> str | None:
        """The session handle a reply carries in `_meta`: when the session came from the minted cookie."""
        if self.transport != "http":
            return None
        headers = ctx.headers or {}
        if _meta_dict(ctx).get(SESSION_META_KEY) or headers.get(SESSION_HEADER):
            return None
        if headers.get("mcp-session-id") and ctx.request_context.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        return session_cookie(headers)


def _derive(owner: str, kind: str, value: str) -> str:
    digest = hashlib.sha256(f"{owner}\0{kind}\0{value}".encode("utf-8", "replace")).hexdigest()
    return f"http-{digest[:15]}"


def principal(ctx: Context[Any, Any]) -> str:
    """Who sent this request: the fingerprint of the token it presented, or "anonymous" without auth."""
    scope = _scope(ctx)
    user = scope.get("user") if scope is not None else None
    if isinstance(user, AuthenticatedUser):
        return user.access_token.client_id
    return ANONYMOUS


def session_cookie(headers: Any) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:
        return None
    morsel = jar.get(SESSION_COOKIE)
    return morsel.value[:MAX_NAME] if morsel is not None and morsel.value else None


def _scope(ctx: Context[Any, Any]) -> dict[str, Any] | None:
    scope = getattr(ctx.request_context.request, "scope", None)
    return scope if isinstance(scope, dict) else None


def _meta_dict(ctx: Context[Any, Any]) -> dict[str, object]:
    meta: object = ctx.request_context.meta
    if meta is None:
        return {}
    if isinstance(meta, dict):
        return {str(k): v for k, v in meta.items()}
    dumped = meta.model_dump(by_alias=True) if hasattr(meta, "model_dump") else {}
    return dumped if isinstance(dumped, dict) else {}


def _client_name(ctx: Context, meta: dict[str, object]) -> str | None:
    info = meta.get(CLIENT_INFO_META_KEY)
    if isinstance(info, dict) and info.get("name"):
        return f"{info.get('name')} {info.get('version', '')}".strip()
    try:
        params = ctx.request_context.session.client_params
        ci = params.client_info if params else None
        return f"{ci.name} {ci.version}".strip() if ci else None
    except AttributeError:
        return None

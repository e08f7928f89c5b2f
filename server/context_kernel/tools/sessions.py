"""Which client session a tool call belongs to: kernels and records are kept per session.

The 2026 protocol is stateless (a fresh connection object per request), so identity comes from:
1. an explicit session name: header `x-context-kernel-session` or `_meta["context-kernel/session"]`;
2. the `Mcp-Session-Id` header of a 2025-style streamable HTTP session;
3. otherwise the server lifespan: over stdio (and in memory) one lifespan serves exactly one client.
"""

from __future__ import annotations

import uuid
from typing import Any

from mcp.server.mcpserver import Context

from ..execution.requests import SessionRef

SESSION_META_KEY = "context-kernel/session"
SESSION_HEADER = "x-context-kernel-session"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"


class SessionIds:
    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.default_id = uuid.uuid4().hex[:16]

    def resolve(self, ctx: Context[Any, Any]) -> SessionRef:
        headers = ctx.headers or {}
        meta = _meta_dict(ctx)
        explicit = meta.get(SESSION_META_KEY) or headers.get(SESSION_HEADER) or headers.get("mcp-session-id")
        client = _client_name(ctx, meta)
        if isinstance(explicit, str) and explicit:
            safe = "".join(ch for ch in explicit[:64] if ch.isalnum() or ch in "-_.")
            return SessionRef(id=f"{self.transport}-{safe}", client=client, transport=self.transport)
        return SessionRef(id=self.default_id, client=client, transport=self.transport)


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

"""What the agent asked and read besides running code — searches, fetches, indexing, batch queries — kept with
the session so its export tells the whole story: a reviewer sees what the agent had read before a cell.

The MCP edge hands over each such call's arguments and reply text; they are capped (the export is a trail, not
a copy of the knowledge base: the sources stay searchable) and redacted before they are stored, as every record is.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..metering import CallRecord

# The tools whose calls are part of the conversation (ctx_execute and its kin are the cells themselves).
CONVERSATION_TOOLS = frozenset({"ctx_search", "ctx_fetch_and_index", "ctx_index", "ctx_batch_execute", "ctx_follow"})
MAX_ARGUMENTS_CHARS = 2_000
MAX_REPLY_CHARS = 4_000


def said(tool: str, arguments: dict[str, Any], reply: str) -> tuple[str | None, str | None]:
    """The call's arguments (JSON) and reply, capped; (None, None) for a tool outside the conversation."""
    if tool not in CONVERSATION_TOOLS:
        return None, None
    if tool == "ctx_fetch_and_index":  # a URL's `user:password@` was for the request only, as everywhere
        arguments = _without_credentials(arguments)
    # Strings cut before the JSON is made: a ctx_index of 10 MB of content is not serialised whole on the loop.
    shortened = {k: _cut(v) for k, v in arguments.items()}
    return _capped(json.dumps(shortened, ensure_ascii=False), MAX_ARGUMENTS_CHARS), _capped(reply, MAX_REPLY_CHARS)


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_ARGUMENTS_CHARS:
        return _capped(value, MAX_ARGUMENTS_CHARS)
    return value


def _without_credentials(value: Any) -> Any:
    from ..security.redact import url_without_credentials

    if isinstance(value, str):
        return url_without_credentials(value) if "://" in value else value
    if isinstance(value, list):
        return [_without_credentials(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_credentials(v) for k, v in value.items()}
    return value


def redacted(call: CallRecord) -> CallRecord:
    """The call with secrets taken out of its arguments and reply (blocking: the redaction's regexes)."""
    from ..security.record_redaction import redacted_text  # the redaction's modules: not at the server's start

    if call.arguments is None and call.reply is None:
        return call
    return replace(call, arguments=None if call.arguments is None else redacted_text(call.arguments),
                   reply=None if call.reply is None else redacted_text(call.reply))


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[… {len(text) - limit:,} more characters not kept]"

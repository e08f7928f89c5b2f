"""Edits of Codex's `config.toml` with tomlkit, which keeps the user's comments, order and spacing.

Only `[mcp_servers.context-kernel]` is ours (https://developers.openai.com/codex/mcp); we also read
`[features]` to tell whether hooks are switched off (https://developers.openai.com/codex/hooks).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table
from tomlkit.toml_document import TOMLDocument

from .clients import SERVER_NAME, HttpEndpoint
from .errors import ConfigFileError

SERVERS_KEY = "mcp_servers"


def parse_toml(path: Path, text: str | None) -> TOMLDocument:
    if text is None:
        return tomlkit.document()
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigFileError(path, f"not valid TOML ({exc})") from exc


def render_toml(doc: TOMLDocument) -> str:
    # Removing a table can leave a run of blank lines at the end; one newline is enough.
    text = tomlkit.dumps(doc)
    return text.rstrip("\n") + "\n" if text.strip() else ""


def set_server(doc: TOMLDocument, executable: str, path: Path, http: HttpEndpoint | None = None) -> None:
    """Add our server, or bring how it is reached up to date (`command`/`args`, or Codex's `url` and
    `http_headers` for --http); other keys of it stay."""
    servers = doc.get(SERVERS_KEY)
    if servers is None:
        # A super table renders as `[mcp_servers.context-kernel]` alone, without an empty `[mcp_servers]`.
        servers = tomlkit.table(is_super_table=True)
        doc[SERVERS_KEY] = servers
    elif not isinstance(servers, MutableMapping):  # a Table, an InlineTable, or a table split in parts
        raise ConfigFileError(path, f"`{SERVERS_KEY}` should be a table, found {type(servers).__name__}")
    wanted: dict[str, object] = {"command": executable, "args": ["serve"]} if http is None else {"url": http.url}
    if http is not None and http.headers:
        headers = tomlkit.inline_table()
        headers.update(http.headers)
        wanted["http_headers"] = headers
    current = servers.get(SERVER_NAME)
    if isinstance(current, MutableMapping):
        for key in ("command", "args", "url", "http_headers"):
            if key in current and key not in wanted:
                del current[key]
        for key, value in wanted.items():
            if _plain(current.get(key)) != _plain(value):
                current[key] = value
        return
    entry: Table | InlineTable
    if isinstance(servers, InlineTable):
        entry = tomlkit.inline_table()  # a table cannot sit inside an inline table
    else:
        entry = tomlkit.table()
    for key, value in wanted.items():
        entry[key] = value
    if isinstance(entry, Table):
        entry.add(tomlkit.nl())  # a blank line before whatever table follows ours
    servers[SERVER_NAME] = entry


def _plain(value: object) -> object:
    """A TOML item as plain Python, to compare without its formatting."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def remove_server(doc: TOMLDocument) -> None:
    servers = doc.get(SERVERS_KEY)
    if isinstance(servers, MutableMapping) and SERVER_NAME in servers:
        del servers[SERVER_NAME]
        if not servers:
            del doc[SERVERS_KEY]


def server_present(doc: TOMLDocument) -> bool:
    servers = doc.get(SERVERS_KEY)
    return isinstance(servers, MutableMapping) and isinstance(servers.get(SERVER_NAME), MutableMapping)


def hooks_switched_off(doc: TOMLDocument) -> str | None:
    """The setting that turns Codex hooks off, if any (`codex_hooks` is the deprecated alias)."""
    features: Any = doc.get("features")
    if not isinstance(features, MutableMapping):
        return None
    for key in ("hooks", "codex_hooks"):
        if features.get(key) is False:
            return f"[features] {key} = false"
    return None

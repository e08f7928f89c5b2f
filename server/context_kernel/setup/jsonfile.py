"""Edits of JSON config files: our MCP server entry and our hook entries, and nothing else.

Everything works on the parsed object, in place; `apply.py` renders it back with the file's own
indentation. An entry is ours when its command runs ` hook <client> ` of context-kernel, so a
user's own hooks, even in the same group, are never touched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .clients import SERVER_NAME, Client, HttpEndpoint
from .errors import ConfigFileError

JsonObject = dict[str, Any]
Indent = int | str

_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)
_COMMENT = re.compile(r"^\s*//|/\*", re.MULTILINE)


def parse_json(path: Path, text: str | None) -> tuple[JsonObject, Indent]:
    """The object in `text` and the indentation to write it back with. No file (None) or a blank one is `{}`."""
    if text is None or not text.strip():
        return {}, 2
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        if _COMMENT.search(text):
            # VS Code and Gemini accept comments in their own JSON; we cannot keep them, so we do not write.
            problem += "; it has comments, which setup cannot keep: remove them or add the entries by hand"
        raise ConfigFileError(path, problem) from exc
    if not isinstance(data, dict):
        raise ConfigFileError(path, f"expected a JSON object at the top level, found {_kind(data)}")
    found = _INDENT.search(text)
    indent: Indent = 2
    if found:
        indent = "\t" if found.group(1).startswith("\t") else len(found.group(1))
    return data, indent


def render_json(data: JsonObject, indent: Indent) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def is_ours(command: object, client: Client) -> bool:
    """A hook command we wrote: `<context-kernel> hook <client> <Event>`, however the path is quoted."""
    return (isinstance(command, str) and f" hook {client.name} " in f"{command} "
            and ("context-kernel" in command or "context_kernel" in command))


def hook_command(executable: str, client: Client, event: str) -> str:
    import shlex

    return shlex.join([executable, "hook", client.name, event])


def server_entry(client: Client, executable: str, http: HttpEndpoint | None = None) -> JsonObject:
    if http is not None:
        entry: JsonObject = {"type": "http"} if client.server_type_field else {}
        entry[client.http_url_key] = http.url
        if http.headers:
            entry["headers"] = dict(http.headers)
        return entry
    entry = {"type": "stdio"} if client.server_type_field else {}
    entry.update(command=executable, args=["serve"])
    return entry


# Keys that say how the client reaches the server; switching between stdio and --http drops the other kind's.
TRANSPORT_KEYS = ("type", "command", "args", "url", "httpUrl")


# --- MCP server -------------------------------------------------------------------------------

def set_server(data: JsonObject, client: Client, executable: str, path: Path, http: HttpEndpoint | None = None) -> None:
    """Add our server, or bring how it is reached up to date; other keys of it (env, other headers, …) stay."""
    servers = _child_object(data, client.servers_key, path)
    wanted = server_entry(client, executable, http)
    current = servers.get(SERVER_NAME)
    if not isinstance(current, dict):
        servers[SERVER_NAME] = wanted
        return
    for key in TRANSPORT_KEYS:
        if key in current and key not in wanted:
            del current[key]
    headers = current.get("headers")
    if isinstance(headers, dict):
        headers.pop("Authorization", None)  # ours: set again below when the endpoint has a token
        if not headers:
            del current["headers"]
    for key, value in wanted.items():
        if key == "headers" and isinstance(current.get("headers"), dict):
            current["headers"].update(value)
        elif current.get(key) != value:
            current[key] = value


def remove_server(data: JsonObject, client: Client) -> None:
    servers = data.get(client.servers_key)
    if isinstance(servers, dict) and SERVER_NAME in servers:
        del servers[SERVER_NAME]
        if not servers:
            del data[client.servers_key]


def server_present(data: JsonObject, client: Client) -> bool:
    servers = data.get(client.servers_key)
    return isinstance(servers, dict) and isinstance(servers.get(SERVER_NAME), dict)


# --- hooks --------------------------------------------------------------------------------------

def _hook_entry(client: Client, event: str, executable: str) -> JsonObject:
    entry: JsonObject = {"name": client.hook_name(event)} if client.hook_name_field else {}
    if client.hook_type_field:
        entry["type"] = "command"
    entry["command"] = hook_command(executable, client, event)
    return entry


def _new_group(client: Client, event: str, executable: str) -> JsonObject:
    if client.hook_style == "flat":
        return _hook_entry(client, event, executable)
    group: JsonObject = {}
    if event in client.tool_events and client.matcher is not None:
        group["matcher"] = client.matcher
    group["hooks"] = [_hook_entry(client, event, executable)]
    return group


def _our_entries(items: list[Any], client: Client) -> list[JsonObject]:
    """Our hook entries in one event's list (grouped or flat), in file order."""
    found: list[JsonObject] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if client.hook_style == "flat":
            if is_ours(item.get("command"), client):
                found.append(item)
        elif isinstance(item.get("hooks"), list):
            found.extend(h for h in item["hooks"] if isinstance(h, dict) and is_ours(h.get("command"), client))
    return found


def _drop_entries(items: list[Any], client: Client, keep: JsonObject | None) -> bool:
    """Remove our entries except `keep` from one event's list; groups left empty go too. True if any went."""
    dropped = False
    kept: list[Any] = []
    for item in items:
        if client.hook_style == "flat":
            if isinstance(item, dict) and item is not keep and is_ours(item.get("command"), client):
                dropped = True
                continue
        elif isinstance(item, dict) and isinstance(item.get("hooks"), list):
            inner = [h for h in item["hooks"]
                     if not (isinstance(h, dict) and h is not keep and is_ours(h.get("command"), client))]
            if len(inner) != len(item["hooks"]):
                dropped = True
                if not inner:
                    continue
                item["hooks"] = inner
        kept.append(item)
    items[:] = kept
    return dropped


def set_hooks(data: JsonObject, client: Client, executable: str, path: Path) -> None:
    """One entry of ours per event: added if missing, its command brought up to date in place (so a
    matcher or timeout the user changed stays), duplicates and events we no longer use removed."""
    if client.hook_style == "flat" and client.hooks_boilerplate:
        data.setdefault("version", 1)  # Cursor requires it
    hooks = _child_object(data, "hooks", path)
    for event in client.events:
        items = hooks.get(event)
        if items is None:
            items = hooks[event] = []
        elif not isinstance(items, list):
            raise ConfigFileError(path, f'"hooks.{event}" should be a JSON array, found {_kind(items)}')
        ours = _our_entries(items, client)
        if not ours:
            items.append(_new_group(client, event, executable))
            continue
        first = ours[0]
        wanted = hook_command(executable, client, event)
        if first.get("command") != wanted:
            first["command"] = wanted
        _drop_entries(items, client, keep=first)
    for event in [e for e in hooks if e not in client.events and isinstance(hooks[e], list)]:
        if _drop_entries(hooks[event], client, keep=None) and not hooks[event]:
            del hooks[event]


def remove_hooks(data: JsonObject, client: Client) -> None:
    """Remove every entry of ours; event lists and the hooks object that only held ours go too."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    touched = False
    for event in [e for e in hooks if isinstance(hooks[e], list)]:
        if _drop_entries(hooks[event], client, keep=None):
            touched = True
            if not hooks[event]:
                del hooks[event]
    if touched and not hooks:
        del data["hooks"]


def hook_events_present(data: JsonObject, client: Client) -> set[str]:
    """Events under which one of our entries is registered."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return set()
    return {event for event, items in hooks.items() if isinstance(items, list) and _our_entries(items, client)}


# --- helpers ------------------------------------------------------------------------------------

def _child_object(parent: JsonObject, key: str, path: Path) -> JsonObject:
    child = parent.get(key)
    if child is None:
        child = parent[key] = {}
    elif not isinstance(child, dict):
        raise ConfigFileError(path, f'"{key}" should be a JSON object, found {_kind(child)}')
    return child


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return names.get(type(value), type(value).__name__)

"""Plan → diff → write: what setup or uninstall would change, shown as diffs, then written with backups.

A plan reads and parses every file first and raises `ConfigFileError` before anything is written,
so a file we cannot parse is never overwritten and a refused run leaves every file as it was.

Backups: the first time we change a file that already existed, its content is copied to
`<file>.context-kernel.bak`; later runs never overwrite that copy, so it always holds the file as it
was before context-kernel first touched it. Uninstall leaves backups in place.

Uninstall deletes a file only when nothing but our content is left in it (`{}`, Cursor's
`{"version": 1}`, an empty rule) and there is no backup, i.e. setup created it; directories left
empty by that deletion are removed up to the project (or home) directory.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from . import instructions, jsonfile, tomlfile
from .clients import BACKUP_SUFFIX, Client, HttpEndpoint, Scope
from .errors import ConfigFileError

Action = Literal["setup", "uninstall"]
Part = Literal["mcp", "hooks", "instructions"]


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def read_file(path: Path) -> str | None:
    """The file's text (newlines kept as they are), or None when there is no file."""
    try:
        with path.open(encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigFileError(path, "not UTF-8 text") from exc
    except IsADirectoryError as exc:
        raise ConfigFileError(path, "is a directory, expected a file") from exc


@dataclass(frozen=True)
class FileChange:
    path: Path
    before: str | None
    """None: the file does not exist."""
    after: str | None
    """None: the file is (or stays) absent."""
    parts: tuple[Part, ...]
    """What of ours lives in this file."""
    token: str | None = None
    """The bearer token the new content carries (setup --http): the file is made private, diffs hide it."""

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def kind(self) -> str:
        if not self.changed:
            return "unchanged"
        if self.before is None:
            return "create"
        return "delete" if self.after is None else "update"

    def diff(self, label: str) -> str:
        old = self.before.splitlines(keepends=True) if self.before is not None else []
        new = self.after.splitlines(keepends=True) if self.after is not None else []
        # git-style a/ b/ prefixes for project-relative paths; paths under ~ or absolute stay as they are.
        a, b = (f"a/{label}", f"b/{label}") if not label.startswith(("~", "/")) else (label, label)
        lines = difflib.unified_diff(old, new, fromfile=a if self.before is not None else "/dev/null",
                                     tofile=b if self.after is not None else "/dev/null")
        text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
        return text.replace(self.token, "<the token of `context-kernel token path`>") if self.token else text


@dataclass(frozen=True)
class Plan:
    client: Client
    action: Action
    scope: Scope
    changes: tuple[FileChange, ...]
    """Every file this client uses in this scope, changed or not."""

    @property
    def pending(self) -> list[FileChange]:
        return [c for c in self.changes if c.changed]


def build_plan(client: Client, action: Action, scope: Scope, executable: str,
               http: HttpEndpoint | None = None) -> Plan:
    """Read and edit every file in memory; raises ConfigFileError before anything is written.

    `http`: the MCP entry points at a running HTTP server instead of starting one.
    """
    files = client.files(scope)
    parts: dict[Path, list[Part]] = {}
    named: tuple[tuple[Part, Path | None], ...] = (("mcp", files.mcp), ("hooks", files.hooks),
                                                   ("instructions", files.instructions))
    for part, path in named:
        if path is not None:
            parts.setdefault(path, []).append(part)
    changes = [_plan_file(client, action, path, tuple(p), executable, http) for path, p in parts.items()]
    return Plan(client, action, scope, tuple(changes))


def _plan_file(client: Client, action: Action, path: Path, parts: tuple[Part, ...], executable: str,
               http: HttpEndpoint | None) -> FileChange:
    before = read_file(path)
    if action == "uninstall" and before is None:
        return FileChange(path, None, None, parts)
    if path.suffix == ".toml":
        after, empty = _edit_toml(action, path, before, executable, http)
    elif path.suffix == ".json":
        after, empty = _edit_json(client, action, path, before, parts, executable, http)
    else:
        after, empty = _edit_text(client, action, before)
    if action == "uninstall" and after != before and empty and not backup_path(path).exists():
        after = None  # setup created it, and with our entries gone nothing is left in it
    token = http.token if http and http.token and after and http.token in after else None
    return FileChange(path, before, after, parts, token)


def _edit_json(client: Client, action: Action, path: Path, before: str | None, parts: tuple[Part, ...],
               executable: str, http: HttpEndpoint | None) -> tuple[str | None, bool]:
    data, indent = jsonfile.parse_json(path, before)
    if "mcp" in parts:
        if action == "setup":
            jsonfile.set_server(data, client, executable, path, http)
        else:
            jsonfile.remove_server(data, client)
    if "hooks" in parts:
        if action == "setup":
            jsonfile.set_hooks(data, client, executable, path)
        else:
            jsonfile.remove_hooks(data, client)
    boilerplate = set(client.hooks_boilerplate) if "hooks" in parts else set()
    empty = not (set(data) - boilerplate)
    if before is not None and before.strip() and json.loads(before.lstrip("\ufeff")) == data:
        return before, empty  # nothing to do: leave the user's formatting alone
    return jsonfile.render_json(data, indent), empty


def _edit_toml(action: Action, path: Path, before: str | None, executable: str,
               http: HttpEndpoint | None) -> tuple[str | None, bool]:
    doc = tomlfile.parse_toml(path, before)
    if action == "setup":
        tomlfile.set_server(doc, executable, path, http)
    else:
        tomlfile.remove_server(doc)
    if before is not None and tomlfile.parse_toml(path, before).unwrap() == doc.unwrap():
        return before, not before.strip()
    after = tomlfile.render_toml(doc)
    return after, not after.strip()


def _edit_text(client: Client, action: Action, before: str | None) -> tuple[str | None, bool]:
    preamble = client.instructions_preamble
    if action == "setup":
        after = instructions.upsert_block(before, preamble)
    else:
        after = instructions.remove_block(before or "")
    return after, instructions.only_boilerplate(after, preamble)


# --- writing ------------------------------------------------------------------------------------

def write_plan(plan: Plan) -> list[Path]:
    """Write every pending change; returns the backups made by this run."""
    backups: list[Path] = []
    for change in plan.pending:
        if change.after is None:
            change.path.unlink()
            _remove_empty_dirs(change.path.parent, _root(change.path, plan.scope))
            continue
        if change.before is not None:
            backup = backup_path(change.path)
            if not backup.exists():
                shutil.copy2(change.path, backup)  # follows a symlink: the backup holds the content
                backups.append(backup)
        _atomic_write(change.path, change.after, private=change.token is not None)
    return backups


def _atomic_write(path: Path, text: str, *, private: bool = False) -> None:
    # A symlinked config (dotfiles repositories do this) is written through, so the link stays.
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.context-kernel.tmp")
    with tmp.open("w", encoding="utf-8", newline="") as f:
        f.write(text)
    if target.exists():
        shutil.copymode(target, tmp)  # ~/.claude.json is private (0600); keep it so
    if private:  # it carries the server's bearer token: only its owner may read it
        tmp.chmod(tmp.stat().st_mode & 0o700)
    os.replace(tmp, target)


def _root(path: Path, scope: Scope) -> Path:
    return scope.project_dir if path.is_relative_to(scope.project_dir) else scope.home_dir


def _remove_empty_dirs(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_relative_to(stop):
        try:
            directory.rmdir()  # only succeeds when empty
        except OSError:
            return
        directory = directory.parent


def display(path: Path, scope: Scope) -> str:
    """A path as the user thinks of it: relative to the project, else under ~, else absolute."""
    if path.is_relative_to(scope.project_dir):
        return str(path.relative_to(scope.project_dir))
    if path.is_relative_to(scope.home_dir):
        return "~/" + str(path.relative_to(scope.home_dir))
    return str(path)

"""`context-kernel setup|uninstall <client> [--project DIR] [--global] [--dry-run] [--http URL [--no-token]]`.

The top-level CLI passes the home directory, the working directory and the path of the installed
`context-kernel` script, so nothing here reads the process environment.

`--http URL` points the client at a server the user runs (`context-kernel serve --transport http`)
instead of having the client start one over stdio. The entry carries the server's bearer token as
an `Authorization` header (Codex: `http_headers`), so it is written only to the user's own files:
a project file may be committed. Files that carry it are made private (0600); dry-run diffs hide
it. After `context-kernel token rotate`, run the same setup again.

Exit codes: 0 done (or nothing to do), 2 refused (a config file we cannot parse, no such project,
a bad --http URL, a token that would land in a project file).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clients import CLIENT_NAMES

if TYPE_CHECKING:
    from ..locations import UserDirs
    from .apply import Plan
    from .clients import HttpEndpoint, Scope

PART_LABELS = {"mcp": 'MCP server "context-kernel"', "instructions": "routing instructions"}
VERBS = {"create": "created", "update": "updated", "delete": "removed"}
COMMANDS = (("setup", "register the MCP server, hooks and routing instructions with a client"),
            ("uninstall", "remove exactly what setup added for a client"))


def add_parsers(sub: Any, run: Callable[[argparse.Namespace], int]) -> None:
    """Register `setup` and `uninstall` on the main parser's subcommands; `run` is called with the parsed args.

    Cheap on purpose: the main parser is built for every command, the hooks' included, so what
    setup needs (TOML editing, diffs) is imported only when it runs.
    """
    for name, text in COMMANDS:
        p = sub.add_parser(name, help=text, description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("client", choices=CLIENT_NAMES)
        p.add_argument("--project", default=None, help="project directory (default: the current directory)")
        p.add_argument("--global", dest="is_global", action="store_true",
                       help="write the user's own config files instead of the project's")
        p.add_argument("--dry-run", action="store_true", help="print the diff of every file; write nothing")
        if name == "setup":
            p.add_argument("--http", metavar="URL", default=None,
                           help="connect to a running `serve --transport http` at URL (e.g. "
                                "http://127.0.0.1:8765/mcp) with its bearer token; user files only (--global)")
            p.add_argument("--no-token", action="store_true",
                           help="with --http: send no token (a server started with --no-auth)")
        p.set_defaults(func=run, action=name)


def main(argv: list[str], home_dir: Path, cwd: Path, executable: str, token_file: Path | None = None,
         dirs: UserDirs | None = None, ephemeral: str | None = None) -> int:
    """`setup`/`uninstall` parsed as the top-level CLI parses them (the tests call this)."""
    parser = argparse.ArgumentParser(prog="context-kernel")
    add_parsers(parser.add_subparsers(dest="command", required=True), lambda _args: 0)
    return run(parser.parse_args(argv), home_dir=home_dir, cwd=cwd, executable=executable, token_file=token_file,
               dirs=dirs, ephemeral=ephemeral)


def run(args: argparse.Namespace, *, home_dir: Path, cwd: Path, executable: str,
        token_file: Path | None = None, dirs: UserDirs | None = None, ephemeral: str | None = None) -> int:
    """`token_file`: the HTTP transport's token (the data dir's), for --http; `dirs`: the clients' user
    directories as the environment moves them (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME);
    `ephemeral`: `executable` lives in uvx's cache, so no config may name it; this is the command that
    installs the same package for good."""
    from .apply import build_plan, display, write_plan
    from .clients import CLIENTS, Scope
    from .errors import ConfigFileError

    action = args.action
    client = CLIENTS[args.client]
    project = _project_dir(args.project, cwd, home_dir)
    if not project.is_dir():
        print(f"context-kernel {action}: no such project directory: {project}", file=sys.stderr)
        return 2
    scope = Scope(project_dir=project, home_dir=home_dir, is_global=args.is_global, dirs=dirs)
    http: HttpEndpoint | None = None
    if getattr(args, "http", None) is not None:
        endpoint = _http_endpoint(args, client.files(scope).mcp, scope, token_file)
        if isinstance(endpoint, str):
            print(f"context-kernel setup {client.name} --http: {endpoint}", file=sys.stderr)
            return 2
        http = endpoint
    try:
        plan = build_plan(client, action, scope, executable, http)
    except ConfigFileError as exc:
        print(f"context-kernel {action} {client.name}: {exc}", file=sys.stderr)
        return 2
    where = "your user files (~)" if scope.is_global else f"project {project}"
    if not plan.pending:
        state = "already set up" if action == "setup" else "not set up"
        print(f"{client.title}: context-kernel is {state} in {where}; nothing to change.")
        return 0
    if args.dry_run:
        for change in plan.pending:
            print(change.diff(display(change.path, scope)), end="")
        print(f"dry run: {len(plan.pending)} file(s) would change for {client.title} in {where}; nothing was written.")
        return 0
    if action == "setup" and http is None and ephemeral:
        print(f"context-kernel setup {client.name}: this context-kernel runs from uvx's cache ({executable}), "
              f"which uv may delete at any time, so a client config must not point into it. Install it for good "
              f"with `{ephemeral}`, then run `context-kernel setup {client.name}` from there; or use --http with a "
              "server you run yourself.", file=sys.stderr)
        return 2
    if action == "setup" and http is None and not Path(executable).is_file():
        print(f"warning: {executable} does not exist; the client will not be able to start it", file=sys.stderr)
    backups = write_plan(plan)
    _report(plan, backups, where)
    if http is not None:
        _report_http(http, token_file)
    return 0


def _http_endpoint(args: argparse.Namespace, mcp_file: Path | None, scope: Scope,
                   token_file: Path | None) -> HttpEndpoint | str:
    """The endpoint --http asks for, or why it is refused (one sentence saying what to do)."""
    from urllib.parse import urlsplit

    from ..security.http_token import TokenFileError, ensure_token
    from .clients import HttpEndpoint

    url = args.http
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http(s) URL; give the server's address, e.g. http://127.0.0.1:8765/mcp"
    if args.no_token:
        return HttpEndpoint(url, None)
    if mcp_file is None or mcp_file.is_relative_to(scope.project_dir):
        where = mcp_file.name if mcp_file is not None else "a project file"
        return (f"the entry would carry the server's bearer token in {where} inside the project, which a "
                "repository may commit; add --global to write your user config instead")
    if token_file is None:
        return "no token file is known here; run it as `context-kernel setup … --http URL`"
    try:
        return HttpEndpoint(url, ensure_token(token_file))
    except (OSError, TokenFileError) as exc:
        return f"cannot read the token: {exc}"


def _report_http(http: HttpEndpoint, token_file: Path | None) -> None:
    if http.token is None:
        print(f"note: the client connects to {http.url} without a token: the server must run with --no-auth.")
        return
    print(f"note: the client connects to {http.url} and sends the token of {token_file}; start the server with "
          "`context-kernel serve --transport http`, and after `context-kernel token rotate` run this setup again.")


def _project_dir(arg: str | None, cwd: Path, home_dir: Path) -> Path:
    if arg is None:
        return cwd.resolve()
    if arg == "~" or arg.startswith("~/"):
        return (home_dir / arg[2:]).resolve()
    return (cwd / arg).resolve()


def _report(plan: Plan, backups: list[Path], where: str) -> None:
    from .apply import display
    from .clients import BACKUP_SUFFIX
    from .status import hooks_status

    client, scope = plan.client, plan.scope
    done = "set up" if plan.action == "setup" else "removed"
    print(f"{client.title}: context-kernel {done} in {where}")
    backed_up = {b.with_name(b.name.removesuffix(BACKUP_SUFFIX)) for b in backups}
    for change in plan.pending:
        parts = ", ".join(PART_LABELS.get(p, f"{len(client.events)} hooks") for p in change.parts)
        note = f"; backup {display(change.path, scope)}{BACKUP_SUFFIX}" if change.path in backed_up else ""
        print(f"  {VERBS[change.kind]:<8} {display(change.path, scope)}  ({parts}{note})")
    if plan.action != "setup":
        return
    if client.files(scope).instructions is None:
        print(f"note: {client.title} keeps user-level instructions in its settings, not in a file; "
              "add the routing text from a project set-up there if you want it everywhere.")
    for note in client.notes + (() if scope.is_global else client.project_notes):
        print(f"note: {note}")
    for event, active, detail in hooks_status(client.name, scope.project_dir, scope.home_dir, scope.dirs):
        if not active:
            print(f"warning: hook {event} is not active: {detail}")

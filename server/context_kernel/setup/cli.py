"""`context-kernel setup|uninstall <client> [--project DIR] [--global] [--dry-run]`.

The top-level CLI passes the home directory, the working directory and the path of the installed
`context-kernel` script, so nothing here reads the process environment.

Exit codes: 0 done (or nothing to do), 2 refused (a config file we cannot parse, no such project).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .apply import Action, Plan, build_plan, display, write_plan
from .clients import BACKUP_SUFFIX, CLIENTS, Scope
from .errors import ConfigFileError
from .status import hooks_status

PART_LABELS = {"mcp": 'MCP server "context-kernel"', "instructions": "routing instructions"}
VERBS = {"create": "created", "update": "updated", "delete": "removed"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="context-kernel", description=__doc__)
    parser.add_argument("action", choices=["setup", "uninstall"])
    parser.add_argument("client", choices=list(CLIENTS))
    parser.add_argument("--project", default=None, help="project directory (default: the current directory)")
    parser.add_argument("--global", dest="is_global", action="store_true",
                        help="write the user's own config files instead of the project's")
    parser.add_argument("--dry-run", action="store_true", help="print the diff of every file; write nothing")
    return parser


def main(argv: list[str], home_dir: Path, cwd: Path, executable: str) -> int:
    args = build_parser().parse_args(argv)
    action: Action = args.action
    client = CLIENTS[args.client]
    project = _project_dir(args.project, cwd, home_dir)
    if not project.is_dir():
        print(f"context-kernel {action}: no such project directory: {project}", file=sys.stderr)
        return 2
    scope = Scope(project_dir=project, home_dir=home_dir, is_global=args.is_global)
    try:
        plan = build_plan(client, action, scope, executable)
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
    if action == "setup" and not Path(executable).is_file():
        print(f"warning: {executable} does not exist; the client will not be able to start it", file=sys.stderr)
    backups = write_plan(plan)
    _report(plan, backups, where)
    return 0


def _project_dir(arg: str | None, cwd: Path, home_dir: Path) -> Path:
    if arg is None:
        return cwd.resolve()
    if arg == "~" or arg.startswith("~/"):
        return (home_dir / arg[2:]).resolve()
    return (cwd / arg).resolve()


def _report(plan: Plan, backups: list[Path], where: str) -> None:
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
    for note in client.notes:
        print(f"note: {note}")
    for event, active, detail in hooks_status(client.name, scope.project_dir, scope.home_dir):
        if not active:
            print(f"warning: hook {event} is not active: {detail}")

"""The command line: the only place that reads environment variables.

context-kernel serve [--transport stdio|http] [--project DIR] ...   run the MCP server
context-kernel token show|rotate|path|header                        the HTTP transport's bearer token
context-kernel doctor                                               every language, its kernel, does it start
context-kernel kernels install --user|--sys-prefix|--prefix DIR     our kernelspecs, started by this Python
context-kernel fetch URL...                                         fetch pages into the knowledge base
context-kernel sessions / export [SESSION] [-o DIR] [--redact]      list sessions / write one as notebooks
context-kernel replay NOTEBOOK                                      re-run it; exit 0 when every cell matches
context-kernel insight [-o FILE]                                    a local HTML page of every session
context-kernel hook CLIENT EVENT                                    answer a client hook (event JSON on stdin)
context-kernel setup|uninstall CLIENT [--global] [--dry-run]        wire into / out of a client (MCP, hooks, rules)
context-kernel setup CLIENT --global --http URL                     the same, for a running HTTP server (with its token)
"""

from __future__ import annotations

import os
import sys

# `context-kernel hook` runs on every tool call of the agent and imports this module first: what the
# other commands need (argparse, pathlib, logging, socket, the settings, setup) is imported where it
# is used, and typing not at all (TYPE_CHECKING is typing's constant, which type checkers know by name).
# The commands live in a module per group (serving, kernels, records, setup), imported once a parser is built.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from .environment import build_settings

__all__ = ["build_settings", "main"]


def __getattr__(name: str) -> object:
    # `from context_kernel.cli import build_settings` (tests, benchmarks) without a hook importing the
    # environment table, whose defaults import settings.py (pathlib, dataclasses).
    if name == "build_settings":
        from .environment import build_settings

        return build_settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cmd_hook(args: argparse.Namespace) -> int:
    return _hook(args.client, args.event)


def _hook(client: str, event: str) -> int:
    # Runs on every tool call of the agent: the hook path imports the standard library only.
    from ..hooks import hook_cli

    stdin_text, problem = hook_cli.read_stdin(sys.stdin.buffer)  # bounded: a client may never close it
    # may_detach: a real hook process, whose client may stop waiting before its recording is done.
    return hook_cli.main(client, event, stdin_text, env=dict(os.environ), stdin_problem=problem, may_detach=True)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if len(words) == 3 and words[0] == "hook":
        # Every tool call of the agent: answered before any parser is built (`hook --help` still gets one).
        return _hook(words[1], words[2])
    import argparse

    from ..clients import CLIENT_NAMES
    from . import kernels, records, serving, setup
    from .help import VersionAction

    parser = argparse.ArgumentParser(prog="context-kernel", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    # In this order in `--help`: the server, the kernels, the records, then what the clients call and run.
    serving.add_parsers(sub)
    kernels.add_parsers(sub)
    records.add_parsers(sub)
    hook = sub.add_parser("hook", help="answer a client hook: its event JSON on stdin, our answer on stdout")
    hook.add_argument("client", help=" | ".join(CLIENT_NAMES))
    hook.add_argument("event", help="the client's own event name, e.g. PreToolUse")
    hook.set_defaults(func=cmd_hook)
    setup.add_parsers(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # `context-kernel … | head`: the reader left. Point stdout at /dev/null so that the
        # interpreter's final flush does not raise again, and exit as a piped tool does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())

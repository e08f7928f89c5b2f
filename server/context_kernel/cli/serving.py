"""`context-kernel serve` and `context-kernel token`: the MCP server, and the bearer token of its HTTP transport."""

from __future__ import annotations

import argparse
import os
import sys

from .environment import build_settings
from .help import DefaultsShown
from .kernel_options import PYTHON_HELP, add_gateway_arguments, gateway_unusable


def _port(text: str) -> int:
    """`--port`: a TCP port. Checked here: the kernel keeps the low 16 bits of a larger one (99999 listens on
    34463), and getaddrinfo's complaint about a negative one names the host."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a TCP port: give 1-65535, or 0 for a free one "
                                         "(printed at start)")
    return port


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="context-kernel %(levelname)s %(message)s")
    from ..security.log_redaction import install

    install()  # clients keep our stderr in their log files: nothing goes there with its secrets
    settings = build_settings(args, dict(os.environ))
    if gateway_unusable("serve", settings):
        return 2
    from ..serving.serve import serve

    return serve(settings, args)


def cmd_token(args: argparse.Namespace) -> int:
    import json

    from ..security.http_token import TokenFileError, ensure_token, write_token

    path = build_settings(args, dict(os.environ)).http_token_file
    try:
        if args.action == "rotate":
            write_token(path)
            print(f"context-kernel: a new token is in {path}; a running server accepts only it from its next "
                  "request on (clients need the new one: `context-kernel token show`; a client set up with "
                  "`setup … --http`: run that setup again)", file=sys.stderr)
            return 0
        if args.action == "path":
            print(path)
            return 0
        token = ensure_token(path)
    except (OSError, TokenFileError) as exc:
        print(f"context-kernel token: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"Authorization": f"Bearer {token}"}) if args.action == "header" else token)
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`serve` and `token` on the main parser's subcommands."""
    serve = sub.add_parser("serve", help="run the MCP server (stdio by default)",
                           formatter_class=DefaultsShown)
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                       help="stdio: one client starts this process; http: streamable HTTP for clients that connect")
    serve.add_argument("--host", default="127.0.0.1", help="http: the address to listen on")
    serve.add_argument("--port", type=_port, default=8765, help="http: the port (0: a free one, printed at start)")
    serve.add_argument("--project", help="project directory (default: the client's project variable, else cwd)")
    serve.add_argument("--max-kernels", type=int, default=None,
                       help="kernels kept warm at once, the least recently used stopped first "
                            "(default: CONTEXT_KERNEL_MAX_KERNELS, else 16)")
    serve.add_argument("--python", metavar="PATH", help=PYTHON_HELP)
    serve.add_argument("--no-auth", action="store_true",
                       help="http: accept requests without the bearer token (trusted setups; loopback only)")
    serve.add_argument("--allow-remote", action="store_true", help="http: allow a --host other than loopback")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                       help="http: a Host header to accept besides loopback and the bound address (repeatable)")
    serve.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                       help="http: an Origin to accept besides loopback ones, e.g. http://myhost:* (repeatable)")
    add_gateway_arguments(serve)
    serve.set_defaults(func=cmd_serve)
    token = sub.add_parser("token", help="the bearer token of the HTTP transport")
    token.add_argument("action", choices=["show", "rotate", "path", "header"],
                       help="show: print it (made if missing); rotate: replace it; path: print the file; "
                            "header: print {\"Authorization\": \"Bearer …\"} (for a client's headers helper)")
    token.set_defaults(func=cmd_token)

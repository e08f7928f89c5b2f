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
import time

from .environment import build_settings

# `context-kernel hook` runs on every tool call of the agent and imports this module first: what the
# other commands need (argparse, pathlib, logging, socket, the settings, setup) is imported where it
# is used, and typing not at all (TYPE_CHECKING is typing's constant, which type checkers know by name).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from ..settings import Settings

__all__ = ["build_settings", "main"]

PYTHON_HELP = ("the python kernel's interpreter: a python, a virtual or conda environment's directory, or a command "
               "on PATH (default: CONTEXT_KERNEL_PYTHON, else the activated environment, else the project's own "
               "environment, else the server's Python; see docs/kernels.md)")


GATEWAY_HELP = ("run every kernel on this Jupyter Enterprise Gateway / Kernel Gateway / Jupyter Server "
                "(http(s)://host:port; default: CONTEXT_KERNEL_GATEWAY_URL, else JUPYTER_GATEWAY_URL)")


def _port(text: str) -> int:
    """`--port`: a TCP port. Checked here: the kernel keeps the low 16 bits of a larger one (99999 listens on
    34463), and getaddrinfo's complaint about a negative one names the host."""
    import argparse  # only when a parser is built: a hook's path imports nothing it does not need

    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a TCP port: give 1-65535, or 0 for a free one "
                                         "(printed at start)")
    return port


def _gateway_unusable(command: str, settings: Settings) -> bool:
    """True, having said why and what to install, when a gateway is asked for that this install cannot use."""
    if settings.gateway is None:
        return False
    from ..kernels.gateway_client import missing_client

    problem = missing_client()
    if problem:
        print(f"context-kernel {command}: {problem}", file=sys.stderr)
    return problem is not None


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="context-kernel %(levelname)s %(message)s")
    from ..security.log_redaction import install

    install()  # clients keep our stderr in their log files: nothing goes there with its secrets
    settings = build_settings(args, dict(os.environ))
    if _gateway_unusable("serve", settings):
        return 2
    from ..serving.serve import serve

    return serve(settings, args)


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..doctor import run_doctor

    settings = build_settings(args, dict(os.environ))
    if _gateway_unusable("doctor", settings):
        return 2
    return run_doctor(settings, start=not args.no_start)


async def _fetch(settings: Settings, urls: list[str], source: str | None, force: bool, ttl: float | None,
                 concurrency: int) -> int:
    from tqdm import tqdm

    from ..app import AppHolder
    from ..web.outcomes import FetchRequest, render_many, render_one

    requests = [FetchRequest(u, source if len(urls) == 1 else None) for u in urls]

    def done(_outcome: object) -> None:
        bar.update(1)

    async with AppHolder(settings) as holder:
        app = await holder.get()
        with tqdm(total=len(urls), unit="url", file=sys.stderr, disable=len(urls) == 1) as bar:
            outcomes = await app.fetch.fetch_many(requests, session_id="cli", ttl_s=ttl, force=force,
                                                  concurrency=concurrency, on_done=done)
    if len(outcomes) == 1:
        print(render_one(outcomes[0]))
        return 1 if outcomes[0].status == "error" else 0
    text, all_failed = render_many(outcomes)
    print(text)
    return 1 if all_failed else 0


def cmd_fetch(args: argparse.Namespace) -> int:
    import anyio

    from ..errors import ContextKernelError

    settings = build_settings(args, dict(os.environ))
    try:
        return anyio.run(_fetch, settings, args.urls, args.source, args.force, args.ttl, args.concurrency)
    except ContextKernelError as exc:
        print(f"context-kernel fetch: {exc}", file=sys.stderr)
        return 2


async def _sessions(settings: Settings) -> int:
    from ..app import AppHolder

    async with AppHolder(settings) as holder:
        rows = await (await holder.get()).export.sessions()
    header = ("session", "started (UTC)", "client", "languages", "runs", "kept out", "not run")
    table = [header] + [(s.id, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s.started_at)), s.client or "-",
                         ",".join(s.languages) or "-", str(s.executions), f"{s.bytes_kept_out / 1024:.1f}KB",
                         str(s.not_run)) for s in rows]
    # Columns as wide as their widest value: an id, a client or a language list is never cut.
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = [v.ljust(w) if i < 4 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True))]
        print("  ".join(cells).rstrip())
    return 0


async def _export(settings: Settings, session: str | None, out: str | None, html: bool, redact: bool = False) -> int:
    from ..app import AppHolder
    from ..errors import ContextKernelError

    async with AppHolder(settings) as holder:
        app = await holder.get()
        if session is None:
            recent = await app.export.sessions()
            if not recent:
                print("context-kernel export: no session recorded yet", file=sys.stderr)
                return 1
            session = recent[0].id
        try:
            done = await app.export.export(session, out, confined=False, html=html, redact=redact)
        except ContextKernelError as exc:
            print(f"context-kernel export: {exc}", file=sys.stderr)
            return 1
    for nb in done.notebooks:
        print(nb.path)
    return 0


async def _insight(settings: Settings, page: Path | None) -> int:
    from ..app import AppHolder
    from ..wording import counted

    async with AppHolder(settings) as holder:
        done = await (await holder.get()).records.insight(page)
    print(f"{done.page} ({counted(done.sessions, 'session')})")
    return 0


def cmd_insight(args: argparse.Namespace) -> int:
    from pathlib import Path

    import anyio

    page = Path(args.output).expanduser().absolute() if args.output else None
    return anyio.run(_insight, build_settings(args, dict(os.environ)), page)


def cmd_sessions(args: argparse.Namespace) -> int:
    import anyio

    return anyio.run(_sessions, build_settings(args, dict(os.environ)))


def cmd_export(args: argparse.Namespace) -> int:
    import anyio

    return anyio.run(_export, build_settings(args, dict(os.environ)), args.session, args.output,
                     args.format == "html", args.redact)


def cmd_replay(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import ContextKernelError
    from ..notebooks.replay import KernelPlace, replay

    path = Path(args.notebook)
    if not path.is_file():
        print(f"context-kernel replay: no such notebook: {path}", file=sys.stderr)
        return 2
    settings = build_settings(args, dict(os.environ))
    if _gateway_unusable("replay", settings):
        return 2
    place = KernelPlace(kernels_dir=settings.kernels_dir, overlays_dir=settings.overlays_dir, env=settings.base_env)
    try:
        run_one = None
        if settings.gateway is not None:
            from ..notebooks.gateway_replay import on_gateway

            run_one = on_gateway(settings.gateway)
        report = replay(path, timeout_s=args.timeout, place=place, run_one=run_one)
    except ContextKernelError as exc:
        print(f"context-kernel replay: {exc}", file=sys.stderr)
        return 2
    if settings.gateway is not None:
        print(f"replayed on the kernel gateway at {settings.gateway.url}")
    print(report.render())
    return 0 if report.ok else 1


def cmd_kernels_install(args: argparse.Namespace) -> int:
    from ..errors import ContextKernelError
    from ..kernels.files import kernel_files
    from ..kernels.install import (
        install_ir_kernelspec,
        install_kernelspecs,
        irkernel_available,
        run_runtime_installers,
    )

    in_venv = sys.prefix != sys.base_prefix
    user = args.user or not (args.sys_prefix or args.prefix or in_venv)  # default: this venv, else the user's
    prefix = None if user else (args.prefix or sys.prefix)
    try:
        files = kernel_files()
        if not args.no_runtimes and run_runtime_installers(files, sys.executable, dict(os.environ)) != 0:
            print("context-kernel kernels install: a runtime installer failed (its output is above); the "
                  "kernelspecs are installed anyway", file=sys.stderr)
        done = install_kernelspecs(sys.executable, user=user, prefix=prefix)
        if irkernel_available():
            done.append(install_ir_kernelspec(files, user=user, prefix=prefix))
        else:
            print("note: R with IRkernel is not installed, so the r kernel is not registered (as root: "
                  "apt-get install r-cran-irkernel, then run this again)", file=sys.stderr)
    except ContextKernelError as exc:
        print(f"context-kernel kernels install: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"context-kernel kernels install: cannot write {exc.filename or 'the kernelspec directory'} "
              f"({exc.strerror or exc}): use --user, or the rights of whoever owns that prefix", file=sys.stderr)
        return 2
    where = {spec.directory.parent for spec in done}
    print(f"installed {len(done)} kernelspecs in {', '.join(map(str, sorted(where)))}, each started by "
          f"{sys.executable}: {', '.join(spec.name for spec in done)}")
    if not all(spec.searched for spec in done):
        path = os.pathsep.join(sorted(str(d.parent) for d in where))
        print(f"note: Jupyter looks there only when told: JUPYTER_PATH={path}", file=sys.stderr)
    return 0


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


def cmd_hook(args: argparse.Namespace) -> int:
    return _hook(args.client, args.event)


def _hook(client: str, event: str) -> int:
    # Runs on every tool call of the agent: the hook path imports the standard library only.
    from ..hooks import hook_cli

    stdin_text, problem = hook_cli.read_stdin(sys.stdin.buffer)  # bounded: a client may never close it
    # may_detach: a real hook process, whose client may stop waiting before its recording is done.
    return hook_cli.main(client, event, stdin_text, env=dict(os.environ), stdin_problem=problem, may_detach=True)


def _console_script() -> str:
    """The installed `context-kernel` script the clients should start: next to this Python, else on PATH."""
    import shutil
    from pathlib import Path


    beside = Path(sys.executable).with_name("context-kernel")  # not resolved: the venv's bin, not /usr/bin
    if beside.is_file():
        return str(beside.absolute())
    return shutil.which("context-kernel") or str(beside.absolute())


def cmd_setup(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..locations import data_home, user_dirs, user_home
    from ..settings import HTTP_TOKEN_FILE
    from ..setup.cli import run
    from ..setup.installation import in_uv_cache, this_installation

    env = dict(os.environ)
    lasting = this_installation().lasting_install() if in_uv_cache(sys.prefix) else None
    return run(args, home_dir=user_home(env), cwd=Path.cwd(), executable=_console_script(),
               token_file=data_home(env) / HTTP_TOKEN_FILE, dirs=user_dirs(env), ephemeral=lasting)


def _gateway_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gateway-url", metavar="URL", help=GATEWAY_HELP)
    parser.add_argument("--gateway-token", metavar="TOKEN",
                        help="sent as 'Authorization: token TOKEN' (default: CONTEXT_KERNEL_GATEWAY_TOKEN, else "
                             "JUPYTER_GATEWAY_AUTH_TOKEN); prefer the variable: arguments show in ps")
    parser.add_argument("--gateway-auth-header", metavar="'NAME: VALUE'",
                        help="a header of your own instead of the token (default: CONTEXT_KERNEL_GATEWAY_AUTH_HEADER)")
    parser.add_argument("--gateway-kernel-env", action="append", default=[], metavar="NAME=VALUE",
                        help="sent with every kernel start, e.g. KERNEL_USERNAME=alice or KERNEL_WORKING_DIR=/mnt/proj "
                             "(Enterprise Gateway passes KERNEL_* variables to the kernel; repeatable)")
    parser.add_argument("--gateway-request-timeout", type=float, metavar="SECONDS",
                        help="limit of one REST call to the gateway; a kernel start has its own (60 s) "
                             "(default: CONTEXT_KERNEL_GATEWAY_REQUEST_TIMEOUT_S, else 60)")


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if len(words) == 3 and words[0] == "hook":
        # Every tool call of the agent: answered before any parser is built (`hook --help` still gets one).
        return _hook(words[1], words[2])
    import argparse

    from ..clients import CLIENT_NAMES
    from ..setup.cli import add_parsers as add_setup_parsers
    from .help import DefaultsShown, VersionAction

    parser = argparse.ArgumentParser(prog="context-kernel", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
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
    _gateway_arguments(serve)
    serve.set_defaults(func=cmd_serve)
    token = sub.add_parser("token", help="the bearer token of the HTTP transport")
    token.add_argument("action", choices=["show", "rotate", "path", "header"],
                       help="show: print it (made if missing); rotate: replace it; path: print the file; "
                            "header: print {\"Authorization\": \"Bearer …\"} (for a client's headers helper)")
    token.set_defaults(func=cmd_token)
    doctor = sub.add_parser("doctor", help="list every language with its kernel and whether it starts",
                            description="Check the install, the data dir and every language's kernel. "
                                        "Exit status: 0 when no line is [FAIL], 1 when one is.")
    doctor.add_argument("--no-start", action="store_true",
                        help="start no kernel: only check that kernelspecs exist (the R libraries line still runs "
                        "R's startup)")
    doctor.add_argument("--project", default=None)
    doctor.add_argument("--python", metavar="PATH", help=PYTHON_HELP)
    _gateway_arguments(doctor)
    doctor.set_defaults(func=cmd_doctor)
    kernels = sub.add_parser("kernels", help="install our kernelspecs so that any Jupyter can start them")
    kernels_sub = kernels.add_subparsers(dest="kernels_command", required=True)
    install = kernels_sub.add_parser(
        "install", help="install the language runtimes and register every kernelspec (what kernels/install.sh does)",
        description="Installs what each language needs, then writes our kernelspecs started by this Python. "
                    "Runtimes: R with IRkernel, Ruby, PHP, Go, Rust, Elixir, Mono, Perl, Node.js and npm come "
                    "from apt and need root (without it each is skipped and named); the npm package typescript "
                    "goes into this environment (no root). Kernelspecs: ours (ck-bash, ck-javascript, …) with "
                    "this Python's absolute path, so a Jupyter of another environment can start them too, and "
                    "R's (IRkernel behind our interrupt-safe launcher). Where: this environment when it is a "
                    "virtual one, else the user's Jupyter dir; a --prefix owned by root needs root.")
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="the user's Jupyter data dir: every JupyterLab of this user finds them (no root)")
    where.add_argument("--sys-prefix", action="store_true",
                       help="this Python's environment (what make serve does for .venv)")
    where.add_argument("--prefix", help="PREFIX/share/jupyter/kernels (e.g. /usr/local for every user: root)")
    install.add_argument("--no-runtimes", action="store_true", help="only register the kernelspecs")
    install.set_defaults(func=cmd_kernels_install)
    fetch = sub.add_parser("fetch", help="fetch pages into the knowledge base (as ctx_fetch_and_index)")
    fetch.add_argument("urls", nargs="+")
    fetch.add_argument("--source", help="label (one URL only; default: the URL)")
    fetch.add_argument("--force", action="store_true", help="refetch even if cached")
    fetch.add_argument("--ttl", type=float, default=None, help="seconds a cached copy stays fresh (default 24 h)")
    fetch.add_argument("--concurrency", type=int, default=4)
    fetch.add_argument("--project", default=None)
    fetch.set_defaults(func=cmd_fetch)
    sessions = sub.add_parser("sessions", help="list recorded sessions")
    sessions.add_argument("--project", default=None)
    sessions.set_defaults(func=cmd_sessions)
    export = sub.add_parser("export", help="write a session as Jupyter notebooks (default: the latest)")
    export.add_argument("session", nargs="?")
    export.add_argument("-o", "--output", help="directory (default: CONTEXT_KERNEL_HOME/exports)")
    export.add_argument("--format", choices=["ipynb", "html"], default="ipynb",
                        help="html also writes the notebook; the .html is for people without Jupyter")
    export.add_argument("--project", default=None)
    export.add_argument("--redact", action="store_true",
                        help="take secrets out of the exported code and outputs (the record keeps them)")
    export.set_defaults(func=cmd_export)
    insight = sub.add_parser("insight", help="write a local HTML page listing every session (no network)")
    insight.add_argument("-o", "--output", help="file (default: CONTEXT_KERNEL_HOME/insight.html)")
    insight.add_argument("--project", default=None)
    insight.set_defaults(func=cmd_insight)
    replay = sub.add_parser("replay", help="re-run an exported notebook and compare outputs cell by cell")
    replay.add_argument("notebook")
    replay.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    _gateway_arguments(replay)
    replay.set_defaults(func=cmd_replay)
    hook = sub.add_parser("hook", help="answer a client hook: its event JSON on stdin, our answer on stdout")
    hook.add_argument("client", help=" | ".join(CLIENT_NAMES))
    hook.add_argument("event", help="the client's own event name, e.g. PreToolUse")
    hook.set_defaults(func=cmd_hook)
    add_setup_parsers(sub, cmd_setup)
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

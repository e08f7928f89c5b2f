"""The command line: the only place that reads environment variables.

context-kernel serve [--transport stdio|http] [--project DIR] ...   run the MCP server
context-kernel token show|rotate|path|header                        the HTTP transport's bearer token
context-kernel doctor                                               every language, its kernel, does it start
context-kernel kernels install --user|--sys-prefix|--prefix DIR     our kernelspecs, started by this Python
context-kernel fetch URL...                                         fetch pages into the knowledge base
context-kernel sessions / export [SESSION] [-o DIR]                 list sessions / write one as notebooks
context-kernel replay NOTEBOOK                                      re-run it; exit 0 when every cell matches
context-kernel insight [-o FILE]                                    a local HTML page of every session
context-kernel hook CLIENT EVENT                                    answer a client hook (event JSON on stdin)
context-kernel setup|uninstall CLIENT [--global] [--dry-run]        wire into / out of a client (MCP, hooks, rules)
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .clients import CLIENT_NAMES
from .lifeline import die_with_parent
from .locations import claude_user_settings, data_home, project_dir, user_home
from .settings import (
    DEFAULT_HARD_CAP,
    DEFAULT_MAX_DB_MB,
    DEFAULT_MAX_KERNEL_LOGS,
    DEFAULT_RETENTION_DAYS,
    DEFAULT_RETURN_BUDGET,
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    Settings,
)
from .setup.cli import add_parsers as add_setup_parsers

EXIT_GRACE_S = 8.0
PYTHON_VAR = "CONTEXT_KERNEL_PYTHON"
PYTHON_HELP = ("the python kernel's interpreter: a python, a virtual or conda environment's directory, or a command "
               "on PATH (default: CONTEXT_KERNEL_PYTHON, else the activated environment, else the project's own "
               "environment, else the server's Python; see docs/kernels.md)")


def _env_int(env: dict[str, str], name: str, default: int) -> int:
    try:
        return int(env.get(name, default))
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {env[name]!r}") from None


def _env_float(env: dict[str, str], name: str, default: float) -> float:
    try:
        return float(env.get(name, default))
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {env[name]!r}") from None


def _fetch_proxy(env: dict[str, str]) -> str | None:
    # Proxy variables are ignored unless explicitly enabled: a proxy sees every fetched URL.
    if env.get("CONTEXT_KERNEL_FETCH_USE_PROXY", "") in ("", "0"):
        return None
    return env.get("HTTPS_PROXY") or env.get("https_proxy") or env.get("HTTP_PROXY") or env.get("http_proxy")


def _python_choice(args: argparse.Namespace, env: dict[str, str]) -> tuple[str | None, str]:
    """The explicit interpreter (`--python` wins over CONTEXT_KERNEL_PYTHON), a path made absolute here."""
    value, source = getattr(args, "python", None), "--python"
    if not value:
        value, source = env.get(PYTHON_VAR) or None, PYTHON_VAR
    if value and (os.sep in value or value.startswith((".", "~"))):
        value = str(Path(value).expanduser().absolute())
    return value, source


def build_settings(args: argparse.Namespace, env: dict[str, str]) -> Settings:
    python, python_from = _python_choice(args, env)
    return Settings(
        home=data_home(env),
        project_dir=project_dir(env, explicit=getattr(args, "project", None)),
        return_budget=_env_int(env, "CONTEXT_KERNEL_RETURN_BUDGET", DEFAULT_RETURN_BUDGET),
        hard_output_cap=_env_int(env, "CONTEXT_KERNEL_OUTPUT_CAP", DEFAULT_HARD_CAP),
        default_timeout_ms=_env_int(env, "CONTEXT_KERNEL_TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
        max_timeout_ms=_env_int(env, "CONTEXT_KERNEL_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS),
        kernel_idle_cull_s=float(_env_int(env, "CONTEXT_KERNEL_IDLE_CULL_S", 1800)),
        max_kernels=getattr(args, "max_kernels", None) or _env_int(env, "CONTEXT_KERNEL_MAX_KERNELS", 16),
        progress_interval_s=float(env.get("CONTEXT_KERNEL_PROGRESS_S", "5")),
        fetch_strict=env.get("CTX_FETCH_STRICT", "") not in ("", "0"),
        fetch_max_body=_env_int(env, "CONTEXT_KERNEL_FETCH_MAX_BYTES", 50 * 1024 * 1024),
        fetch_proxy=_fetch_proxy(env),
        base_env=dict(env),
        user_home=user_home(env),
        claude_settings=claude_user_settings(env),
        retention_days=_env_float(env, "CONTEXT_KERNEL_RETENTION_DAYS", DEFAULT_RETENTION_DAYS),
        max_db_mb=_env_int(env, "CONTEXT_KERNEL_MAX_DB_MB", DEFAULT_MAX_DB_MB),
        max_kernel_logs=_env_int(env, "CONTEXT_KERNEL_MAX_KERNEL_LOGS", DEFAULT_MAX_KERNEL_LOGS),
        python=python,
        python_from=python_from,
        semantic=env.get("CONTEXT_KERNEL_SEMANTIC", "1").strip().lower() not in ("0", "off", "false", "no"),
        semantic_model=Path(env["CONTEXT_KERNEL_SEMANTIC_MODEL"]).expanduser()
        if env.get("CONTEXT_KERNEL_SEMANTIC_MODEL") else None,
    )


def _hard_exit_later(seconds: float) -> None:
    # Shutdown is bounded: if a kernel or the SDK hangs on the way out, leave anyway.
    timer = threading.Timer(seconds, lambda: os._exit(0))
    timer.daemon = True
    timer.start()


async def _serve(settings: Settings, args: argparse.Namespace) -> None:
    import anyio

    from .tools.server import create_server

    server = create_server(settings, transport=args.transport)
    if args.transport == "http":
        await _serve_http(server, settings, args)
        return
    async with anyio.create_task_group() as tg:
        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
                async for _ in signals:
                    _hard_exit_later(EXIT_GRACE_S)
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(on_signal)
        await server.run_stdio_async()  # returns when the client closes stdin
        tg.cancel_scope.cancel()


async def _serve_http(server: Any, settings: Settings, args: argparse.Namespace) -> None:
    import anyio
    import uvicorn

    from .security.http_token import TokenFile
    from .tools.http import http_app, start_notes

    host, port = args.host, args.port
    token = None if args.no_auth else TokenFile(settings.http_token_file)
    app = http_app(server, bind=host, token=token, hosts=args.allowed_host, origins=args.allowed_origin)
    for line in start_notes(host, port, token=token, remote=args.allow_remote, hosts=args.allowed_host):
        print(line, file=sys.stderr, flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    web = uvicorn.Server(config)

    async def announce() -> None:
        # One line on stderr once the socket is bound, so scripts (and tests) know where to connect.
        while not web.started:  # noqa: ASYNC110 - uvicorn sets a flag, it offers no event to wait on
            await anyio.sleep(0.02)
        bound = web.servers[0].sockets[0].getsockname()[1] if web.servers else port
        print(f"context-kernel listening on http://{host}:{bound}/mcp", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await web.serve()
        tg.cancel_scope.cancel()


def cmd_serve(args: argparse.Namespace) -> int:
    import anyio

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="context-kernel %(levelname)s %(message)s")
    settings = build_settings(args, dict(os.environ))
    from .doctor import home_problem

    problem = home_problem(settings.home)
    if problem:  # a read-only home: say so in one line (a client shows it) rather than die with a traceback
        print(f"context-kernel serve: {problem}", file=sys.stderr)
        return 2
    # Every path is absolute from here on; the data dir is a working directory that cannot vanish
    # under us (a re-clone deletes the project dir the client started us in, and jupyter_client
    # calls os.getcwd() for every kernel it starts).
    os.chdir(settings.home)
    if args.transport == "http":
        from .tools.http import start_refusal

        refusal = start_refusal(args.host, allow_remote=args.allow_remote, auth=not args.no_auth,
                                token_file=settings.http_token_file)
        if refusal:
            print(f"context-kernel serve: {refusal}", file=sys.stderr)
            return 2
    die_with_parent(signal.SIGTERM)  # the client died without closing our stdin: stop cleanly
    from .hooks.liveness import clear, mark_alive

    # Hooks redirect the agent to ctx tools only while this file says a server is up.
    alive = mark_alive(settings.home, settings.project_dir)
    try:
        anyio.run(_serve, settings, args)
    finally:
        clear(alive)
    _hard_exit_later(EXIT_GRACE_S)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from .app import kernel_factory, project_python
    from .doctor import run_doctor

    settings = build_settings(args, dict(os.environ))
    python = project_python(settings)
    return run_doctor(settings, kernel_factory(settings, python), python, start=not args.no_start)


async def _fetch(settings: Settings, urls: list[str], source: str | None, force: bool, ttl: float | None,
                 concurrency: int) -> int:
    from tqdm import tqdm

    from .app import AppHolder
    from .web.outcomes import FetchRequest, render_many, render_one

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

    from .errors import ContextKernelError

    settings = build_settings(args, dict(os.environ))
    try:
        return anyio.run(_fetch, settings, args.urls, args.source, args.force, args.ttl, args.concurrency)
    except ContextKernelError as exc:
        print(f"context-kernel fetch: {exc}", file=sys.stderr)
        return 2


async def _sessions(settings: Settings) -> int:
    from .app import AppHolder

    async with AppHolder(settings) as holder:
        rows = await (await holder.get()).export.sessions()
    print(f"{'session':<20} {'started (UTC)':<20} {'client':<20} {'languages':<24} {'runs':>5} {'kept out':>10}")
    for s in rows:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s.started_at))
        print(f"{s.id:<20} {started:<20} {(s.client or '-')[:20]:<20} {','.join(s.languages)[:24]:<24} "
              f"{s.executions:>5} {s.bytes_kept_out / 1024:>8.1f}KB")
    return 0


async def _export(settings: Settings, session: str | None, out: str | None, html: bool) -> int:
    from .app import AppHolder
    from .errors import ContextKernelError

    async with AppHolder(settings) as holder:
        app = await holder.get()
        if session is None:
            recent = await app.export.sessions()
            if not recent:
                print("context-kernel export: no session recorded yet", file=sys.stderr)
                return 1
            session = recent[0].id
        try:
            done = await app.export.export(session, out, confined=False, html=html)
        except ContextKernelError as exc:
            print(f"context-kernel export: {exc}", file=sys.stderr)
            return 1
    for nb in done.notebooks:
        print(nb.path)
    return 0


async def _insight(settings: Settings, page: Path | None) -> int:
    from .app import AppHolder

    async with AppHolder(settings) as holder:
        done = await (await holder.get()).records.insight(page)
    print(f"{done.page} ({done.sessions} sessions)")
    return 0


def cmd_insight(args: argparse.Namespace) -> int:
    import anyio

    page = Path(args.output).expanduser().absolute() if args.output else None
    return anyio.run(_insight, build_settings(args, dict(os.environ)), page)


def cmd_sessions(args: argparse.Namespace) -> int:
    import anyio

    return anyio.run(_sessions, build_settings(args, dict(os.environ)))


def cmd_export(args: argparse.Namespace) -> int:
    import anyio

    return anyio.run(_export, build_settings(args, dict(os.environ)), args.session, args.output,
                     args.format == "html")


def cmd_replay(args: argparse.Namespace) -> int:
    from .errors import ContextKernelError
    from .notebooks.replay import KernelPlace, replay

    path = Path(args.notebook)
    if not path.is_file():
        print(f"context-kernel replay: no such notebook: {path}", file=sys.stderr)
        return 2
    settings = build_settings(args, dict(os.environ))
    place = KernelPlace(kernels_dir=settings.kernels_dir, overlays_dir=settings.overlays_dir, env=settings.base_env)
    try:
        report = replay(path, timeout_s=args.timeout, place=place)
    except ContextKernelError as exc:
        print(f"context-kernel replay: {exc}", file=sys.stderr)
        return 2
    print(report.render())
    return 0 if report.ok else 1


def cmd_kernels_install(args: argparse.Namespace) -> int:
    from .errors import ContextKernelError
    from .kernels.install import install_kernelspecs

    prefix = sys.prefix if args.sys_prefix else args.prefix
    try:
        done = install_kernelspecs(sys.executable, user=args.user, prefix=prefix)
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

    from .security.http_token import TokenFileError, ensure_token, write_token

    path = build_settings(args, dict(os.environ)).http_token_file
    try:
        if args.action == "rotate":
            write_token(path)
            print(f"context-kernel: a new token is in {path}; a running server accepts only it from its next "
                  "request on (clients need the new one: `context-kernel token show`)", file=sys.stderr)
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
    # Runs on every tool call of the agent: the hook path imports the standard library only.
    from .hooks import hook_cli

    stdin_text, problem = hook_cli.read_stdin(sys.stdin.buffer)  # bounded: a client may never close it
    return hook_cli.main(args.client, args.event, stdin_text, env=dict(os.environ), stdin_problem=problem)


def _console_script() -> str:
    """The installed `context-kernel` script the clients should start: next to this Python, else on PATH."""
    import shutil

    beside = Path(sys.executable).with_name("context-kernel")  # not resolved: the venv's bin, not /usr/bin
    if beside.is_file():
        return str(beside.absolute())
    return shutil.which("context-kernel") or str(beside.absolute())


def cmd_setup(args: argparse.Namespace) -> int:
    from .setup.cli import run

    return run(args, home_dir=user_home(dict(os.environ)), cwd=Path.cwd(), executable=_console_script())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="context-kernel", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the MCP server (stdio by default)")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--project", help="project directory (default: the client's project variable, else cwd)")
    serve.add_argument("--max-kernels", type=int, default=None)
    serve.add_argument("--python", metavar="PATH", help=PYTHON_HELP)
    serve.add_argument("--no-auth", action="store_true",
                       help="http: accept requests without the bearer token (trusted setups; loopback only)")
    serve.add_argument("--allow-remote", action="store_true", help="http: allow a --host other than loopback")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                       help="http: a Host header to accept besides loopback and the bound address (repeatable)")
    serve.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                       help="http: an Origin to accept besides loopback ones, e.g. http://myhost:* (repeatable)")
    serve.set_defaults(func=cmd_serve)
    token = sub.add_parser("token", help="the bearer token of the HTTP transport")
    token.add_argument("action", choices=["show", "rotate", "path", "header"],
                       help="show: print it (made if missing); rotate: replace it; path: print the file; "
                            "header: print {\"Authorization\": \"Bearer …\"} (for a client's headers helper)")
    token.set_defaults(func=cmd_token)
    doctor = sub.add_parser("doctor", help="list every language with its kernel and whether it starts")
    doctor.add_argument("--no-start", action="store_true", help="only check that kernelspecs exist")
    doctor.add_argument("--project", default=None)
    doctor.add_argument("--python", metavar="PATH", help=PYTHON_HELP)
    doctor.set_defaults(func=cmd_doctor)
    kernels = sub.add_parser("kernels", help="install our kernelspecs so that any Jupyter can start them")
    kernels_sub = kernels.add_subparsers(dest="kernels_command", required=True)
    install = kernels_sub.add_parser(
        "install", help="write our kernelspecs (ck-bash, ck-javascript, …) with this Python's absolute path",
        description="pip installs our kernelspecs with a bare `python`, which a Jupyter of another environment "
                    "replaces with its own (without context_kernel). This writes them with this Python instead. "
                    "None of the places needs root, except a --prefix (or a --sys-prefix) owned by root.")
    where = install.add_mutually_exclusive_group(required=True)
    where.add_argument("--user", action="store_true",
                       help="the user's Jupyter data dir: every JupyterLab of this user finds them (no root)")
    where.add_argument("--sys-prefix", action="store_true",
                       help="this Python's environment (what make serve does for .venv)")
    where.add_argument("--prefix", help="PREFIX/share/jupyter/kernels (e.g. /usr/local for every user: root)")
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
    export.set_defaults(func=cmd_export)
    insight = sub.add_parser("insight", help="write a local HTML page listing every session (no network)")
    insight.add_argument("-o", "--output", help="file (default: CONTEXT_KERNEL_HOME/insight.html)")
    insight.add_argument("--project", default=None)
    insight.set_defaults(func=cmd_insight)
    replay = sub.add_parser("replay", help="re-run an exported notebook and compare outputs cell by cell")
    replay.add_argument("notebook")
    replay.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    replay.set_defaults(func=cmd_replay)
    hook = sub.add_parser("hook", help="answer a client hook: its event JSON on stdin, our answer on stdout")
    hook.add_argument("client", help=" | ".join(CLIENT_NAMES))
    hook.add_argument("event", help="the client's own event name, e.g. PreToolUse")
    hook.set_defaults(func=cmd_hook)
    add_setup_parsers(sub, cmd_setup)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())

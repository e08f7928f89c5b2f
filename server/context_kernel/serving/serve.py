"""`context-kernel serve`: the MCP server over stdio or HTTP, its signals, and a bounded way out."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    import socket

    from ..settings import Settings

EXIT_GRACE_S = 8.0


def serve(settings: Settings, args: argparse.Namespace) -> int:
    """`context-kernel serve` once its settings are built: over stdio or HTTP until the client or a signal ends it."""
    import signal

    import anyio

    from ..doctor import home_problem
    from ..lifeline import die_with_parent

    problem = home_problem(settings.home)
    if problem:  # a read-only home: say so in one line (a client shows it) rather than die with a traceback
        print(f"context-kernel serve: {problem}", file=sys.stderr)
        return 2
    # Every path is absolute from here on; the data dir is a working directory that cannot vanish
    # under us (a re-clone deletes the project dir the client started us in, and jupyter_client
    # calls os.getcwd() for every kernel it starts).
    os.chdir(settings.home)
    if args.transport == "http":
        from .http import start_refusal

        refusal = start_refusal(args.host, allow_remote=args.allow_remote, auth=not args.no_auth,
                                token_file=settings.http_token_file)
        if refusal:
            print(f"context-kernel serve: {refusal}", file=sys.stderr)
            return 2
    listener: socket.socket | None = None
    if args.transport == "http":
        bound = _listen(args.host, args.port)
        if isinstance(bound, str):
            print(f"context-kernel serve: {bound}", file=sys.stderr)
            return 2
        listener = bound
    else:
        # Over stdio the parent is the client: when it dies without closing our stdin, stop cleanly.
        # Over HTTP the server is a service of its own (`nohup … &` from a shell that then exits).
        die_with_parent(signal.SIGTERM)
    from ..hooks.liveness import clear, mark_alive

    # Hooks redirect the agent to ctx tools only while this file says a server is up.
    alive = mark_alive(settings.home, settings.project_dir)
    try:
        anyio.run(_serve, settings, args, listener)
    finally:
        clear(alive)
    _hard_exit_later(EXIT_GRACE_S)
    return 0


def _hard_exit_later(seconds: float) -> None:
    # Shutdown is bounded: if a kernel or the SDK hangs on the way out, leave anyway.
    import threading

    timer = threading.Timer(seconds, lambda: os._exit(0))
    timer.daemon = True
    timer.start()


async def _serve(settings: Settings, args: argparse.Namespace, listener: socket.socket | None) -> None:
    import signal

    import anyio

    from ..tools.server import create_server

    server = create_server(settings, transport=args.transport)
    if listener is not None:
        await _serve_http(server, settings, args, listener)
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


def _listen(host: str, port: int) -> socket.socket | str:
    """The HTTP transport's listening socket, bound here so that a port in use is one line, not uvicorn's traceback."""
    import errno
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, UnicodeError) as exc:
        return f"cannot listen on {host}: {exc}; give an address of this machine with --host"
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restarts need no wait
        sock.bind(address)
        sock.listen(socket.SOMAXCONN)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            return (f"port {port} on {host} is already in use (another `context-kernel serve`?); stop it, or "
                    "choose another with --port (--port 0 takes a free one and prints it)")
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return sock


async def _serve_http(server: Any, settings: Settings, args: argparse.Namespace, listener: socket.socket) -> None:
    import anyio
    import uvicorn

    from ..security.http_token import TokenFile
    from .http import http_app, start_notes

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
        await web.serve(sockets=[listener])
        tg.cancel_scope.cancel()

"""The commands on what the data dir keeps, run without a server: `fetch` (pages into the knowledge base),
`sessions`, `export`, `show` and `insight` (the session records), and `replay` (an exported notebook, re-run)."""

from __future__ import annotations

import argparse
import os
import sys
import time

from .environment import build_settings
from .kernel_options import add_gateway_arguments, gateway_unusable

TYPE_CHECKING = False  # typing's constant: see cli/__init__.py
if TYPE_CHECKING:
    from pathlib import Path

    from ..settings import Settings


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
    import anyio

    from ..notebooks.service import session_summaries
    from ..settings import database_path
    from ..store.db import open_engine
    from ..store.events import EventRepository
    from ..store.executions import ExecutionRepository
    from ..wording import size_text

    # The database alone: no kernels, no semantic recall, nothing to start and stop for a listing.
    engine = await anyio.to_thread.run_sync(open_engine, database_path(settings.home))
    try:
        rows = await anyio.to_thread.run_sync(session_summaries, ExecutionRepository(engine), EventRepository(engine))
    finally:
        engine.dispose()
    header = ("session", "started (UTC)", "client", "languages", "runs", "kept out", "not run")
    table = [header] + [(s.id, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s.started_at)), s.client or "-",
                         ",".join(s.languages) or "-", str(s.executions), size_text(s.bytes_kept_out),
                         str(s.not_run)) for s in rows]
    # Columns as wide as their widest value: an id, a client or a language list is never cut.
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = [v.ljust(w) if i < 4 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True))]
        print("  ".join(cells).rstrip())
    return 0


async def _export(settings: Settings, session: str | None, out: str | None, html: bool, redact: bool = False,
                  with_inputs: bool = False) -> int:
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
            done = await app.export.export(session, out, confined=False, html=html, redact=redact,
                                           with_inputs=with_inputs)
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
                     args.format == "html", args.redact, args.with_inputs)


async def _show(settings: Settings, cited: str) -> int:
    from ..app import AppHolder
    from ..errors import ContextKernelError
    from ..notebooks.show import render_execution

    number = cited.strip().removeprefix("[").removesuffix("]").removeprefix("#").removeprefix("exec-")
    if not number.isdigit():
        print(f"context-kernel show: {cited!r} is not an execution id: give the number a reply cites, "
              "e.g. 42 for [#42]", file=sys.stderr)
        return 2
    async with AppHolder(settings) as holder:
        try:
            row, outputs = await (await holder.get()).export.execution(int(number))
        except ContextKernelError as exc:
            print(f"context-kernel show: {exc}", file=sys.stderr)
            return 1
    print(render_execution(row, outputs))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import anyio

    return anyio.run(_show, build_settings(args, dict(os.environ)), args.execution)


def cmd_replay(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import ContextKernelError
    from ..notebooks.replay import KernelPlace, replay

    path = Path(args.notebook)
    if not path.is_file():
        print(f"context-kernel replay: no such notebook: {path}", file=sys.stderr)
        return 2
    settings = build_settings(args, dict(os.environ))
    if gateway_unusable("replay", settings):
        return 2
    place = KernelPlace(kernels_dir=settings.kernels_dir, overlays_dir=settings.overlays_dir, env=settings.base_env)
    try:
        run_one = None
        if settings.gateway is not None:
            from ..notebooks.gateway_replay import on_gateway

            run_one = on_gateway(settings.gateway)
        cwd = Path(args.cwd).expanduser().absolute() if args.cwd else None
        report = replay(path, timeout_s=args.timeout, place=place, run_one=run_one, cwd=cwd,
                        progress=lambda name, n, of: print(f"replaying {name}: cell {n} of {of}", file=sys.stderr))
    except ContextKernelError as exc:
        print(f"context-kernel replay: {exc}", file=sys.stderr)
        return 2
    if settings.gateway is not None:
        print(f"replayed on the kernel gateway at {settings.gateway.url}")
    print(report.render())
    return 0 if report.ok else 1


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fetch`, `sessions`, `export`, `insight` and `replay` on the main parser's subcommands."""
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
    export.add_argument("--with-inputs", action="store_true",
                        help="copy the files the cells read, as they were read (up to 100 MB each, 500 MB in all), "
                             "into inputs/ next to the notebooks, which then run their cells there")
    export.set_defaults(func=cmd_export)
    insight = sub.add_parser("insight", help="write a local HTML page listing every session (no network)")
    insight.add_argument("-o", "--output", help="file (default: CONTEXT_KERNEL_HOME/insight.html)")
    insight.add_argument("--project", default=None)
    insight.set_defaults(func=cmd_insight)
    show = sub.add_parser("show", help="print one execution: code, output, files read and written, what the "
                          "agent was shown (the id a reply cites as [#42])")
    show.add_argument("execution", help="its id: 42, #42 or exec-42")
    show.add_argument("--project", default=None)
    show.set_defaults(func=cmd_show)
    replay = sub.add_parser("replay", help="re-run an exported notebook and compare outputs cell by cell")
    replay.add_argument("notebook")
    replay.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    replay.add_argument("--cwd", help="run the cells in this folder (default: the folder the session ran in, if it "
                                      "is here): an export's inputs/ replays on the data as it was read")
    add_gateway_arguments(replay)
    replay.set_defaults(func=cmd_replay)

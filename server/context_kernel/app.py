"""Composition root: builds the store, kernel pool and services from Settings.

The MCP server answers `initialize` before any of this exists: `AppHolder.get()` builds the
app on the first tool call, so jupyter_client, SQLAlchemy and nbformat are imported off the
handshake path (clients kill slow servers: 10 s in Codex).

The App hands out services, never the database or a repository: the MCP layer calls one service
per tool, and every rule about the data (hook events ingested before a read, what a search
records) lives in the services.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from .kernels.factory import kernel_factory, open_gateway, project_python
from .settings import Settings

if TYPE_CHECKING:
    from pathlib import Path

    from .doctor import Check
    from .execution.batch import BatchService
    from .execution.service import ExecutionService
    from .hooks.ingestion import Ingestion
    from .kernels.gateway_client import Gateway
    from .kernels.pool import KernelPool
    from .knowledge.service import KnowledgeService
    from .notebooks.service import ExportService
    from .records.service import RecordService
    from .security.call_guard import DenyGuard
    from .semantic.startup import SemanticSlot
    from .store.db import Database
    from .store.events import EventRepository
    from .web.client import SafeFetcher
    from .web.service import FetchService

CULL_EVERY_S = 60.0
RETENTION_EVERY_S = 86_400.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resources:
    """What the App owns and closes; services hold what they need of it, tools never see it."""

    db: Database
    pool: KernelPool
    fetcher: SafeFetcher
    semantic: SemanticSlot
    """Semantic recall once it has started (in the background)."""
    gateway: Gateway | None = None


@dataclass(frozen=True)
class App:
    settings: Settings
    execution: ExecutionService
    knowledge: KnowledgeService
    batch: BatchService
    fetch: FetchService
    export: ExportService
    records: RecordService
    _resources: Resources

    async def aclose(self) -> None:
        """Shut every kernel down, close the HTTP client and the database (shielded, bounded)."""
        res = self._resources
        await res.pool.shutdown_all()  # shielded and time-bounded inside
        if res.gateway is not None:
            await res.gateway.aclose()
        with anyio.CancelScope(shield=True):
            await res.fetcher.aclose()
            await anyio.to_thread.run_sync(res.semantic.close)  # the embedder stops within seconds

    def pool_spares(self) -> list[tuple[str, int | None, float]]:
        """(kernel name, pid, seconds idle) of the prewarmed kernels no session took yet (ctx_doctor)."""
        return [(name, kernel.pid, idle) for name, kernel, idle in self._resources.pool.spares()]

    def close_store(self) -> None:
        self._resources.db.close()


# What the App is built from, imported on a worker thread first, so that the event loop keeps answering
# (a prewarm builds the App while the client's handshake and tools/list are still in flight; imported on
# the loop they would wait for all of it). The ground floor, what a search needs, comes first (~0.2 s):
# a server's first ctx_search is answered from it while the rest (~0.35 s: kernels, web, export) imports.
_GROUND_MODULES = (
    "datadir", "hooks.compaction", "hooks.ingestion", "knowledge.service", "security.call_guard", "store.db",
    "store.events", "store.knowledge",
)
_SERVICE_MODULES = (
    "execution.batch", "execution.service", "kernels.pool", "kernels.backend", "notebooks.live", "notebooks.service",
    "records.service",
    "semantic.startup", "store.executions", "web.client", "web.service",
    "knowledge.chunking", "knowledge.walk", "security.redact",  # indexing's, imported by it where it needs them
)


def _import(names: tuple[str, ...]) -> None:
    for name in names:
        importlib.import_module(f"{__package__}.{name}")


@dataclass(frozen=True)
class Ground:
    """The store and the knowledge service: what a search needs, built before everything else."""

    db: Database
    knowledge: KnowledgeService
    events: EventRepository
    ingestion: Ingestion
    guard: DenyGuard


async def _build_ground(settings: Settings, tg: anyio.abc.TaskGroup) -> Ground:
    # Heavy imports live here on purpose: see the module docstring.
    await anyio.to_thread.run_sync(_import, _GROUND_MODULES)
    from .datadir import tighten
    from .hooks.compaction import last_compacted
    from .hooks.ingestion import Ingestion
    from .knowledge.service import KnowledgeService
    from .security.call_guard import DenyGuard
    from .store.db import Database
    from .store.events import EventRepository
    from .store.knowledge import KnowledgeRepository

    # Before anything is written in it. The token's mode is the HTTP transport's to judge (it refuses one
    # others could read, and says to rotate it), so it is left as it is.
    made_private = await anyio.to_thread.run_sync(tighten, settings.home, (settings.http_token_file.name,))
    if made_private:
        log.warning("%s", made_private)
    db = await anyio.to_thread.run_sync(Database.open, settings.db_path)
    guard = DenyGuard(settings.project_dir, settings.user_home, settings.claude_settings)

    def spawn(fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        tg.start_soon(fn)

    def forgotten_before() -> float:
        # Sends before the project's last compaction, or older than the resend period, are gone
        # from the agent's context.
        compacted = last_compacted(settings.home, settings.project_dir) or 0.0
        return max(compacted, time.time() - settings.resend_after_s)

    knowledge = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine, project=str(settings.project_dir)),
                                 project_dir=settings.project_dir,
                                 search_budget=settings.search_budget, guard=guard, spawn=spawn,
                                 forgotten_before=forgotten_before)
    if settings.semantic:
        knowledge.semantic_loading()  # searches meanwhile rank by words and say so
    events = EventRepository(db.engine)
    ingestion = Ingestion(db=db, events=events, knowledge=knowledge, home=settings.home)
    knowledge.ingest_before_reads(ingestion.ingest)
    return Ground(db, knowledge, events, ingestion, guard)


async def _build(settings: Settings, tg: anyio.abc.TaskGroup,
                 ground_ready: Callable[[Ground], Coroutine[Any, Any, None]], ground: Ground | None = None) -> App:
    """The App on `ground` (built first when None: a build that failed after its ground floor is retried on it)."""
    if ground is None:
        ground = await _build_ground(settings, tg)
    await ground_ready(ground)  # the searches waiting for it are answered before the rest imports beside them
    await anyio.to_thread.run_sync(_import, _SERVICE_MODULES)
    from .execution.batch import BatchService
    from .execution.service import ExecutionLimits, ExecutionService
    from .kernels.pool import KernelPool
    from .notebooks.live import LiveNotebooks
    from .notebooks.service import ExportService
    from .records.service import RecordService
    from .semantic.startup import SemanticSlot, start_recall
    from .store.executions import ExecutionRepository
    from .web.client import SafeFetcher
    from .web.service import FetchService

    db, knowledge, guard = ground.db, ground.knowledge, ground.guard
    python = project_python(settings)
    gateway = open_gateway(settings)
    kernels = kernel_factory(settings, python, gateway)
    pool = KernelPool(kernels, max_kernels=settings.max_kernels, idle_cull_s=settings.kernel_idle_cull_s,
                      start_timeout_s=settings.kernel_start_timeout_s)

    async def cull_loop() -> None:
        while True:
            await anyio.sleep(CULL_EVERY_S)
            await pool.cull_idle()

    tg.start_soon(cull_loop)
    tg.start_soon(_retention_loop, db, settings)
    tg.start_soon(_warm_secret_shapes, settings.home)

    def spawn(fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        tg.start_soon(fn)

    executions = ExecutionRepository(db.engine)
    limits = ExecutionLimits(
        return_budget=settings.return_budget, hard_output_cap=settings.hard_output_cap,
        default_timeout_ms=settings.default_timeout_ms, max_timeout_ms=settings.max_timeout_ms,
        progress_interval_s=settings.progress_interval_s, restart_timeout_s=settings.kernel_start_timeout_s,
    )
    semantic_slot = SemanticSlot()
    if settings.semantic:
        tg.start_soon(start_recall, settings, db, semantic_slot, knowledge.attach_semantic)
    # On a gateway the python kernel is the gateway's python3, not this project's interpreter.
    execution = ExecutionService(db=db, executions=executions, pool=pool, project_dir=settings.project_dir,
                                 limits=limits, spawn=spawn, knowledge=knowledge, guard=guard,
                                 python=None if gateway else python)
    fetcher = SafeFetcher(strict=settings.fetch_strict, max_body_bytes=settings.fetch_max_body,
                          proxy=settings.fetch_proxy)
    fetch = FetchService(knowledge=knowledge, fetcher=fetcher, guard=guard)
    await fetch.remove_stale()  # fetched content older than 14 days goes when the server starts
    export = ExportService(db=db, executions=executions, project_dir=settings.project_dir,
                           export_dir=settings.export_dir, kernels_dir=settings.kernels_dir, events=ground.events,
                           ingest=ground.ingestion.ingest)
    live = LiveNotebooks(export, settings.live_dir, spawn) if settings.live_notebooks else None
    return App(
        settings=settings, execution=execution, knowledge=knowledge,
        batch=BatchService(execution=execution, knowledge=knowledge, pool=pool, guard=guard), fetch=fetch,
        export=export,
        records=RecordService(db=db, executions=executions, events=ground.events, knowledge=knowledge,
                              ingest=ground.ingestion.ingest, home=settings.home, project_dir=settings.project_dir,
                              export_dir=settings.export_dir, insight_page=settings.insight_page,
                              after_purge=execution.forget_sessions, **({"after_call": live.touch} if live else {})),
        _resources=Resources(db, pool, fetcher, semantic_slot, gateway),
    )


async def _warm_secret_shapes(home: Path) -> None:
    """Read detect-secrets' plugins now (~110 ms, on a worker thread) rather than on the database
    thread at the first ingestion, and leave their patterns in the cache the hooks read, so no
    hook pays the import. Every record and index write redacts with them, some on the loop."""
    from pathlib import Path

    from .datadir import private_dir
    from .security.secret_shapes import cached_shapes, default_shapes

    try:
        await anyio.to_thread.run_sync(cached_shapes, Path(private_dir(home, "cache")))
        await anyio.to_thread.run_sync(default_shapes)
    except Exception:  # a warm-up: the first redaction raises it again where it matters
        log.exception("could not read detect-secrets' patterns in advance")


async def _retention_loop(db: Database, settings: Settings) -> None:
    """Old records and kernel logs go when the server starts, then daily (store/retention.py)."""
    from .errors import StoreError
    from .notebooks.live import prune as prune_live
    from .store.retention import RetentionPolicy, run_retention

    policy = RetentionPolicy(days=settings.retention_days, max_db_mb=settings.max_db_mb,
                             max_kernel_logs=settings.max_kernel_logs)
    while True:
        try:
            log.info("%s", (await run_retention(db, settings.log_dir, policy)).summary())
            await anyio.to_thread.run_sync(prune_live, settings.live_dir, settings.retention_days)
        except StoreError as exc:  # a full disk, say: the server works on, the next pass tries again
            log.warning("retention pass failed: %s", exc.message)
        except Exception:  # a bug here must not take the server down with it
            log.exception("retention pass failed")
        await anyio.sleep(RETENTION_EVERY_S)


EARLY_CALLS_S = 2.0


class _Build:
    """One build of the App, run in the lifespan's task group: callers wait for it, none of them owns it
    (a caller cancelled mid-build no longer cancels the build the others wait for)."""

    def __init__(self) -> None:
        self.ground = anyio.Event()
        self.done = anyio.Event()
        self.error: Exception | None = None


class AppHolder:
    """Async context manager for the server's lifespan; builds the App once, on first use.

    It owns the task group that background cells and the idle-kernel cull run in, so those
    tasks belong to the lifespan, not to whichever tool call happened to come first.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._app: App | None = None
        self._ground: Ground | None = None  # kept once built: a failed build is retried on the same store
        self._knowledge: KnowledgeService | None = None
        self._build: _Build | None = None
        self._early = 0  # searches answered from the ground floor while the rest is being built
        self._early_done = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> AppHolder:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        app, self._app = self._app, None
        if app is not None:
            await app.aclose()
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        ground, self._ground = self._ground, None
        # A ground floor whose App never came (its build failed) still holds the store.
        close = app.close_store if app is not None else ground.db.close if ground is not None else None
        if close is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(close)

    def _started_build(self) -> _Build:
        if self._build is not None:
            return self._build
        assert self._tg is not None, "AppHolder must be entered (server lifespan) before use"
        build = self._build = _Build()

        async def ground_ready(ground: Ground) -> None:
            self._ground, self._knowledge = ground, ground.knowledge
            build.ground.set()
            with anyio.move_on_after(EARLY_CALLS_S):
                while self._early:
                    await self._early_done.wait()

        async def run() -> None:
            assert self._tg is not None
            try:
                self._app = await _build(self.settings, self._tg, ground_ready, self._ground)
            # Raised to every caller (the store that cannot open, say); the next call tries again.
            except Exception as exc:  # noqa: BLE001 - handed to the callers, who raise it
                build.error = exc
                self._build = None
            finally:
                build.ground.set()
                build.done.set()

        self._tg.start_soon(run)
        return build

    async def get(self) -> App:
        if self._app is None:
            build = self._started_build()
            await build.done.wait()
            if self._app is None:
                raise build.error or RuntimeError("the server is shutting down")
        return self._app

    @asynccontextmanager
    async def knowledge(self) -> AsyncIterator[KnowledgeService]:
        """The knowledge service for one call as soon as it exists: a server's first search does not wait
        for the kernel and web modules to import, nor share the GIL with them while it runs."""
        if self._app is not None:
            yield self._app.knowledge
            return
        self._early += 1
        try:
            if self._knowledge is None:
                build = self._started_build()
                await build.ground.wait()
                if self._knowledge is None:
                    raise build.error or RuntimeError("the server is shutting down")
            yield self._knowledge
        finally:
            self._early -= 1
            if not self._early:
                self._early_done.set()
                self._early_done = anyio.Event()

    @property
    def started(self) -> App | None:
        return self._app

    async def doctor(self) -> list[Check]:
        """ctx_doctor: every check, kernels made as this server makes them. Needs no App: doctor is
        what a user runs when the store or a kernel is broken."""
        from .doctor import run_checks

        return await run_checks(self.settings, start=True,
                                spares=self._app.pool_spares() if self._app is not None else None)

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run `fn` in the lifespan's task group: work that must not delay the reply being sent."""
        assert self._tg is not None, "AppHolder must be entered (server lifespan) before use"
        self._tg.start_soon(fn)

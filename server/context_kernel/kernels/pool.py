"""The kernel pool: one warm kernel per (client session, kernel name), started on first use.

Kernels are kept between calls so variables, imports and loaded data persist; idle ones are
culled after a configurable time and the least recently used idle one is evicted when the
configured maximum is reached.

Spares: `prewarm` starts kernels before any session asks (the server does it once the client has
connected, for the python kernel and the project's recent languages). The first session that asks
for a spare's kernel name takes it over, so its first call finds the kernel warm; a spare still
starting is waited for rather than started twice. Spares count against the maximum, are culled
when idle like any kernel, and are the first to go when room is needed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from ..errors import PoolExhausted
from .backend import Kernel

KernelFactory = Callable[[str], Kernel]
# How many stopped kernels the pool remembers, to tell their sessions (bounded: sessions come and go).
MAX_REMEMBERED_STOPS = 1000

log = logging.getLogger(__name__)


@dataclass
class _Spare:
    kernel: Kernel
    ready: anyio.Event = field(default_factory=anyio.Event)
    ok: bool = False
    since: float = field(default_factory=time.monotonic)


@dataclass
class _Slot:
    kernel: Kernel
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    busy: bool = False


class KernelPool:
    def __init__(
        self,
        factory: KernelFactory,
        *,
        max_kernels: int,
        idle_cull_s: float,
        start_timeout_s: float,
    ) -> None:
        self._factory = factory
        self._max = max_kernels
        self._idle_cull_s = idle_cull_s
        self._start_timeout = start_timeout_s
        self._slots: dict[tuple[str, str], _Slot] = {}
        self._extra: set[Kernel] = set()  # fresh and background kernels, for shutdown_all
        self._room = anyio.Lock()
        self._start_locks: dict[tuple[str, str], anyio.Lock] = {}
        # Why a session's kernel was stopped (room, idle), until its session's next call hears it.
        self._stopped: dict[tuple[str, str], str] = {}
        self._notices: dict[tuple[str, str], str] = {}
        self._spares: dict[str, _Spare] = {}

    @asynccontextmanager
    async def lease(self, session_id: str, kernel_name: str) -> AsyncIterator[Kernel]:
        """The warm kernel of this session for `kernel_name`, held exclusively for one cell."""
        key = (session_id, kernel_name)
        slot = await self._slot(key)
        async with slot.lock:
            slot.busy = True
            try:
                yield slot.kernel
            finally:
                slot.busy = False
                slot.last_used = time.monotonic()

    async def _slot(self, key: tuple[str, str]) -> _Slot:
        slot = self._slots.get(key)
        if slot is not None and not slot.busy and not slot.lock.locked() and slot.kernel.cwd_replaced():
            # A re-clone: the kernel's working directory is the deleted one, where relative paths
            # no longer reach the project's files.
            self._slots.pop(key)
            self._remember_stop(key, "was stopped because the project directory was replaced (deleted and "
                                     "created again)")
            with anyio.CancelScope(shield=True):
                await slot.kernel.shutdown(now=True)
            slot = None
        if slot is not None:
            return slot
        # A lock per key: two first calls of one session must not start two kernels, while a slow
        # R start must not hold up another session's python.
        lock = self._start_locks.setdefault(key, anyio.Lock())
        async with lock:
            slot = self._slots.get(key)
            if slot is not None:
                return slot
            kernel = await self._take_spare(key[1])
            if kernel is None:
                async with self._room:
                    await self._make_room()
                kernel = self._factory(key[1])
                await kernel.start(self._start_timeout)
            slot = self._slots[key] = _Slot(kernel)
            if key in self._stopped:
                self._notices[key] = self._stopped.pop(key)
            return slot

    async def prewarm(self, kernel_names: list[str]) -> list[str]:
        """Start a spare kernel for each name (in order, while there is room); returns those started.

        A spare that fails to start is dropped quietly: the first call then starts its kernel and
        reports the failure as it always does.
        """
        started = []
        for name in dict.fromkeys(kernel_names):
            if name in self._spares or any(k == name for _, k in self._slots):
                continue
            if len(self._slots) + len(self._extra) + len(self._spares) >= self._max:
                break
            spare = self._spares[name] = _Spare(self._factory(name))
            try:
                await spare.kernel.start(self._start_timeout)
                spare.ok = True
                started.append(name)
            except Exception as exc:  # noqa: BLE001 - see the docstring: the first call reports it
                log.warning("the spare %s kernel did not start (a call will start its own): %s", name, exc)
                self._spares.pop(name, None)
                with anyio.CancelScope(shield=True):
                    await spare.kernel.shutdown(now=True)
            finally:
                spare.ready.set()
        return started

    async def _take_spare(self, kernel_name: str) -> Kernel | None:
        spare = self._spares.pop(kernel_name, None)
        if spare is None:
            return None
        with anyio.move_on_after(self._start_timeout):
            await spare.ready.wait()
        if spare.ok and await spare.kernel.is_alive():
            return spare.kernel
        log.warning("the spare %s kernel was %s; starting another", kernel_name,
                    "not started in time" if not spare.ready.is_set() else "not running" if spare.ok else "not started")
        with anyio.CancelScope(shield=True):
            await spare.kernel.shutdown(now=True)
        return None

    def spares(self) -> list[tuple[str, Kernel, float]]:
        """(kernel name, kernel, seconds idle) of each started spare no session took yet; for doctor."""
        now = time.monotonic()
        return [(name, s.kernel, now - s.since) for name, s in self._spares.items() if s.ok]

    def has(self, session_id: str, kernel_name: str) -> bool:
        """Whether the session has a kernel of this name already (progress says "starting" otherwise)."""
        return (session_id, kernel_name) in self._slots

    def take_notice(self, session_id: str, kernel_name: str) -> str | None:
        """Execution service calls this after a lease: why this session's previous kernel is gone, once."""
        return self._notices.pop((session_id, kernel_name), None)

    def _remember_stop(self, key: tuple[str, str], why: str) -> None:
        self._stopped[key] = why
        while len(self._stopped) > MAX_REMEMBERED_STOPS:
            self._stopped.pop(next(iter(self._stopped)))

    @asynccontextmanager
    async def throwaway(self, kernel_name: str, *, keep: bool = False) -> AsyncIterator[Kernel]:
        """A kernel for one cell (`fresh: true`), shut down afterwards unless `keep` (background)."""
        async with self._room:
            await self._make_room()
        kernel = self._factory(kernel_name)
        self._extra.add(kernel)
        try:
            await kernel.start(self._start_timeout)
        except BaseException:
            self._extra.discard(kernel)
            raise
        try:
            yield kernel
        finally:
            if not keep:
                self._extra.discard(kernel)
                with anyio.CancelScope(shield=True):
                    await kernel.shutdown(now=True)

    async def release_extra(self, kernel: Kernel) -> None:
        """Background runner calls this when its cell ended."""
        self._extra.discard(kernel)
        with anyio.CancelScope(shield=True):
            await kernel.shutdown(now=True)

    async def discard(self, session_id: str, kernel_name: str) -> None:
        """Runner calls this after a kernel died; the next call starts a new one."""
        slot = self._slots.pop((session_id, kernel_name), None)
        if slot is not None:
            with anyio.CancelScope(shield=True):
                await slot.kernel.shutdown(now=True)

    async def _make_room(self) -> None:
        if len(self._slots) + len(self._extra) + len(self._spares) < self._max:
            return
        ready = [name for name, s in self._spares.items() if s.ok]
        if ready:  # an unclaimed spare goes before any session's kernel
            spare = self._spares.pop(ready[0])
            with anyio.CancelScope(shield=True):
                await spare.kernel.shutdown(now=True)
            return
        idle = [(s.last_used, k) for k, s in self._slots.items() if not s.busy and not s.lock.locked()]
        if not idle:
            raise PoolExhausted(
                f"all {self._max} kernels are busy",
                hint="wait for a running call to finish, or raise the maximum (--max-kernels)",
            )
        _, key = min(idle)
        slot = self._slots.pop(key)
        self._remember_stop(key, f"was stopped to make room for another kernel (at most {self._max} run at once)")
        with anyio.CancelScope(shield=True):  # as in discard and cull: never left half shut down
            await slot.kernel.shutdown(now=True)

    async def cull_idle(self) -> int:
        """Server lifespan calls this periodically; shuts down kernels idle longer than the cull time."""
        now = time.monotonic()
        stale = [k for k, s in self._slots.items() if not s.busy and now - s.last_used > self._idle_cull_s]
        for name in [n for n, s in self._spares.items() if s.ok and now - s.since > self._idle_cull_s]:
            spare = self._spares.pop(name)
            with anyio.CancelScope(shield=True):
                await spare.kernel.shutdown(now=True)
        for key in stale:
            slot = self._slots.pop(key, None)  # shutdown_all may have taken it meanwhile
            if slot is not None:
                self._remember_stop(key, f"was stopped after {self._idle_cull_s / 60:g} minutes idle")
                # shielded, as in discard: a kernel out of the pool must not be left half shut down
                with anyio.CancelScope(shield=True):
                    await slot.kernel.shutdown(now=True)
        return len(stale)

    def kernels(self) -> list[tuple[str, str, Kernel]]:
        """(session, kernel name, kernel) for every warm kernel; for tests and doctor."""
        return [(s, k, slot.kernel) for (s, k), slot in self._slots.items()]

    def all_pids(self) -> list[int]:
        kernels = [slot.kernel for slot in self._slots.values()] + list(self._extra)
        kernels += [s.kernel for s in self._spares.values()]
        return [pid for k in kernels if (pid := k.pid) is not None]

    async def shutdown_all(self) -> None:
        """Server lifespan calls this on exit: every kernel goes, in parallel, bounded in time."""
        kernels = [slot.kernel for slot in self._slots.values()] + list(self._extra)
        kernels += [s.kernel for s in self._spares.values()]
        self._slots.clear()
        self._extra.clear()
        self._spares.clear()
        with anyio.CancelScope(shield=True), anyio.move_on_after(15):
            async with anyio.create_task_group() as tg:
                for kernel in kernels:
                    tg.start_soon(kernel.shutdown, True)

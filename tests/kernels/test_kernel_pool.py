"""The kernel pool tells a session why its kernel is gone: stopped for room or after idling."""

from __future__ import annotations

import anyio
import pytest
from tests.helpers import wait_gone

from context_kernel.kernels.factory import kernel_factory
from context_kernel.kernels.pool import KernelPool
from context_kernel.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


async def test_a_culled_kernel_s_session_hears_why_once_on_its_next_lease(settings: Settings) -> None:
    pool = KernelPool(kernel_factory(settings), max_kernels=4, idle_cull_s=0.0, start_timeout_s=60.0)
    try:
        async with pool.lease("s1", "python3"):
            pass
        assert pool.take_notice("s1", "python3") is None  # a first start is not news
        assert await pool.cull_idle() == 1
        async with pool.lease("s1", "python3"):
            pass
        assert pool.take_notice("s1", "python3") == "was stopped after 0 minutes idle"
        assert pool.take_notice("s1", "python3") is None  # said once
    finally:
        await pool.shutdown_all()


async def test_a_prewarmed_kernel_is_the_one_the_first_session_to_ask_gets(settings: Settings) -> None:
    started: list[str] = []
    factory = kernel_factory(settings)

    def counting(name: str):  # type: ignore[no-untyped-def]  # the factory's own type
        started.append(name)
        return factory(name)

    pool = KernelPool(counting, max_kernels=4, idle_cull_s=3600.0, start_timeout_s=60.0)
    try:
        assert await pool.prewarm(["python3", "python3", "ck-bash"]) == ["python3", "ck-bash"]
        assert [name for name, _, _ in pool.spares()] == ["python3", "ck-bash"]
        spare = pool.spares()[0][1]
        async with pool.lease("s1", "python3") as kernel:
            assert kernel is spare  # taken over, not started again
        assert started == ["python3", "ck-bash"]
        assert [name for name, _, _ in pool.spares()] == ["ck-bash"]
        async with pool.lease("s2", "python3"):
            pass  # a second session gets a kernel of its own
        assert started == ["python3", "ck-bash", "python3"]
        assert len(pool.all_pids()) == 3
    finally:
        await pool.shutdown_all()
    assert pool.spares() == [] and pool.all_pids() == []


async def test_spares_count_against_the_maximum_and_go_first_when_room_is_needed(settings: Settings) -> None:
    pool = KernelPool(kernel_factory(settings), max_kernels=2, idle_cull_s=3600.0, start_timeout_s=60.0)
    try:
        assert await pool.prewarm(["ck-bash", "python3", "ir"]) == ["ck-bash", "python3"]  # room for two
        async with pool.lease("s1", "python3"):
            pass  # took its spare: one spare and one session kernel left
        async with pool.lease("s2", "python3"):
            pass  # needs room: the unclaimed ck-bash spare is stopped, not s1's kernel
        assert pool.spares() == []
        assert sorted(session for session, _, _ in pool.kernels()) == ["s1", "s2"]
        assert pool.take_notice("s1", "python3") is None
    finally:
        await pool.shutdown_all()


async def test_idle_spares_are_culled_like_any_kernel(settings: Settings) -> None:
    pool = KernelPool(kernel_factory(settings), max_kernels=4, idle_cull_s=0.0, start_timeout_s=60.0)
    try:
        assert await pool.prewarm(["ck-bash"]) == ["ck-bash"]
        await pool.cull_idle()
        assert pool.spares() == [] and pool.all_pids() == []
    finally:
        await pool.shutdown_all()


async def test_a_kernel_shut_down_twice_at_once_never_raises(settings: Settings) -> None:
    # A background cell's end released its kernel while the server's exit shut every kernel down: the second
    # shutdown read the manager the first had cleared (AttributeError at server exit).
    kernel = kernel_factory(settings)("python3")
    await kernel.start(60.0)
    pid = kernel.pid
    async with anyio.create_task_group() as tg:
        tg.start_soon(kernel.shutdown, True)
        tg.start_soon(kernel.shutdown, True)
    assert pid is not None and wait_gone([pid], 30.0) == []

"""The kernel pool tells a session why its kernel is gone: stopped for room or after idling."""

from __future__ import annotations

import pytest

from context_kernel.app import kernel_factory
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

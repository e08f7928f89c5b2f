"""Fixtures of the kernel process tests: real kernels started by kernelspec name (see `kernel_harness`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kernel_harness import Kernel, StartKernel


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    # Module-wide: the module-scoped kernels and the tests that use them share one event loop.
    return "asyncio"


@pytest.fixture
async def start_kernel() -> AsyncIterator[StartKernel]:
    """`await start_kernel(name, env=..., cwd=...)`: a kernel (see `Kernel.start`), stopped after the test."""
    started: list[Kernel] = []

    async def start(name: str, **options: Any) -> Kernel:
        kernel = await Kernel.start(name, **options)
        started.append(kernel)
        return kernel

    try:
        yield start
    finally:
        for kernel in started:
            await kernel.stop()

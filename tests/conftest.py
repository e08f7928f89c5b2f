"""Shared fixtures: a real server (in memory or over stdio) on a temporary CONTEXT_KERNEL_HOME."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from mcp.client.client import Client
from tests.helpers import make_settings

from context_kernel.settings import Settings
from context_kernel.tools.server import create_server

TESTS = Path(__file__).parent

# Property tests run the same examples every time (a failure found once is found again, and a run
# never fails on an example no earlier run tried), with no per-example deadline and no "too slow"
# check: both measure time, which a loaded 2-core machine stretches.
settings.register_profile("context-kernel", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("context-kernel")
# Markers every test of a directory carries (see [tool.pytest.ini_options] in pyproject.toml).
DIRECTORY_MARKERS = {"kernel_processes": "kernels", "e2e": "e2e"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        top = item.path.relative_to(TESTS).parts[0]
        if top in DIRECTORY_MARKERS:
            item.add_marker(DIRECTORY_MARKERS[top])


def pytest_configure(config: pytest.Config) -> None:
    # Servers the tests start as processes inherit this: no kernels prewarmed behind each test's
    # back (CPU on 2 cores, and counts of kernel processes). tests/e2e/test_prewarm.py turns it on.
    os.environ["CONTEXT_KERNEL_PREWARM"] = "0"
    # Nor a live notebook rewritten behind every call (tests/e2e/test_live_notebook.py turns it on).
    os.environ["CONTEXT_KERNEL_LIVE_NOTEBOOKS"] = "0"
    # Hooks record before they exit, however slowly the shared machine starts them: a test reads the
    # spool right after the hook. tests/hooks/test_hook_overload.py tests the deferred recording.
    os.environ["CONTEXT_KERNEL_HOOK_DEFER_AFTER_S"] = "inf"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def settings(tmp_path: Path, project: Path) -> Settings:
    return make_settings(tmp_path, project)


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client]:
    async with Client(create_server(settings)) as c:
        yield c

"""Shared fixtures: a real server (in memory or over stdio) on a temporary CONTEXT_KERNEL_HOME."""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from mcp.client.client import Client
from mcp.types import CallToolResult

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


def make_settings(tmp_path: Path, project: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "home": tmp_path / "home", "project_dir": project, "base_env": dict(os.environ),
        "kernel_start_timeout_s": 60.0,
        # Words only unless a test asks for semantic recall: the background embedder would make a
        # search's ranking depend on how far it got (tests/knowledge/test_semantic*.py turn it on).
        "semantic": False,
        # Where a test turns it on, the embedder runs at normal priority: at its default idle priority it
        # never runs while both cores are busy (the suite runs on loaded machines too), and these tests
        # check what gets embedded, not when (the priority has its own test and bench/semantic_coverage.py).
        "semantic_nice": 0,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client]:
    async with Client(create_server(settings)) as c:
        yield c


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "context_kernel", "serve", *args]


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait (event-driven, bounded) for processes to exit; return those still alive."""
    deadline = time.monotonic() + timeout
    alive = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                alive.append(pid)
        finally:
            os.close(fd)
    return alive

"""Helpers the tests share (imported, unlike the fixtures in conftest.py): settings for a test's data dir,
the text of a tool result, the command that starts a server, and waiting for processes to end."""

from __future__ import annotations

import os
import re
import select
import sys
import time
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult

from context_kernel.settings import Settings


def make_settings(tmp_path: Path, project: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "home": tmp_path / "home", "project_dir": project, "base_env": dict(os.environ),
        "kernel_start_timeout_s": 60.0,
        # Words only unless a test asks for semantic recall: the background embedder would make a
        # search's ranking depend on how far it got (tests/semantic/test_semantic*.py turn it on).
        "semantic": False,
        # Where a test turns it on, the embedder runs at normal priority: at its default idle priority it
        # never runs while both cores are busy (the suite runs on loaded machines too), and these tests
        # check what gets embedded, not when (the priority has its own test and bench/semantic_coverage.py).
        "semantic_nice": 0,
        # No live notebook rewritten behind every call unless a test asks (tests/e2e/test_live_notebook.py).
        "live_notebooks": False,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


CITATION = re.compile(r"\n\[#(\d+)\]\Z")
EXECUTIONS_META = "context-kernel/executions"


def text_of(result: CallToolResult) -> str:
    """The reply's text without its citation line (`[#42]`, which ends every execution's reply); the citation
    must name an execution the result's `_meta` carries, so every test that reads a reply checks that too.
    tests/e2e/test_citations.py checks that the replies carry one."""
    return uncited("".join(getattr(block, "text", "") for block in result.content), result.meta)


def uncited(text: str, meta: dict[str, Any] | None) -> str:
    """`text_of` for a reply read as JSON (`result["content"]`, `result.get("_meta")`)."""
    cited = CITATION.search(text)
    if cited is None:
        return text
    ids = (meta or {}).get(EXECUTIONS_META) or []
    assert int(cited[1]) in ids, f"the reply cites [#{cited[1]}] but its _meta names {ids}"
    return text[:cited.start()]


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


def session_cells(nb: Any) -> list[Any]:
    """An exported notebook's cells without its first one, which moves the kernel to the session's folder
    (`role: setup`, notebooks/export.py): the cells of the session itself."""
    return [c for c in nb.cells if c.get("metadata", {}).get("context_kernel", {}).get("role") != "setup"]

"""A new server's first search is answered from the ground floor (store + knowledge service), before
the kernel, web and export modules are imported, and those imports wait until it is done: the search
neither waits for them nor shares the interpreter with them while it runs (bench/first_search.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest
from tests.helpers import make_settings

from context_kernel import app as app_module
from context_kernel.app import AppHolder

pytestmark = pytest.mark.anyio


async def test_the_first_search_is_answered_before_the_rest_of_the_app_is_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    order: list[str] = []
    release = threading.Event()  # holds the rest of the build until the test lets it go
    resumed = threading.Event()  # the rest of the build has begun
    real_import = app_module._import

    def gated_import(names: tuple[str, ...]) -> None:
        if names == app_module._SERVICE_MODULES:
            order.append("rest of the app imports")
            resumed.set()
            assert release.wait(30), "the test never released the build"
        real_import(names)

    monkeypatch.setattr(app_module, "_import", gated_import)
    async with AppHolder(make_settings(tmp_path, project)) as holder:
        with anyio.fail_after(60):
            async with holder.knowledge() as knowledge:
                await knowledge.index(content="# Pool\n\nThe pool keeps three spare kernels.", source="notes",
                                      session_id="s")
                reply = await knowledge.search(["spare kernels"], session_id="s", source=None, limit=2,
                                               content_type=None, sort="relevance", scope="project")
                order.append("search answered")
            assert "three spare kernels" in reply.text
            assert holder.started is None  # the App itself is not built yet
            assert await anyio.to_thread.run_sync(resumed.wait, 30)  # the build goes on once the search is done
            release.set()
            app = await holder.get()
    assert order == ["search answered", "rest of the app imports"]
    assert app.knowledge is knowledge  # one knowledge service: what the early search saw is the App's


async def test_a_store_that_cannot_open_fails_the_early_search_and_the_next_call_tries_again(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    settings = make_settings(tmp_path, project)
    settings.home.mkdir(parents=True)
    settings.db_path.mkdir()  # a directory where the database file should be
    async with AppHolder(settings) as holder:
        with anyio.fail_after(60):
            with pytest.raises(Exception, match="cannot be opened"):
                async with holder.knowledge():
                    pass
            settings.db_path.rmdir()
            async with holder.knowledge() as knowledge:
                reply = await knowledge.search(["anything"], session_id="s", source=None, limit=2,
                                               content_type=None, sort="relevance", scope="project")
            assert reply.text
            assert (await holder.get()).knowledge is knowledge


async def test_a_build_that_fails_after_its_ground_floor_is_retried_on_the_same_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The rest of the build can fail after the store opened (a project interpreter that is gone, say); the
    # next call tries again. It used to open the database again each time, leaving the last one open.
    from context_kernel.errors import InvalidRequest
    from context_kernel.store.db import Database

    project = tmp_path / "project"
    project.mkdir()
    opened: list[Database] = []
    real_open, real_python = Database.open, app_module.project_python
    failures = [InvalidRequest("the project's python is gone", hint="point --python at an interpreter")]

    def counting_open(path: Path) -> Database:
        opened.append(real_open(path))
        return opened[-1]

    def failing_once(settings: object) -> object:
        if failures:
            raise failures.pop()
        return real_python(settings)  # type: ignore[arg-type]

    monkeypatch.setattr(Database, "open", staticmethod(counting_open))
    monkeypatch.setattr(app_module, "project_python", failing_once)
    async with AppHolder(make_settings(tmp_path, project)) as holder:
        with anyio.fail_after(60):
            with pytest.raises(InvalidRequest, match="python is gone"):
                await holder.get()
            async with holder.knowledge() as early:  # the ground floor still answers searches
                assert (await early.search(["anything"], session_id="s", limit=2)).text
            app = await holder.get()
    assert app.knowledge is early
    assert len(opened) == 1

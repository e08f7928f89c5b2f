"""The default semantic recall, a static token table: files pinned, windows from token blocks, vectors
seconds after indexing, and fusion only over a fully embedded index (words alone otherwise, said so)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import anyio
import numpy as np
import pytest
from tests.semantic.semantic_support import GARDEN, VACUUM, WAIT_S, recall, settled

from context_kernel.errors import SemanticUnavailable
from context_kernel.knowledge.service import LOADING_NOTE, PENDING_NOTE, KnowledgeService
from context_kernel.semantic.files import STATIC_SHA256, static_model
from context_kernel.semantic.service import SemanticRecall
from context_kernel.semantic.static import StaticEncoder
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def encoder() -> StaticEncoder:
    enc = StaticEncoder(static_model())
    enc.load()
    return enc


@pytest.fixture
async def kb(tmp_path: Path) -> AsyncIterator[tuple[KnowledgeService, SemanticRecall, Database]]:
    async with recall(tmp_path, static_model()) as parts:
        yield parts


def test_the_table_and_tokenizer_match_their_pinned_hashes() -> None:
    files = static_model()
    assert files.kind == "static" and set(files.pinned) == set(STATIC_SHA256)
    files.verify()


def test_a_tampered_table_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    tampered = tmp_path / static_model().onnx.name
    shutil.copy(static_model().onnx, tampered)
    with tampered.open("r+b") as handle:
        handle.seek(-1, 2)
        handle.write(b"\x00" if handle.read(1) != b"\x00" else b"\x01")
    with pytest.raises(SemanticUnavailable) as caught:
        StaticEncoder(replace(static_model(), onnx=tampered)).load()
    assert caught.value.state == "broken" and "does not match its pinned sha256" in caught.value.message


def test_windows_from_token_blocks_are_the_windows_embedded_one_by_one(encoder: StaticEncoder) -> None:
    chunks = [("Routine vacuuming", VACUUM * 6), ("", "short"), ("Only a title", ""), ("Tomatoes", GARDEN)]
    fast = encoder.embed_chunks(chunks)
    slow = encoder.windows_batch(chunks)
    for by_blocks, windows in zip(fast, slow, strict=True):
        assert len(by_blocks) == len(windows)
        vectors = encoder.embed(windows)
        for (start, stop, vector), window, expected in zip(by_blocks, windows, vectors, strict=True):
            assert (start, stop) == (window.start, window.stop)
            assert float(np.dot(vector, expected)) == pytest.approx(1.0, abs=1e-5)
    assert len(fast[0]) > 1  # a long section is several windows


def test_meaning_without_shared_words_is_closer_than_unrelated_text(encoder: StaticEncoder) -> None:
    query = encoder.embed_query("why is my table not smaller after I delete records")
    vacuum, garden = (encoder.embed_chunks([(t, c)])[0][0][2] for t, c in (("", VACUUM), ("", GARDEN)))
    assert float(query @ vacuum) > float(query @ garden)


async def test_a_partly_embedded_index_ranks_by_words_alone_and_says_so(
        kb: tuple[KnowledgeService, SemanticRecall, Database]) -> None:
    service, semantic, db = kb
    await service.index_text(label="vacuum", text=VACUUM)
    await settled(semantic)
    semantic.worker.stop()  # the embedder stops: what is indexed from now on has no vectors
    await service.index_text(label="garden", text=GARDEN)
    assert not await db.run(semantic.covered)
    words = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=Path("."), search_budget=6144)
    for query in ("old version of the row", "why is my table not smaller after I delete records"):
        reply = await service.search([query], session_id=f"s-{query}")
        alone = await words.search([query], session_id=f"w-{query}")
        assert reply.text.startswith(PENDING_NOTE)
        assert reply.text.removeprefix(PENDING_NOTE).strip() == alone.text.strip()


async def test_a_fully_embedded_index_is_ranked_by_words_and_meaning(
        kb: tuple[KnowledgeService, SemanticRecall, Database]) -> None:
    service, semantic, db = kb
    await service.index_text(label="vacuum", text=VACUUM)
    await service.index_text(label="garden", text=GARDEN)
    await settled(semantic)
    assert await db.run(semantic.covered)
    reply = await service.search(["why is my table not smaller after I delete records"], session_id="s", limit=1)
    assert "ranked by words only" not in reply.text
    assert "source: vacuum" in reply.text


async def test_a_search_before_semantic_recall_has_started_says_it_ranks_by_words(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "kb.sqlite3")
    try:
        service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=tmp_path,
                                   search_budget=6144)
        service.semantic_loading()
        await service.index_text(label="vacuum", text=VACUUM)
        assert "few seconds" in (await service.semantic_coverage(["vacuum"]) or "")
        reply = await service.search(["old version of the row"], session_id="s")
        assert reply.text.startswith(LOADING_NOTE) and "source: vacuum" in reply.text
        service.attach_semantic(None)  # off after all (the extra is missing): words, and no note
        reply = await service.search(["old version of the row"], session_id="t")
        assert "ranked by words only" not in reply.text and await service.semantic_started() is None
    finally:
        db.close()


async def test_every_kind_of_section_gets_its_vectors(
        kb: tuple[KnowledgeService, SemanticRecall, Database]) -> None:
    service, semantic, db = kb
    await service.index_text(label="exec-1", text="step 1 ok\nstep 2 failed: disk full\n", kind="execution")
    await service.index_text(label="doc", text=VACUUM)
    await settled(semantic)
    assert await db.run(semantic.covered)
    assert await db.run(semantic.vectors.backlog) == (0, 0)


async def test_ctx_stats_and_doctor_show_the_backlog(tmp_path: Path) -> None:
    from mcp.client.client import Client
    from tests.helpers import make_settings, text_of

    from context_kernel.doctor import check_semantic
    from context_kernel.tools.server import create_server

    project = tmp_path / "project"
    project.mkdir()
    settings = make_settings(tmp_path, project, semantic=True)
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_index", {"content": VACUUM, "source": "vacuum"})
        for _ in range(200):  # the embedder runs in the background: bounded wait on what ctx_stats says
            stats = text_of(await client.call_tool("ctx_stats", {}))
            if "every section has its vectors" in stats:
                break
            assert "Semantic search:" in stats
            await anyio.sleep(0.1)
        assert "Semantic search: every section has its vectors" in stats
    assert "every section has its vectors" in check_semantic(settings).line()
    db = Database.open(settings.db_path)
    try:  # sections indexed while no server embeds them: doctor counts them
        service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=project,
                                   search_budget=6144)
        await service.index_text(label="garden", text=GARDEN)
    finally:
        db.close()
    assert "1 section(s)" in check_semantic(settings).line() and "waiting for their vectors" in \
        check_semantic(settings).line()


async def test_the_embedder_runs_in_a_process_of_its_own_and_stops_with_recall(
        kb: tuple[KnowledgeService, SemanticRecall, Database]) -> None:
    import os

    from context_kernel.semantic.embed_process import EmbeddingProcess

    service, semantic, _ = kb
    await service.index_text(label="vacuum", text=VACUUM)
    await settled(semantic)
    worker = semantic.worker
    assert isinstance(worker, EmbeddingProcess)
    child = worker._proc
    assert child is not None and child.pid != os.getpid() and child.poll() is None
    assert worker.embedded_bytes > 0 and worker.progress().state == "idle"
    semantic.close()
    assert child.poll() is not None  # stop() waited for it


def _scheduling(pid: int) -> tuple[int, int]:
    import os

    return os.sched_getscheduler(pid), os.getpriority(os.PRIO_PROCESS, pid)


async def test_the_embedder_runs_idle_by_default_and_at_the_servers_priority_when_asked(tmp_path: Path) -> None:
    import os

    db = Database.open(tmp_path / "kb.sqlite3")
    seen: dict[int, tuple[int, int]] = {}
    try:
        for nice in (19, 0):
            semantic = SemanticRecall(db=db, files=static_model(), nice=nice)
            try:
                semantic.start()
                child = semantic.worker._proc  # type: ignore[union-attr]
                assert child is not None
                for _ in range(int(WAIT_S * 10)):  # the child sets its own priority first thing: wait for it
                    if _scheduling(child.pid) != _scheduling(os.getpid()) or nice == 0:
                        break
                    await anyio.sleep(0.1)
                semantic.worker.wait_idle(WAIT_S)
                seen[nice] = _scheduling(child.pid)
            finally:
                semantic.close()
    finally:
        db.close()
    assert seen[19] == (os.SCHED_IDLE, 19)
    assert seen[0] == _scheduling(os.getpid())


async def test_an_embedder_started_from_a_thread_that_ends_keeps_running(tmp_path: Path) -> None:
    """The server starts semantic recall on a worker thread, which the thread pool ends after 10 s idle. A
    child's death signal (PR_SET_PDEATHSIG) follows the thread that spawned it, not the process: the
    embedder was killed then, and every later section stayed without vectors (a 25 s fetch of 200 pages)."""
    import threading

    db = Database.open(tmp_path / "kb.sqlite3")
    semantic = SemanticRecall(db=db, files=static_model(), nice=0)
    service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=tmp_path,
                               search_budget=6144, semantic=semantic)
    try:
        starter = threading.Thread(target=semantic.start)
        starter.start()
        starter.join()  # the thread that started the embedder is gone, as a pool's idle worker goes
        await service.index_text(label="vacuum", text=VACUUM)
        await settled(semantic)
        assert semantic.worker.failure is None
        upto, _ = await db.run(semantic.vectors.state)
        assert upto > 0
    finally:
        semantic.close()
        db.close()


async def test_stopping_an_embedder_that_cannot_run_returns_and_leaves_no_process(tmp_path: Path) -> None:
    """On a machine busy on every core the idle-priority child may not run at all; stop must not wait on it."""
    import os
    import signal

    db = Database.open(tmp_path / "kb.sqlite3")
    semantic = SemanticRecall(db=db, files=static_model(), nice=0)
    try:
        semantic.start()
        child = semantic.worker._proc  # type: ignore[union-attr]
        assert child is not None
        os.kill(child.pid, signal.SIGSTOP)  # as starved as a process can be: it gets no core at all
        semantic.close()
        assert child.poll() is not None  # killed and reaped, not left behind
    finally:
        db.close()


async def test_a_table_the_child_refuses_is_reported_and_search_stays_by_words(tmp_path: Path) -> None:
    tampered = tmp_path / static_model().onnx.name
    shutil.copy(static_model().onnx, tampered)
    with tampered.open("r+b") as handle:
        handle.seek(100)
        handle.write(b"\x00\x01\x02\x03")
    db = Database.open(tmp_path / "kb.sqlite3")
    semantic = SemanticRecall(db=db, files=replace(static_model(), onnx=tampered), nice=0)
    service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=tmp_path,
                               search_budget=6144, semantic=semantic)
    try:
        await service.index_text(label="vacuum", text=VACUUM)
        assert await anyio.to_thread.run_sync(semantic.worker.wait_idle, WAIT_S)
        failure = semantic.worker.failure
        assert failure is not None and "does not match its pinned sha256" in failure.message
        line = await service.semantic_coverage(["vacuum"]) or ""
        assert line.startswith("Semantic search is off") and "reinstall" in line
        reply = await service.search(["old version of the row"], session_id="s")
        assert "source: vacuum" in reply.text
    finally:
        semantic.close()
        db.close()


def test_the_embedder_dies_with_a_killed_server(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from context_kernel.semantic.files import static_model
        from context_kernel.semantic.service import SemanticRecall
        from context_kernel.store.db import Database
        db = Database.open(Path({str(tmp_path / 'kb.sqlite3')!r}))
        semantic = SemanticRecall(db=db, files=static_model(), nice=0)
        semantic.start()
        print(semantic.worker._proc.pid, flush=True)
        time.sleep(120)
    """)
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "server")})
    try:
        assert server.stdout is not None
        child = int(server.stdout.readline())
        os.kill(server.pid, signal.SIGKILL)
        server.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            # a zombie until its parent (init) reaps it: gone for our purposes once it no longer runs
            state = Path(f"/proc/{child}/stat").read_text().split(")")[-1].split()[0] \
                if Path(f"/proc/{child}/stat").exists() else "X"
            if state in ("Z", "X"):
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the embedder {child} outlived its server")
    finally:
        server.kill()
        server.wait(10)
        if server.stdout is not None:
            server.stdout.close()


async def test_meaning_never_brings_back_another_projects_section(tmp_path: Path) -> None:
    """Two projects on one database: the nearest vectors of project A are A's own, and a question
    that only B's text answers (by meaning alone) finds nothing in A."""
    db = Database.open(tmp_path / "kb.sqlite3")
    semantic = SemanticRecall(db=db, files=static_model(), nice=0)
    services = {}
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir()
        repo = KnowledgeRepository(db.engine, project=str(tmp_path / name))
        services[name] = (repo, KnowledgeService(db=db, repo=repo, project_dir=tmp_path / name, search_budget=6144,
                                                 semantic=semantic))
    try:
        await services["beta"][1].index_text(label="notes", text=VACUUM)
        await services["alpha"][1].index_text(label="notes", text=GARDEN)
        await settled(semantic)
        assert await db.run(semantic.covered)
        question = "why is my table not smaller after I delete records"
        beta = await services["beta"][1].search([question], session_id="b", limit=2)
        alpha = await services["alpha"][1].search([question], session_id="a", limit=2)
        assert "reclaimed later by VACUUM" in beta.text
        assert "VACUUM" not in alpha.text and "Tomatoes" not in beta.text

        alpha_repo = services["alpha"][0]
        own = await db.run(alpha_repo.own_chunk_ids)
        assert own is not None and own == set(await db.run(lambda: [c.id for c in alpha_repo.source_chunks("notes")]))
        vectors = await semantic.embed_queries([question])
        assert vectors is not None
        nearest = await db.run(semantic.dense, vectors[0], 10, None, None, own)
        everywhere = await db.run(semantic.dense, vectors[0], 10)
        assert {h.chunk_id for h in nearest} <= own
        assert {h.chunk_id for h in everywhere} - own  # without the filter, beta's section is the nearest
    finally:
        semantic.close()
        db.close()

"""Semantic recall with the real model on a real SQLite file: files verified, windows, background embedding, fusion."""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import anyio
import numpy as np
import pytest
from tests.semantic.semantic_support import GARDEN, VACUUM, WAIT_S, recall, settled

from context_kernel.cli import build_settings
from context_kernel.errors import SemanticUnavailable
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.semantic.encoder import Encoder
from context_kernel.semantic.files import DEFAULT_SHA256, default_model, from_directory
from context_kernel.semantic.service import SemanticRecall
from context_kernel.semantic.status import probe
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    enc = Encoder(default_model())
    enc.load()
    return enc


@pytest.fixture
async def kb(tmp_path: Path) -> AsyncIterator[tuple[KnowledgeService, SemanticRecall]]:
    """The transformer (all-MiniLM-L6-v2 through the semantic-transformer extra)."""
    async with recall(tmp_path, default_model()) as (service, semantic, _):
        yield service, semantic


embedded = settled


def test_the_default_model_files_match_their_pinned_hashes() -> None:
    files = default_model()
    assert files.pinned == DEFAULT_SHA256 and files.onnx.name == "model.onnx"
    files.verify()
    assert (files.tokenizer.parent / "LICENSE").read_text().lstrip().startswith("Apache License")


def test_a_tampered_model_file_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    tampered = tmp_path / "tokenizer.json"
    shutil.copy(default_model().tokenizer, tampered)
    with tampered.open("a") as handle:
        handle.write(" ")
    files = replace(default_model(), tokenizer=tampered)
    with pytest.raises(SemanticUnavailable) as caught:
        Encoder(files).load()
    assert caught.value.state == "broken"
    assert "does not match its pinned sha256" in caught.value.message and str(tampered) in caught.value.message
    assert "reinstall" in caught.value.hint


async def test_a_tampered_model_turns_semantic_off_and_ctx_index_says_why(tmp_path: Path) -> None:
    tampered = tmp_path / "tokenizer.json"
    tampered.write_bytes(default_model().tokenizer.read_bytes()[:-10])
    db = Database.open(tmp_path / "kb.sqlite3")
    semantic = SemanticRecall(db=db, files=replace(default_model(), tokenizer=tampered), nice=0)
    service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=tmp_path, search_budget=6144,
                               semantic=semantic)
    try:
        await service.index_text(label="vacuum", text=VACUUM)
        await embedded(semantic)
        line = await service.semantic_coverage(["vacuum"])
        assert line is not None and line.startswith("Semantic search is off") and "pinned sha256" in line
        reply = await service.search(["old version of the row"], session_id="s")
        assert "source: vacuum" in reply.text  # by words, as without the extra
    finally:
        semantic.close()
        db.close()


def test_a_long_chunk_is_embedded_as_overlapping_windows_not_truncated(encoder: Encoder) -> None:
    content = " ".join(f"sentence number {i} talks about something else entirely." for i in range(120))
    windows = encoder.windows("A > B", content)
    assert len(windows) >= 3
    assert windows[0].start == 0 and windows[-1].stop == len(content)
    assert all(b.start < a.stop for a, b in itertools.pairwise(windows))  # they overlap
    assert all(len(w.ids) <= encoder.files.max_tokens for w in windows)
    vectors = encoder.embed(windows)
    assert vectors.shape == (len(windows), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_a_sentence_transformers_directory_loads_through_the_same_code(tmp_path: Path, encoder: Encoder) -> None:
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "model.onnx").symlink_to(encoder.files.onnx)
    shutil.copy(encoder.files.tokenizer, tmp_path / "tokenizer.json")
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    theirs = Encoder(from_directory(tmp_path))
    a, b = theirs.embed_query("vacuum reclaims space"), encoder.embed_query("vacuum reclaims space")
    assert theirs.files.pinned == {} and float(a @ b) > 0.9999


def test_meaning_is_closer_than_unrelated_text(encoder: Encoder) -> None:
    query = encoder.embed_query("why doesn't my table get smaller after deleting rows?")
    near, far = encoder.embed([encoder.windows("Routine vacuuming", VACUUM)[0], encoder.windows("Tomatoes", GARDEN)[0]])
    assert float(query @ near) > float(query @ far) + 0.2


async def test_search_answers_lexically_until_the_vectors_exist_then_finds_by_meaning(
        kb: tuple[KnowledgeService, SemanticRecall]) -> None:
    service, semantic = kb
    await service.index_text(label="vacuum", text=VACUUM)
    await service.index_text(label="garden", text=GARDEN)
    question = "why doesn't my table get smaller on disk when I remove records?"
    await embedded(semantic)
    assert await service.semantic_coverage(["vacuum"]) == "Semantic search covers it now."
    reply = await service.search([question], session_id="s", limit=1)
    assert "source: vacuum" in reply.text and "old version of the row" in reply.text


async def test_a_reindexed_source_loses_its_old_vectors(kb: tuple[KnowledgeService, SemanticRecall]) -> None:
    service, semantic = kb
    db = service._db  # type: ignore[attr-defined]
    query = await anyio.to_thread.run_sync(semantic.encoder.embed_query, "dead tuples and reclaimed space")
    await service.index_text(label="notes", text=VACUUM)
    await embedded(semantic)
    [before] = await db.run(semantic.dense, query, 5)
    await service.index_text(label="notes", text=GARDEN)
    await embedded(semantic)
    assert before.chunk_id not in {h.chunk_id for h in await db.run(semantic.dense, query, 5)}
    assert len(await db.run(semantic.vectors.ids_upto, 1 << 40)) == 1  # the one window of GARDEN


async def test_indexing_never_waits_for_the_embedder(kb: tuple[KnowledgeService, SemanticRecall]) -> None:
    service, semantic = kb
    # ~400 KB of prose is minutes of embedding on one thread; indexing it and searching it return at once.
    book = "\n\n".join(f"## Part {i}\n\n" + " ".join(f"Paragraph {i}.{j} on storage engines, pages and tuples."
                                                    for j in range(60)) for i in range(120))
    await service.index_text(label="book", text=book)
    reply = await service.search(["storage engines"], session_id="s")
    line = await service.semantic_coverage(["book"])
    assert "source: book" in reply.text
    assert line is not None and "being embedded in the background" in line and "finds it by words" in line
    assert semantic.worker.progress().state in ("idle", "embedding")


def test_doctor_says_semantic_is_on_with_the_verified_model(tmp_path: Path) -> None:
    from context_kernel.doctor import check_semantic
    from context_kernel.settings import Settings

    line = check_semantic(Settings(home=tmp_path, project_dir=tmp_path)).line()
    assert line.startswith("[OK] semantic: on: wordllama l2_supercat 256") and "sha256 verified" in line
    off = check_semantic(Settings(home=tmp_path, project_dir=tmp_path, semantic=False)).line()
    assert off.startswith("[OK] semantic: off") and "CONTEXT_KERNEL_SEMANTIC" in off


def test_the_setting_is_on_by_default_and_off_with_the_variable() -> None:
    args = argparse.Namespace()
    assert build_settings(args, {}).semantic is True
    assert build_settings(args, {"CONTEXT_KERNEL_SEMANTIC": "0"}).semantic is False
    assert build_settings(args, {"CONTEXT_KERNEL_SEMANTIC_MODEL": "/m"}).semantic_model == Path("/m")
    off = probe(False, None)
    assert off.state == "off" and "CONTEXT_KERNEL_SEMANTIC" in off.hint


def test_without_the_extra_search_works_by_words_and_doctor_says_how_to_add_it(tmp_path: Path) -> None:
    # A real interpreter in which tokenizers cannot be imported, as when the extra is not installed.
    script = textwrap.dedent(f"""
        import sys
        sys.modules["tokenizers"] = None
        import anyio
        from pathlib import Path
        from context_kernel.app import AppHolder
        from context_kernel.doctor import check_semantic
        from context_kernel.settings import Settings

        settings = Settings(home=Path({str(tmp_path / "home")!r}), project_dir=Path({str(tmp_path)!r}), base_env={{}})
        print(check_semantic(settings).line())

        async def main() -> None:
            async with AppHolder(settings) as holder:
                app = await holder.get()
                await app.knowledge.index(content={VACUUM!r}, source="vacuum", session_id="s")
                print(await app.knowledge.semantic_coverage(["vacuum"]))
                print((await app.knowledge.search(["old version of the row"], session_id="s")).text)

        anyio.run(main)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "server")})
    assert done.returncode == 0, done.stderr
    doctor, coverage, *reply = done.stdout.splitlines()
    checkout = Path(__file__).resolve().parents[2]  # the package runs from it: the extra comes from it too
    assert doctor.startswith("[WARN] semantic: missing") and f"install -e '{checkout}[semantic]'" in doctor
    assert coverage == "None"  # ctx_index adds no semantic line
    assert any("source: vacuum" in line for line in reply)


async def test_two_servers_sharing_a_database_store_each_chunks_vectors_once(
        kb: tuple[KnowledgeService, SemanticRecall], tmp_path: Path) -> None:
    service, semantic = kb
    other_db = Database.open(tmp_path / "kb.sqlite3")  # a second server on the same file
    other = SemanticRecall(db=other_db, files=default_model(), nice=0)
    try:
        text = "\n\n".join(f"## Part {i}\n\n" + "Dead tuples are reclaimed by vacuum. " * 40 for i in range(6))
        await service.index_text(label="shared", text=text)
        other.start()
        await embedded(semantic)
        assert await anyio.to_thread.run_sync(other.worker.wait_idle, WAIT_S)
        chunks = await service._db.run(service._repo.source_chunks, "shared")  # type: ignore[attr-defined]
        windows = sum(len(semantic.encoder.windows(c.title, c.content)) for c in chunks)
        assert len(await service._db.run(semantic.vectors.ids_upto, 1 << 40)) == windows  # type: ignore[attr-defined]
    finally:
        other.close()
        other_db.close()


async def test_the_model_reads_a_misspelt_query_as_corrected(kb: tuple[KnowledgeService, SemanticRecall]) -> None:
    service, semantic = kb
    await service.index_text(label="vacuum", text=VACUUM)
    await service.index_text(label="garden", text=GARDEN)
    await embedded(semantic)
    read: list[str] = []
    embed_query = semantic.encoder.embed_query

    def spy(query: str) -> np.ndarray:  # what the model is asked to embed
        read.append(query)
        return embed_query(query)

    semantic.encoder.embed_query = spy  # type: ignore[method-assign]
    reply = await service.search(["where does the spcae of a deleted row go"], session_id="s", limit=1)
    assert read[-1] == "where does the space of a deleted row go"
    assert "source: vacuum" in reply.text and "'spcae' — searched 'space'" in reply.text


async def test_best_windows_score_each_asked_chunk_as_its_stored_vectors_do_and_forget_deleted_ones(
        kb: tuple[KnowledgeService, SemanticRecall]) -> None:
    service, semantic = kb
    db = service._db  # type: ignore[attr-defined]
    await service.index_text(label="vacuum", text=VACUUM)
    await service.index_text(label="garden", text=GARDEN)
    await embedded(semantic)
    query = await anyio.to_thread.run_sync(semantic.encoder.embed_query, "dead tuples and reclaimed space")
    rows = await db.run(semantic.vectors.rows_after, 0, 100)
    exact: dict[int, float] = {}
    for row in rows:  # every window, scored here from the table: a chunk's best is its max
        score = float(np.frombuffer(row.vec, dtype=np.float16).astype(np.float32) @ query)
        exact[row.chunk_id] = max(exact.get(row.chunk_id, -1.0), score)
    await db.run(semantic.dense, query, 5)  # loads the index
    found = await db.run(lambda: semantic.best_windows(query)(list(exact)))
    # In memory the vectors are int8 with a scale per window: within 0.005 of the float16 table's cosine
    # (the rounding error of 384 components, each off by at most 1/254 of the largest)
    assert set(found) == set(exact)
    assert all(abs(found[c].score - score) < 0.005 for c, score in exact.items()), (found, exact)
    await service.index_text(label="vacuum", text=GARDEN.replace("Tomatoes", "Beans"))  # its old chunk deleted
    await embedded(semantic)
    await db.run(semantic.dense, query, 5)
    again = await db.run(lambda: semantic.best_windows(query)(list(exact)))
    garden = await db.run(semantic.vectors.chunk_ids, "garden", None)
    assert list(again) == garden and len(exact) == 2  # of the two asked for, only garden's chunk is left


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="with one CPU, BLAS has one thread anyway: nothing to check")
def test_the_servers_vector_scoring_leaves_no_blas_thread_spinning_on_a_core(tmp_path: Path) -> None:
    # OpenBLAS (numpy's BLAS) starts a worker per core at the first matrix product and each spins for
    # ~0.1 s after every call: after each search one of them kept a core busy, the core the lexical
    # ranking and the user's kernels were waiting for (ctx_search at 100,000 chunks: 19.9 → 14.5 ms).
    # In a fresh process, as the server builds it: semantic recall, then a dense search.
    script = textwrap.dedent(f"""
        import numpy as np, threadpoolctl
        from pathlib import Path
        from context_kernel.semantic.files import default_model
        from context_kernel.semantic.service import SemanticRecall
        from context_kernel.store.db import Database
        db = Database.open(Path({str(tmp_path / "kb.sqlite3")!r}))
        semantic = SemanticRecall(db=db, files=default_model(), nice=0)
        np.ones((512, 384), dtype=np.float32) @ np.ones(384, dtype=np.float32)  # what VectorIndex scores with
        print(sorted({{p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}}))
        semantic.close(); db.close()
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["[1]"], out.stdout + out.stderr

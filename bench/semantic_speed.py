"""Semantic recall speed, every figure next to a baseline measured in the same run.

    python bench/semantic_speed.py [--sizes 10000,100000] [--skip-kernel]

1. Vector storage and scoring at 10k and 100k chunks: sqlite-vec's vec0 brute-force KNN (when this
   Python can load SQLite extensions), a plain BLOB table scored exactly with numpy (float32), and
   ours (semantic/index.py: Hamming shortlist over sign bits, int8 rescoring), with how many of
   the exact top-10 chunks ours keeps.
2. Search latency at 10k and 100k chunks with vectors: lexical `search` vs the hybrid path
   (dense + fusion + snippets), plus the query's embedding on its own.
3. ctx_index call throughput with the semantic extra on vs off (the call only wakes the embedder).
4. Background embedding throughput (KB/s on this machine, one thread, nice 19), and a python
   kernel's warm-call latency while it runs vs idle.

Vectors for 2 and 1 are the real model's vectors of a sample of the chunks, each reused for
many chunks with noise (embedding 100k chunks would take hours); queries are the real model's
vectors of bench/retrieval's questions. Nothing is asserted: this prints ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))
sys.path.insert(0, str(HERE))

from context_kernel.knowledge.fusion import hybrid_search  # noqa: E402
from context_kernel.knowledge.search import search  # noqa: E402
from context_kernel.knowledge.service import KnowledgeService  # noqa: E402
from context_kernel.semantic.files import ModelFiles, default_model, static_model  # noqa: E402
from context_kernel.semantic.index import VectorIndex  # noqa: E402
from context_kernel.semantic.service import SemanticRecall  # noqa: E402
from context_kernel.store.db import Database, write  # noqa: E402
from context_kernel.store.knowledge import KnowledgeRepository  # noqa: E402
from search_speed import build  # noqa: E402

QUESTIONS = HERE / "retrieval" / "questions.jsonl"
SAMPLE_CHUNKS = 200
EMBED_WAIT_S = 120.0
NOISE = 0.04


def ms(times: list[float]) -> str:
    times = sorted(times)
    return f"{statistics.median(times) * 1e3:.2f} / {times[int(len(times) * 0.95) - 1] * 1e3:.2f}"


def queries() -> list[str]:
    return [json.loads(line)["query"] for line in QUESTIONS.read_text().splitlines() if line.strip()]


def fill_vectors(db: Database, semantic: SemanticRecall, rng: np.random.Generator) -> tuple[int, float]:
    """Real vectors of a sample of chunks, reused with noise for every chunk; returns (windows, windows/chunk)."""
    with db.engine.connect() as conn:
        ids = [r[0] for r in conn.exec_driver_sql("SELECT id FROM chunks ORDER BY id")]
        sample = conn.exec_driver_sql(
            f"SELECT title, content FROM chunks ORDER BY random() LIMIT {SAMPLE_CHUNKS}").all()
    enc = semantic.encoder
    windows = [w for title, content in sample for w in enc.windows(title, content)]
    per_chunk = len(windows) / len(sample)
    base = enc.embed(windows)
    rows = []
    for cid in ids:
        for _ in range(max(1, int(rng.poisson(per_chunk - 1)) + 1)):
            v = base[rng.integers(len(base))] + rng.normal(0, NOISE, base.shape[1]).astype(np.float32)
            v /= np.linalg.norm(v)
            rows.append({"c": cid, "m": semantic.vectors.model, "v": v.astype(np.float16).tobytes()})
    with write(db.engine) as conn:
        conn.exec_driver_sql("DELETE FROM chunk_vectors")
        conn.exec_driver_sql(
            "INSERT INTO chunk_vectors (chunk_id, start, stop, model, vec) VALUES (:c, 0, 0, :m, :v)", rows)
    return len(rows), per_chunk


def storage(db: Database, semantic: SemanticRecall, qvecs: np.ndarray) -> list[str]:
    with db.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT chunk_id, vec FROM chunk_vectors ORDER BY id").all()
    chunks = np.asarray([r[0] for r in rows])
    began = time.perf_counter()
    exact = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1).astype(np.float32)
    load_s = time.perf_counter() - began
    out = []

    def top_chunks(scores: np.ndarray, k: int = 10) -> list[int]:
        seen: list[int] = []
        for i in np.argsort(-scores):
            if chunks[i] not in seen:
                seen.append(int(chunks[i]))
            if len(seen) == k:
                break
        return seen

    times, truth = [], []
    for q in qvecs:
        began = time.perf_counter()
        scores = exact @ q
        truth.append(top_chunks(scores))
        times.append(time.perf_counter() - began)
    out.append(f"| BLOB table + numpy float32, exact | {ms(times)} | 1.000 | load {load_s:.2f} s, "
               f"{exact.nbytes / 1e6:.0f} MB in memory |")
    index = VectorIndex(semantic.vectors, exact.shape[1])
    began = time.perf_counter()
    db.run_sync(index.sync)
    load_s = time.perf_counter() - began
    times, overlap = [], []
    for q, want in zip(qvecs, truth, strict=True):
        began = time.perf_counter()
        got = [h.chunk_id for h in index.search(q, 10)]
        times.append(time.perf_counter() - began)
        overlap.append(len(set(got) & set(want)) / 10)
    mem = sum(a.nbytes for a in (index._vecs, index._scale, index._codes, index._rows, index._chunks,  # its own arrays
                                 index._spans)) / 1e6
    out.append(f"| ours: sign-bit shortlist + int8 rescoring | {ms(times)} | {statistics.mean(overlap):.3f} | "
               f"load {load_s:.2f} s, {mem:.0f} MB in memory |")
    out.append(sqlite_vec_line(exact, chunks, qvecs, truth))
    return out


def sqlite_vec_line(exact: np.ndarray, chunks: np.ndarray, qvecs: np.ndarray, truth: list[list[int]]) -> str:
    conn = sqlite3.connect(":memory:")
    if not hasattr(conn, "enable_load_extension"):
        return ("| sqlite-vec vec0 | — | — | not measurable here: this Python's sqlite3 is built without extension "
                "loading, so the server could not load it either |")
    try:
        import sqlite_vec
    except ImportError:
        return "| sqlite-vec vec0 | — | — | not installed (pip install sqlite-vec to compare) |"
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{exact.shape[1]}] distance_metric=cosine)")
    conn.executemany("INSERT INTO v(rowid, embedding) VALUES (?, ?)", ((i + 1, exact[i].tobytes())
                                                                       for i in range(len(exact))))
    times, overlap = [], []
    for q, want in zip(qvecs, truth, strict=True):
        began = time.perf_counter()
        found = conn.execute("SELECT rowid FROM v WHERE embedding MATCH ? AND k = 40", (q.tobytes(),)).fetchall()
        times.append(time.perf_counter() - began)
        got = list(dict.fromkeys(int(chunks[r[0] - 1]) for r in found))[:10]
        overlap.append(len(set(got) & set(want)) / 10)
    return f"| sqlite-vec {sqlite_vec.__version__} vec0, brute force | {ms(times)} | {statistics.mean(overlap):.3f} | |"


def latency(db: Database, repo: KnowledgeRepository, semantic: SemanticRecall, texts: list[str]) -> list[str]:
    for q in texts[:10]:
        search(repo, q, limit=2)
    lexical, hybrid, embed = [], [], []
    for q in texts:
        began = time.perf_counter()
        search(repo, q, limit=2, snippet_chars=2800)
        lexical.append(time.perf_counter() - began)
        began = time.perf_counter()
        vec = semantic.encoder.embed_query(q)
        embed.append(time.perf_counter() - began)
        began = time.perf_counter()
        db.run_sync(lambda q=q, vec=vec: hybrid_search(repo, q, semantic.dense(vec, 30), limit=2, snippet_chars=2800))
        hybrid.append(time.perf_counter() - began)
    return [f"| lexical search | {ms(lexical)} |", f"| hybrid search (dense + fusion + snippets) | {ms(hybrid)} |",
            f"| query embedding (before the store hop) | {ms(embed)} |",
            f"| hybrid + embedding | {ms([h + e for h, e in zip(hybrid, embed, strict=True)])} |"]


async def service_latency(db: Database, repo: KnowledgeRepository, semantic: SemanticRecall, work: Path,
                          texts: list[str]) -> list[str]:
    """What ctx_search's service costs per query with vectors: the query embedded, the database hops,
    dense recall, fusion, snippets and the reply (no MCP). Best of 3 per query: the machine's noise is
    not the search's."""
    service = KnowledgeService(db=db, repo=repo, project_dir=work, search_budget=6144, semantic=semantic)
    best: dict[str, float] = {}
    for n in range(4):  # the first pass warms caches and is not counted
        for i, q in enumerate(texts):
            began = time.perf_counter()
            await service.search([q], session_id=f"bench-{n}-{i}", limit=2)
            if n:
                best[q] = min(best.get(q, 1e9), time.perf_counter() - began)
    return [f"| ctx_search's service (embedding + hops + hybrid + reply), best of 3 | {ms(list(best.values()))} |"]


async def index_throughput(work: Path) -> list[str]:
    text = "\n\n".join(p.read_text() for p in sorted((HERE / "retrieval" / "corpus").iterdir())
                       if p.suffix in (".md", ".rst")) * 8
    out = []
    for n, on in enumerate((False, True) * 3):  # alternated: the load of a shared machine drifts
        # A fresh file each time: in a reused one the same labels replace what the last pair indexed.
        db = Database.open(work / f"ix-{n}-{on}.sqlite3")
        semantic = SemanticRecall(db=db, files=default_model()) if on else None
        if semantic is not None:
            # As `serve` does at start: the embedder's thread starts and loads the model before any call
            # (creating the ONNX session holds the GIL for ~1 s, a start-up cost, not a ctx_index one).
            semantic.start()
            await anyio.to_thread.run_sync(semantic.encoder.load)
        service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=work,
                                   search_budget=6144, semantic=semantic)
        began = time.perf_counter()
        for i in range(3):
            await service.index_text(label=f"doc{i}", text=text)
            if semantic is not None:
                await service.semantic_coverage([f"doc{i}"])  # ctx_index's reply asks this too
        seconds = time.perf_counter() - began
        rate = 3 * len(text.encode()) / seconds / 1e6
        out.append(f"| ctx_index, semantic {'on' if on else 'off'} | {rate:.1f} MB/s |")
        if semantic is not None:
            semantic.close()
        db.close()
    return out


async def embedding_and_kernels(work: Path, skip_kernel: bool) -> list[str]:
    from context_kernel.app import AppHolder
    from context_kernel.execution.requests import ExecuteRequest, SessionRef
    from context_kernel.settings import Settings

    text = "\n\n".join(p.read_text() for p in sorted((HERE / "retrieval" / "corpus").iterdir())
                       if p.suffix in (".md", ".rst"))[:60_000]
    settings = Settings(home=work / "home", project_dir=work, base_env=dict(os.environ), semantic=True)
    session = SessionRef(id="bench", client="bench")
    out = []
    async with AppHolder(settings) as holder:
        app = await holder.get()
        semantic = app._resources.semantic
        assert semantic is not None, "the semantic extra is not installed"

        async def warm(n: int) -> list[float]:
            times = []
            for _ in range(n):
                began = time.perf_counter()
                await app.execution.execute(ExecuteRequest(code="1 + 1", language="python"), session)
                times.append(time.perf_counter() - began)
            return times

        if not skip_kernel:
            await warm(3)  # kernel start
            idle = await warm(30)
        busy_began = time.perf_counter()
        await app.knowledge.index(content=text, source="corpus", session_id="bench")
        if not skip_kernel:
            busy = await warm(30)
        busy_wall = time.perf_counter() - busy_began
        if not skip_kernel:
            state = semantic.worker.progress().state
            out.append(f"| python kernel warm call, idle | {ms(idle)} ms |")
            out.append(f"| python kernel warm call, while embedding ({state} at the end) | {ms(busy)} ms | "
                       f"{statistics.median(busy) / statistics.median(idle):.2f}× idle |")
        # Bounded: on a saturated machine a nice-19 thread may get little CPU; report what it did.
        began = time.perf_counter()
        finished = await anyio.to_thread.run_sync(semantic.worker.wait_idle, EMBED_WAIT_S)
        wall = time.perf_counter() - began + busy_wall
        worker = semantic.worker
        rate = worker.embedded_bytes / 1e3 / max(worker.busy_seconds, 1e-9)
        out.append(f"| background embedding, nice 19 | {rate:.1f} KB/s while busy, "
                   f"{worker.embedded_bytes / 1e3 / wall:.1f} KB/s wall | "
                   f"{worker.embedded_bytes // 1000} of {len(text.encode()) // 1000} KB "
                   f"{'(all)' if finished else f'in {wall:.0f} s (stopped waiting)'} |")
    return out


def model_files(name: str) -> ModelFiles:
    return static_model() if name == "static" else default_model()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--skip-kernel", action="store_true", help="leave out the kernel latency part")
    ap.add_argument("--parts", default="index,embedding,sizes", help="which parts to run")
    ap.add_argument("--model", choices=["static", "minilm"], default="static",
                    help="the default static table, or all-MiniLM-L6-v2 (the semantic-transformer extra)")
    args = ap.parse_args()
    rng = np.random.default_rng(13)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        parts = args.parts.split(",")
        if "index" in parts:
            print("## ctx_index call throughput\n\n| call | throughput |\n|---|---|")
            print("\n".join(anyio.run(index_throughput, work)), flush=True)
        if "embedding" in parts:
            print("\n## Background embedding and kernels\n\n| what | figure | |\n|---|---|---|")
            print("\n".join(anyio.run(embedding_and_kernels, work, args.skip_kernel)), flush=True)
        for size in (int(s) for s in args.sizes.split(",") if "sizes" in parts):
            db, repo, total = build(work / f"s{size}.sqlite3", size, replicate=False)
            semantic = SemanticRecall(db=db, files=model_files(args.model))
            semantic.encoder.load()
            windows, per_chunk = fill_vectors(db, semantic, rng)
            semantic.warm()  # as a server does at start: fusion only once the vectors are loaded
            texts = queries()
            qvecs = np.stack([semantic.encoder.embed_query(q) for q in texts])
            print(f"\n## {total} chunks, {windows} windows ({per_chunk:.2f} per chunk)\n")
            print("| vector scoring | median / p95 ms | top-10 overlap with exact | notes |\n|---|---|---|---|")
            print("\n".join(storage(db, semantic, qvecs)))
            print("\n| search (limit=2) | median / p95 ms |\n|---|---|")
            print("\n".join(latency(db, repo, semantic, texts)), flush=True)
            print("\n".join(anyio.run(service_latency, db, repo, semantic, work, texts)), flush=True)
            semantic.close()
            db.close()


if __name__ == "__main__":
    main()

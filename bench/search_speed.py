"""Knowledge-base speed: indexing throughput and search latency at 10,000 and 100,000 chunks.

    python bench/search_speed.py [--sizes 10000,100000]

The corpus is bench/retrieval/corpus (real documentation). Indexing is measured two ways:
one ctx_index call per document (a transaction each) and one ctx_index of the whole directory
(files batched into transactions of a few MB).
Since migration 004 a call returns once the porter index has the text; the trigram index
follows in a background catch-up (or before the next trigram search), so both figures are printed.
Targets from the issue: >= 10 MB/s indexing; median search < 10 ms at 100,000 chunks.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))

from context_kernel.knowledge.chunking import chunk_document  # noqa: E402
from context_kernel.knowledge.indexing import Indexer  # noqa: E402
from context_kernel.knowledge.search import search  # noqa: E402
from context_kernel.store.db import Database  # noqa: E402
from context_kernel.store.knowledge import KnowledgeRepository, SourceSpec  # noqa: E402

CORPUS = HERE / "retrieval" / "corpus"
# Every source is filed under one project, and searched both as a server does (scoped to its project)
# and unscoped: the difference is what scoping costs.
PROJECT = "/bench/project"
QUESTIONS = HERE / "retrieval" / "questions.jsonl"


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".md", ".rst", ".txt"))


def _timed_index(work: Path, name: str, project: Path, per_document: bool) -> tuple[float, float]:
    """Seconds until the indexing call returns (porter index), and for the trigram catch-up after it."""
    db = Database.open(work / f"{name}.sqlite3")
    repo = KnowledgeRepository(db.engine)
    indexer = Indexer(db=db, repo=repo, project_dir=project)
    began = time.perf_counter()
    if per_document:
        for p in corpus_files():
            # what one ctx_index(content=...) call does: one transaction per document
            repo.replace_sources([indexer.spec(p.stem, p.read_text(), p.name, "file", None, None, None)])
    else:
        labelled = [(p, f"docs/{p.name}") for p in sorted((project / "docs").iterdir()) if p.suffix in (".md", ".rst")]
        anyio.run(indexer.index_files, labelled, None)  # what ctx_index(path="docs") does per batch
    returned = time.perf_counter() - began
    repo.catch_up_trigram()  # what the server runs right after, in the background
    caught_up = time.perf_counter() - began - returned
    db.close()
    return returned, caught_up


def indexing_throughput(work: Path) -> tuple[float, list[tuple[str, float, float]]]:
    """MB/s per mode: (mode, until the call returns, until both indexes are complete)."""
    size_mb = sum(p.stat().st_size for p in corpus_files()) / 1e6
    project = work / "project"
    shutil.copytree(CORPUS, project / "docs")
    rows = []
    for mode, per_doc in (("one ctx_index call per document", True),
                          ("ctx_index of the directory (batched transactions)", False)):
        # best of three: the machine is shared and noisy
        runs = [_timed_index(work, f"{'doc' if per_doc else 'dir'}-{i}", project, per_doc) for i in range(3)]
        returned, caught_up = min(runs, key=lambda r: r[0] + r[1])
        rows.append((mode, size_mb / returned, size_mb / (returned + caught_up)))
    return size_mb, rows


def filler_files() -> list[Path]:
    """Real, varied text that exists offline: this venv's Python sources, the standard library, docs."""
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    files = sorted(site.rglob("*.py"))
    files += sorted(p for p in Path(sysconfig.get_paths()["stdlib"]).rglob("*.py") if "site-packages" not in p.parts)
    files += sorted(p for p in Path("/usr/share/doc").rglob("*") if p.suffix in (".md", ".txt", ".html"))
    return [f for f in files if f.is_file() and 200 < f.stat().st_size < 2_000_000]


def build(db_path: Path, chunks_wanted: int, replicate: bool) -> tuple[Database, KnowledgeRepository, int]:
    """The corpus once, then filler up to `chunks_wanted` chunks (or the corpus replicated)."""
    db = Database.open(db_path)
    repo = KnowledgeRepository(db.engine)
    docs = [(p.stem, chunk_document(p.read_text(), name=p.name)) for p in corpus_files()]
    total = 0
    if replicate:
        per_copy = sum(len(c) for _, c in docs)
        for copy in range(max(1, round(chunks_wanted / per_copy))):
            tag = f"copy{copy:04d}"
            specs = [SourceSpec(label=f"{stem}#{copy}", kind="file", project_dir=PROJECT, chunks=[
                type(c)(title=c.title, content=f"{c.content}\n{tag}", kind=c.kind) for c in chunks])
                for stem, chunks in docs]
            repo.replace_sources(specs)
            total += per_copy
        repo.catch_up_trigram()
        return db, repo, total
    repo.replace_sources([SourceSpec(label=stem, kind="file", chunks=chunks, project_dir=PROJECT)
                          for stem, chunks in docs])
    total = sum(len(c) for _, c in docs)
    batch: list[SourceSpec] = []
    for path in filler_files():
        if total >= chunks_wanted:
            break
        chunks = chunk_document(path.read_bytes().decode("utf-8", "replace"), name=path.name)
        chunks = chunks[: chunks_wanted - total]
        batch.append(SourceSpec(label=str(path), kind="file", chunks=chunks, project_dir=PROJECT))
        total += len(chunks)
        if len(batch) >= 200:
            repo.replace_sources(batch)
            batch = []
    repo.replace_sources(batch)
    repo.catch_up_trigram()  # the server's background pass; latency is measured on a complete index
    return db, repo, total


def latency(repo: KnowledgeRepository, queries: list[str]) -> tuple[float, float]:
    for q in queries[:10]:
        search(repo, q, limit=3)  # warm the page cache
    times = []
    for q in queries:
        began = time.perf_counter()
        search(repo, q, limit=3)
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--replicate", action="store_true",
                        help="fill with copies of the corpus (worst case: every term 100x as common)")
    args = parser.parse_args()
    queries = [json.loads(line)["query"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="context-kernel-search-speed-") as tmp:
        work = Path(tmp)
        size_mb, rows = indexing_throughput(work)
        print(f"# Knowledge-base speed ({len(corpus_files())} documents, {size_mb:.2f} MB, best of 3)\n")
        print("| indexing | MB/s until ctx_index returns | MB/s until the trigram index is complete too |")
        print("|---|---:|---:|")
        for mode, returned, complete in rows:
            print(f"| {mode} | {returned:.1f} | {complete:.1f} |")
        print("\n| chunks indexed | search median ms (scoped to its project, as served) | p95 ms | "
              "unscoped median ms | scoped / unscoped |\n|---:|---:|---:|---:|---:|")
        for size in [int(s) for s in args.sizes.split(",")]:
            db, repo, chunks = build(work / f"size-{size}.sqlite3", size, args.replicate)
            scoped = KnowledgeRepository(db.engine, project=PROJECT)
            median, p95 = latency(scoped, queries)
            unscoped, _ = latency(repo, queries)
            print(f"| {chunks:,} | {median:.1f} | {p95:.1f} | {unscoped:.1f} | {median / unscoped:.2f} |", flush=True)
            db.close()
        print("\nTargets: >= 10 MB/s indexing; median search < 10 ms at 100,000 chunks.")


if __name__ == "__main__":
    main()

"""Retrieval quality of the knowledge base's search next to a plain BM25 baseline, on a fixed corpus.

Loads `corpus/` (real package documentation, see corpus/SOURCES.md) and `questions.jsonl`,
indexes the corpus twice and asks every question to both:
  * baseline: one FTS5 table, default tokenizer, the question's words OR-ed, bm25 (baseline.py);
  * ours: `context_kernel.knowledge.bench_api.open_bench_index` (a fresh database in a temp dir).
A question is answered at rank k when the k-th result comes from the question's source file AND
its content contains the expected answer verbatim. Prints (Markdown, to stdout) recall@1,
recall@3, recall@10 and MRR over the top 10 for both, recall@3 per question tag, ours' indexing
throughput and query latency, then the questions ours misses in its top 3. Fully offline.

Usage (repo root, venv active):
    python bench/retrieval/evaluate.py                 # both sides (baseline only if ours is missing)
    python bench/retrieval/evaluate.py --baseline-misses
    python bench/retrieval/evaluate.py --json results.json
Exit status 0 even when targets are missed (it only measures); 2 when the questions are invalid.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# Run as a script from anywhere: its sibling modules are found through the path set just above.
from baseline import CHUNKER, BaselineIndex, chunk  # noqa: E402
from check_questions import check, corpus_files, load_questions  # noqa: E402

TOP = 10
TARGET_RECALL_AT_3 = 0.9


@dataclass
class Doc:
    stem: str  # the source label both indexes use, and what questions name
    name: str  # file name, for the chunker's choice (markdown, rst, ...)
    text: str


@dataclass
class Outcome:
    qid: str
    rank: int | None  # 1-based rank of the first hit, None when not in the top 10
    top: list[tuple[str, str]]  # (source, title) of the first results, for the miss report
    seconds: float


@dataclass
class SideResult:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)
    index_seconds: float = 0.0
    chunks: int | None = None
    error: str | None = None

    def recall(self, k: int, ids: set[str] | None = None) -> float:
        sel = [o for o in self.outcomes if ids is None or o.qid in ids]
        return sum(1 for o in sel if o.rank is not None and o.rank <= k) / len(sel) if sel else 0.0

    def mrr(self) -> float:
        return sum(1 / o.rank for o in self.outcomes if o.rank) / len(self.outcomes) if self.outcomes else 0.0


def load_docs() -> list[Doc]:
    return [Doc(stem, p.name, p.read_text(encoding="utf-8")) for stem, p in corpus_files().items()]


def first_hit(question: dict, results: list[tuple[str, str, str]]) -> int | None:
    for i, (source, _title, content) in enumerate(results, 1):
        if source == question["source"] and question["answer"] in content:
            return i
    return None


def ask_all(questions: list[dict], search: Callable[[str], list[tuple[str, str, str]]]) -> list[Outcome]:
    out = []
    for q in questions:
        t0 = time.perf_counter()
        results = search(q["query"])
        dt = time.perf_counter() - t0
        out.append(Outcome(q["id"], first_hit(q, results), [(s, t) for s, t, _ in results[:3]], dt))
    return out


# -- the two sides -----------------------------------------------------------------------------


def unreachable(docs: list[Doc], questions: list[dict]) -> list[str]:
    """Questions whose answer no single chunk contains (the chunker split it): no side can hit them."""
    chunks = {d.stem: [c for _, c in chunk(d.text, d.name)] for d in docs}
    return [q["id"] for q in questions if not any(q["answer"] in c for c in chunks.get(q["source"], []))]


def run_baseline(docs: list[Doc], questions: list[dict]) -> SideResult:
    side = SideResult("baseline (FTS5 bm25, one table)")
    index = BaselineIndex()
    t0 = time.perf_counter()
    side.chunks = sum(index.add(d.stem, chunk(d.text, d.name)) for d in docs)
    side.index_seconds = time.perf_counter() - t0
    side.outcomes = ask_all(questions, lambda query: index.search(query, TOP))
    index.close()
    return side


def load_ours():
    """`open_bench_index`, or None with the reason when the knowledge base is not importable yet."""
    try:
        from context_kernel.knowledge.bench_api import open_bench_index
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available yet"
        return None, f"{type(exc).__name__}: {exc}"
    return open_bench_index, None


async def _run_ours(open_bench_index, docs: list[Doc], questions: list[dict], db_dir: Path,
                    semantic: bool = False) -> SideResult:
    side = SideResult("ours, hybrid (semantic extra)" if semantic else "ours (context_kernel.knowledge)")
    async with open_bench_index(db_dir / "bench.sqlite3", **({"semantic": True} if semantic else {})) as kb:
        t0 = time.perf_counter()
        for d in docs:
            await kb.index_text(d.stem, d.text, d.name)
        side.index_seconds = time.perf_counter() - t0
        if semantic:
            await kb.wait_embedded()
        for q in questions:
            t1 = time.perf_counter()
            hits = await kb.search(q["query"], TOP)
            dt = time.perf_counter() - t1
            results = [(h.source, h.title, h.content) for h in hits][:TOP]
            side.outcomes.append(Outcome(q["id"], first_hit(q, results), [(s, t) for s, t, _ in results[:3]], dt))
    return side


def run_ours(open_bench_index, docs: list[Doc], questions: list[dict], keep_db: Path | None,
             semantic: bool = False) -> SideResult:
    if keep_db is not None:
        keep_db.mkdir(parents=True, exist_ok=True)
        (keep_db / "bench.sqlite3").unlink(missing_ok=True)
        return anyio.run(_run_ours, open_bench_index, docs, questions, keep_db, semantic)
    with tempfile.TemporaryDirectory(prefix="ck-retrieval-") as tmp:
        return anyio.run(_run_ours, open_bench_index, docs, questions, Path(tmp), semantic)


# -- report ------------------------------------------------------------------------------------


def _ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.1f}"


def report(sides: list[SideResult], questions: list[dict], docs: list[Doc], *, baseline_misses: bool) -> str:
    total_bytes = sum(len(d.text.encode()) for d in docs)
    out = [
        "# Retrieval benchmark",
        "",
        (
            f"{len(docs)} documents, {total_bytes / 1e6:.2f} MB; {len(questions)} questions; "
            f"hit = result from the question's source whose content contains the answer; top {TOP}. "
            f"Baseline chunker: {CHUNKER}."
        ),
        "",
    ]
    split = unreachable(docs, questions)
    if split:
        out += [f"Answers that chunker splits across chunks (unreachable for a side using it): {', '.join(split)}.", ""]
    out += [
        "| system | recall@1 | recall@3 | recall@10 | MRR@10 | chunks | index s | query ms (median / p95) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in sides:
        if s.error:
            out.append(f"| {s.name} | not available: {s.error} |||||||")
            continue
        times = [o.seconds for o in s.outcomes]
        med = f"{statistics.median(times) * 1000:.1f}" if times else "-"
        out.append(
            f"| {s.name} | {s.recall(1):.3f} | {s.recall(3):.3f} | {s.recall(TOP):.3f} | {s.mrr():.3f} "
            f"| {s.chunks if s.chunks is not None else '-'} | {s.index_seconds:.2f} | {med} / {_ms(times, 0.95)} |"
        )
    ready = [s for s in sides if not s.error]
    by_tag: dict[str, set[str]] = defaultdict(set)
    for q in questions:
        for t in q.get("tags", []):
            by_tag[t].add(q["id"])
    if by_tag and ready:
        out += ["", "recall@3 by question tag:", ""]
        out.append("| tag | n | " + " | ".join(s.name.split(" (")[0] for s in ready) + " |")
        out.append("|---|---:|" + "---:|" * len(ready))
        for tag in sorted(by_tag):
            ids = by_tag[tag]
            out.append(f"| {tag} | {len(ids)} | " + " | ".join(f"{s.recall(3, ids):.3f}" for s in ready) + " |")

    ours = next((s for s in sides if s.name.startswith("ours")), None)
    if ours is not None and not ours.error:
        mbps = total_bytes / 1e6 / ours.index_seconds if ours.index_seconds else float("inf")
        verdict = "met" if ours.recall(3) >= TARGET_RECALL_AT_3 else "NOT met"
        secs = ours.index_seconds
        line = f"Ours: indexing throughput {mbps:.2f} MB/s ({total_bytes / 1e6:.2f} MB in {secs:.2f} s); "
        out += ["", line + f"recall@3 target {TARGET_RECALL_AT_3} {verdict}."]
    for s in sides:
        if s.error or (s is not ours and not baseline_misses):
            continue
        out += ["", _misses(s, questions)]
    return "\n".join(out)


def _misses(side: SideResult, questions: list[dict]) -> str:
    by_id = {q["id"]: q for q in questions}
    missed = [o for o in side.outcomes if o.rank is None or o.rank > 3]
    lines = [f"## Misses of {side.name} (not in the top 3): {len(missed)}", ""]
    if not missed:
        return "\n".join(lines + ["none"])
    lines += ["| id | query | want | rank | top results (source: title) |", "|---|---|---|---:|---|"]
    for o in missed:
        q = by_id[o.qid]
        got = "; ".join(f"{src}: {title[:50]}" for src, title in o.top) or "(nothing)"

        def cell(s: str) -> str:
            return s.replace("|", "\\|").replace("\n", " ")

        lines.append(f"| {o.qid} | {cell(q['query'])} | {q['source']} | {o.rank or '-'} | {cell(got)} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-misses", action="store_true", help="also list the baseline's misses")
    ap.add_argument("--keep-db", type=Path, help="build our index in this directory and keep it")
    ap.add_argument("--json", type=Path, help="also write per-question ranks to this file")
    ap.add_argument("--semantic", action="store_true",
                    help="also run ours with semantic recall (needs the semantic extra; embeds the corpus first)")
    args = ap.parse_args()

    docs = load_docs()
    questions = load_questions()
    errors, _ = check(questions, corpus_files())
    if errors:
        print("questions.jsonl is invalid (run check_questions.py):", *errors, sep="\n  ", file=sys.stderr)
        return 2

    print(f"baseline: indexing {len(docs)} documents ...", file=sys.stderr)
    sides = [run_baseline(docs, questions)]
    open_bench_index, why = load_ours()
    if open_bench_index is None:
        print(f"ours: not available yet ({why}); baseline only", file=sys.stderr)
        sides.append(SideResult("ours (context_kernel.knowledge)", error=f"import failed ({why})"))
    else:
        print("ours: indexing and searching ...", file=sys.stderr)
        try:
            sides.append(run_ours(open_bench_index, docs, questions, args.keep_db))
            if args.semantic:
                print("ours, hybrid: indexing, embedding (minutes) and searching ...", file=sys.stderr)
                sides.append(run_ours(open_bench_index, docs, questions, None, semantic=True))
        except Exception as exc:  # noqa: BLE001 - report the baseline anyway
            traceback.print_exc()
            sides.append(SideResult("ours (context_kernel.knowledge)", error=f"{type(exc).__name__}: {exc}"))

    print(report(sides, questions, docs, baseline_misses=args.baseline_misses))
    if args.json:
        args.json.write_text(json.dumps({
            s.name: {"error": s.error, "ranks": {o.qid: o.rank for o in s.outcomes},
                     "recall@1": s.recall(1), "recall@3": s.recall(3), "mrr": s.mrr()}
            for s in sides
        }, indent=2) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

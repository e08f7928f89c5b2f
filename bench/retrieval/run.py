"""Blind retrieval evaluation in the user's conditions: ours and the reference side by side, one run.

    .venv/bin/python bench/retrieval/run.py --corpus apiref-md=DIR [--corpus NAME=DIR ...] \
        [--split test] [--engines ours,reference] [--conditions 10s,settled] [--json OUT]

For every corpus and engine: one server process (stdio, the SDK's client) indexes the corpus —
`ctx_index(path=...)` for files, `ctx_fetch_and_index` page by page from a local HTTP server for
HTML sites — and keeps running, as it would for a user. Ten seconds after the last index call
returned, a copy of its index is taken ("10s"); when its background work is done (ours: every
section embedded), another ("settled"). Each question is then asked of a FRESH server process
started on a copy of that index: `ctx_search(queries=[question], limit=2)`, the first call of that
process. The reference does no background work, so its one copy serves both conditions.

Printed per corpus, engine and condition (and per question kind): answer-in-reply (the answer
span, case and markdown marks aside, is in the reply text), both spans of multi-concept questions,
right file among the hits and first, median reply bytes, median first-search time. Report the
test split; tune on dev. Corpora: `corpora/<name>/build.py OUTDIR` builds one (see its README).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engines import Engine, Ours, Reference, copy_home
from questions import Corpus, Question, holds, open_corpus

TEN_SECONDS = 10.0
CALL_TIMEOUT_S = 600.0


@dataclass
class Outcome:
    corpus: str
    engine: str
    condition: str
    id: str
    kind: str
    in_reply: bool
    all_spans: bool
    right_file: bool
    right_first: bool
    reply_bytes: int
    first_ms: float
    reply: str


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


class Site:
    """The corpus's HTML pages on 127.0.0.1, as a documentation site is served."""

    def __init__(self, root: Path) -> None:
        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def right(engine: Engine, label: str, corpus: Corpus, file: str) -> bool:
    label = label.strip()
    return label == file or label.endswith("/" + file)


async def index_corpus(engine: Engine, corpus: Corpus, home: Path, project: Path, work: Path,
                       conditions: list[str], backlog_timeout: float) -> dict[str, Any]:
    """Index in one long-lived server; snapshot its index 10 s after indexing and once settled."""
    stats: dict[str, Any] = {}
    async with stdio_client(engine.params(home, project)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        started = time.perf_counter()
        if corpus.html:
            with Site(corpus.root) as base:
                for page in corpus.files:
                    with anyio.fail_after(CALL_TIMEOUT_S):
                        reply = text_of(await session.call_tool("ctx_fetch_and_index",
                                                                {"url": base + page, "source": page}))
                    if "error" in reply.lower()[:200] and "indexed" not in reply.lower():
                        print(f"  {page}: {reply[:200]}", file=sys.stderr)
        else:
            with anyio.fail_after(CALL_TIMEOUT_S):
                reply = text_of(await session.call_tool("ctx_index", {"path": str(project), "maxFiles": 100000}))
            print(f"  ctx_index: {reply[:300]}", file=sys.stderr)
        stats["index_s"] = time.perf_counter() - started
        done = time.monotonic()
        print(f"  {engine.name}: indexed {corpus.name} in {stats['index_s']:.1f} s", file=sys.stderr)
        if "10s" in conditions:
            await anyio.sleep(max(0.0, done + TEN_SECONDS - time.monotonic()))
            engine.snapshot(home, work / "snap-10s")
        if "settled" in conditions:
            if isinstance(engine, Ours) and engine.semantic:  # words only: nothing runs in the background
                stats["settle_s"] = await wait_settled(engine, home, backlog_timeout, done)
            engine.snapshot(home, work / "snap-settled")
    return stats


async def wait_settled(engine: Ours, home: Path, timeout: float, since: float) -> float | None:
    """Seconds from the end of indexing until the server's background work is done (None: not within timeout)."""
    from backlog import pending_sections

    deadline = since + timeout
    while time.monotonic() < deadline:
        left = pending_sections(engine.databases(home)[0])
        if left == 0:
            return time.monotonic() - since
        await anyio.sleep(2.0)
    print(f"  not settled within {timeout:.0f} s", file=sys.stderr)
    return None


async def ask(engine: Engine, corpus: Corpus, q: Question, snapshot: Path, project: Path, scratch: Path,
              condition: str) -> Outcome:
    home = scratch / "qhome"
    copy_home(engine, snapshot, home)
    async with stdio_client(engine.params(home, project)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        started = time.perf_counter()
        with anyio.fail_after(CALL_TIMEOUT_S):
            reply = text_of(await session.call_tool("ctx_search", {"queries": [q.question], "limit": 2}))
        ms = (time.perf_counter() - started) * 1000
    labels = engine.sources(reply)
    spans = [q.answer, *(a for _, a in q.also)]
    return Outcome(corpus.name, engine.name, condition, q.id, q.kind, holds(reply, q.answer),
                   all(holds(reply, s) for s in spans), any(right(engine, lb, corpus, q.file) for lb in labels),
                   bool(labels) and right(engine, labels[0], corpus, q.file), len(reply.encode()), ms, reply)


async def evaluate(corpora: list[Corpus], engines: list[Engine], split: str, conditions: list[str],
                   backlog_timeout: float, keep: Path | None) -> tuple[list[Outcome], dict[str, Any]]:
    outcomes: list[Outcome] = []
    stats: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ck-retrieval-") as tmp:
        root = keep or Path(tmp)
        for corpus in corpora:
            questions = [q for q in corpus.questions if split == "all" or q.split == split]
            for engine in engines:
                work = root / corpus.name / engine.name
                if work.exists():
                    shutil.rmtree(work)
                home, project = work / "home", work / "project"
                home.mkdir(parents=True)
                if corpus.html:
                    project.mkdir()
                else:
                    shutil.copytree(corpus.root, project)
                # The reference does nothing in the background: one copy serves both conditions.
                conds = conditions if isinstance(engine, Ours) else ["settled"]
                stats[f"{corpus.name}/{engine.name}"] = await index_corpus(engine, corpus, home, project, work,
                                                                            conds, backlog_timeout)
                for condition in conds:
                    snapshot = work / f"snap-{condition}"
                    for n, q in enumerate(questions):
                        o = await ask(engine, corpus, q, snapshot, project, work, condition)
                        outcomes.append(o)
                        print(f"  [{engine.name} {condition} {n + 1}/{len(questions)}] {q.id}: "
                              f"{'hit' if o.in_reply else 'miss'} {o.reply_bytes} B {o.first_ms:.0f} ms",
                              file=sys.stderr)
                    if condition == "settled" and not isinstance(engine, Ours) and "10s" in conditions:
                        outcomes += [Outcome(**{**asdict(o), "condition": "10s"}) for o in outcomes
                                     if o.corpus == corpus.name and o.engine == engine.name]
    return outcomes, stats


def table(outcomes: list[Outcome]) -> str:
    groups: dict[tuple[str, str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.corpus, o.condition, o.engine)].append(o)
        groups[("ALL", o.condition, o.engine)].append(o)
    lines = ["| corpus | condition | engine | n | answer in reply | multi: all spans | right file | right first | "
             "median reply B | median first search ms | " + " | ".join(KIND_COLUMNS) + " |",
             "|" + "---|" * (10 + len(KIND_COLUMNS))]
    for (corpus, condition, engine), os_ in sorted(groups.items(), key=lambda kv: (kv[0][0] == "ALL", kv[0])):
        n = len(os_)
        multi = [o for o in os_ if o.kind == "multi-concept"]

        def rate(xs: list[Outcome], attr: str) -> str:
            return f"{sum(getattr(o, attr) for o in xs) / len(xs):.2f}" if xs else "–"

        per_kind = [rate([o for o in os_ if o.kind == k], "in_reply") for k in KIND_COLUMNS]
        lines.append(f"| {corpus} | {condition} | {engine} | {n} | {rate(os_, 'in_reply')} | "
                     f"{rate(multi, 'all_spans')} | {rate(os_, 'right_file')} | {rate(os_, 'right_first')} | "
                     f"{statistics.median(o.reply_bytes for o in os_):.0f} | "
                     f"{statistics.median(o.first_ms for o in os_):.0f} | " + " | ".join(per_kind) + " |")
    return "\n".join(lines)


KIND_COLUMNS = ["paraphrase", "identifier", "code", "typo", "multi-concept", "error"]


def ratios(outcomes: list[Outcome]) -> str:
    lines = []
    for condition in sorted({o.condition for o in outcomes}):
        ours = [o for o in outcomes if o.engine == "ours" and o.condition == condition]
        ref = [o for o in outcomes if o.engine == "reference" and o.condition == condition]
        if not ours or not ref:
            continue
        a = sum(o.in_reply for o in ours) / len(ours)
        b = sum(o.in_reply for o in ref) / len(ref)
        bytes_ratio = statistics.median(o.reply_bytes for o in ours) / max(1, statistics.median(
            o.reply_bytes for o in ref))
        lines.append(f"{condition}: answer in reply ours {a:.3f} vs reference {b:.3f} (difference {a - b:+.3f}); "
                     f"median reply bytes ours/reference {bytes_ratio:.2f}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", required=True, metavar="NAME=DIR",
                    help="a corpus under corpora/ and the directory its build.py built")
    ap.add_argument("--split", default="test", choices=["dev", "test", "all"])
    ap.add_argument("--engines", default="ours,reference")
    ap.add_argument("--conditions", default="10s,settled")
    ap.add_argument("--lexical", action="store_true", help="ours with CONTEXT_KERNEL_SEMANTIC=0 as well")
    ap.add_argument("--settle-timeout", type=float, default=3600.0)
    ap.add_argument("--reference-dir", type=Path, default=Path(tempfile.gettempdir()) / "context-mode-ref")
    ap.add_argument("--only", help="comma-separated question ids (debugging)")
    ap.add_argument("--keep", type=Path, help="keep the indexes and snapshots here")
    ap.add_argument("--json", type=Path, help="write every outcome (with its reply) here")
    args = ap.parse_args()
    corpora = []
    for spec in args.corpus:
        name, _, where = spec.partition("=")
        corpus = open_corpus(name, Path(where))
        if args.only:
            wanted = set(args.only.split(","))
            corpus = Corpus(corpus.name, [q for q in corpus.questions if q.id in wanted], corpus.root, corpus.html,
                            corpus.files)
        corpora.append(corpus)
    engines: list[Engine] = []
    for name in args.engines.split(","):
        if name == "ours":
            engines.append(Ours())
            if args.lexical:
                engines.append(Ours(name="ours-lexical", semantic=False))
        elif name == "reference":
            ref = Reference(install_dir=args.reference_dir)
            ref.install()
            engines.append(ref)
    outcomes, stats = anyio.run(evaluate, corpora, engines, args.split, args.conditions.split(","),
                                args.settle_timeout, args.keep)
    print(table(outcomes))
    print()
    print(ratios(outcomes))
    print(json.dumps(stats, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"stats": stats, "outcomes": [asdict(o) for o in outcomes]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

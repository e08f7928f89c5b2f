"""Answer-in-reply and recall of ctx_search on the search evaluation, lexical next to hybrid (semantic).

    python bench/search_eval/run_search.py QUESTIONS.jsonl --corpus DIR          # a built corpus
    python bench/search_eval/run_search.py QUESTIONS.jsonl --build-corpus OUT    # build_corpus.py first
    python bench/search_eval/run_search.py QUESTIONS.jsonl --corpus DIR --grid   # fusion settings (dev only!)

It starts the server through the real MCP client (in memory), `ctx_index`es the corpus directory,
embeds all of it with the server's embedder code (here at normal priority: see `embed_now`), then
starts the server again (semantic on) and asks every question
with `ctx_search(queries=[q], limit=2)`, each in its own session (a chunk sent for one question is
never "already sent" for the next). Lexical is the same database searched by a second server with
semantic switched off (CONTEXT_KERNEL_SEMANTIC=0), so both sides see the same chunks.

Per question kind and overall it prints:
  * answer-in-reply: the answer span (whitespace-normalised) occurs in the reply text;
  * recall@1/3/10: the gold file is among the sources of the first k hits (a second call with
    limit=10 for @10; hits name their source after "— source: ");
and a paired exact sign test (McNemar) of hybrid against lexical on answer-in-reply.

Tune only on the dev split (`--grid`); report the test split once, with the chosen defaults.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "server"))

from mcp.client.client import Client  # noqa: E402

from context_kernel.knowledge import fusion  # noqa: E402
from context_kernel.settings import Settings  # noqa: E402
from context_kernel.tools.server import create_server  # noqa: E402

SESSION_KEY = "context-kernel/session"
SOURCE = re.compile(r"^### .* — source: (.+)$", re.M)
EMBED_TIMEOUT_S = 3600.0
LABEL = "corpus"


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


@dataclass
class Outcome:
    qid: str
    kind: str
    in_reply: bool
    rank: int | None
    seconds: float


@dataclass
class Run:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def gold_rank(reply: str, gold: str) -> int | None:
    for rank, source in enumerate(SOURCE.findall(reply), start=1):
        if source.strip().endswith("/" + gold) or source.strip() == gold:
            return rank
    return None


async def ask_all(client: Client, questions: list[dict[str, str]], tag: str) -> Run:
    run = Run(tag)
    nonce = uuid.uuid4().hex[:8]  # a kept database remembers what earlier runs' sessions were sent
    for n, q in enumerate(questions):
        session = {SESSION_KEY: f"{tag}-{nonce}-{n}"}
        started = time.perf_counter()
        reply = text_of(await client.call_tool("ctx_search", {"queries": [q["question"]], "limit": 2}, meta=session))
        seconds = time.perf_counter() - started
        wide = text_of(await client.call_tool("ctx_search", {"queries": [q["question"]], "limit": 10},
                                              meta={SESSION_KEY: f"{tag}-{nonce}-{n}-wide"}))
        run.outcomes.append(Outcome(q["id"], q["kind"], norm(q["answer"]) in norm(reply), gold_rank(wide, q["file"]),
                                    seconds))
    return run


def settings_for(home: Path, project: Path, semantic: bool) -> Settings:
    return Settings(home=home, project_dir=project, semantic=semantic, base_env={})


async def embed_now(settings: Settings) -> float:
    """Embed whatever the index lacks with the server's own code, at normal priority, and wait for it.

    The server's embedder runs at nice 19 and on a busy shared machine gets almost no CPU; the
    benchmark cannot wait for that, so it runs the same worker here without lowering its priority.
    """
    from context_kernel.semantic.service import SemanticRecall
    from context_kernel.semantic.status import probe
    from context_kernel.store.db import Database

    status = probe(True, settings.semantic_model)
    assert status.files is not None, status.detail
    db = Database.open(settings.db_path)
    semantic = SemanticRecall(db=db, files=status.files, nice=0)
    try:
        started = time.monotonic()
        semantic.start()
        if not await anyio.to_thread.run_sync(semantic.worker.wait_idle, EMBED_TIMEOUT_S):
            raise TimeoutError("embedding did not finish")
        worker = semantic.worker
        if worker.busy_seconds:
            print(f"embedder: {worker.embedded_bytes / 1e3 / worker.busy_seconds:.1f} KB/s busy", file=sys.stderr)
        return time.monotonic() - started
    finally:
        semantic.close()
        db.close()


async def evaluate(questions: list[dict[str, str]], corpus: Path, grid: bool, keep: Path | None) -> list[Run]:
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = keep or Path(tmp)
        project, home = root / "project", root / "home"
        reuse = (project / LABEL).is_dir() and (home / "context-kernel.sqlite3").is_file()
        if not reuse:
            project.mkdir(parents=True)
            shutil.copytree(corpus, project / LABEL)  # inside the project: ctx_index refuses paths that leave it
        hybrid = settings_for(home, project, semantic=True)
        if not reuse:
            async with Client(create_server(hybrid)) as client:
                started = time.perf_counter()
                reply = text_of(await client.call_tool("ctx_index", {"path": LABEL, "maxFiles": 100000}))
                print(f"ctx_index: {time.perf_counter() - started:.2f} s — {reply}", file=sys.stderr)
        print(f"embedded in {await embed_now(hybrid):.0f} s more", file=sys.stderr)
        async with Client(create_server(hybrid)) as client:
            if grid:
                # The default is convex fusion: its one weight (alpha, the cosine's share), then RRF for comparison.
                for alpha in (0.3, 0.4, 0.5, 0.6, 0.7):
                    fusion.DEFAULT_FUSION = replace(fusion.DEFAULT_FUSION, method="convex", alpha=alpha)
                    runs.append(await ask_all(client, questions, f"hybrid-convex-a{alpha}"))
                    print(summary_line(runs[-1]), file=sys.stderr)
                for k in (10, 60):
                    fusion.DEFAULT_FUSION = replace(fusion.DEFAULT_FUSION, method="rrf", k=k)
                    runs.append(await ask_all(client, questions, f"hybrid-rrf-k{k}"))
                    print(summary_line(runs[-1]), file=sys.stderr)
            else:
                runs.append(await ask_all(client, questions, "hybrid"))
        async with Client(create_server(settings_for(home, project, semantic=False))) as client:
            runs.insert(0, await ask_all(client, questions, "lexical"))
    return runs


def summary_line(run: Run) -> str:
    n = len(run.outcomes)
    air = sum(o.in_reply for o in run.outcomes) / n
    return f"{run.name}: answer-in-reply {air:.3f}"


def sign_test(a: list[bool], b: list[bool]) -> tuple[int, int, float]:
    """Exact two-sided McNemar (sign) test on paired outcomes: (b only, a only, p)."""
    b_only = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    n = a_only + b_only
    if n == 0:
        return b_only, a_only, 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1)) / 2 ** n
    return b_only, a_only, min(1.0, 2 * tail)


def report(runs: list[Run]) -> str:
    kinds = sorted({o.kind for o in runs[0].outcomes})
    lines = ["| run | kind | n | answer-in-reply | recall@1 | recall@3 | recall@10 | median ms |",
             "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        groups: dict[str, list[Outcome]] = defaultdict(list)
        for o in run.outcomes:
            groups[o.kind].append(o)
        for kind in [*kinds, "all"]:
            os_ = run.outcomes if kind == "all" else groups[kind]
            n = len(os_)

            def at(k: int, os_: list[Outcome] = os_) -> float:
                return sum(o.rank is not None and o.rank <= k for o in os_) / len(os_)

            ms = sorted(o.seconds for o in os_)[len(os_) // 2] * 1000
            lines.append(f"| {run.name} | {kind} | {n} | {sum(o.in_reply for o in os_) / n:.3f} | {at(1):.3f} | "
                         f"{at(3):.3f} | {at(10):.3f} | {ms:.0f} |")
    base = [o.in_reply for o in runs[0].outcomes]
    lines.append("")
    for run in runs[1:]:
        better, worse, p = sign_test(base, [o.in_reply for o in run.outcomes])
        lines.append(f"{run.name} vs {runs[0].name} (answer-in-reply, exact sign test): {better} questions gained, "
                     f"{worse} lost, p = {p:.4f}")
    return "\n".join(lines)


@contextmanager
def corpus_dir(args: argparse.Namespace) -> Iterator[Path]:
    if args.corpus:
        yield Path(args.corpus)
        return
    builder = Path(args.builder or HERE / "build_corpus.py")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.build_corpus or tmp)
        subprocess.run([sys.executable, str(builder), str(out)], check=True, stdout=sys.stderr)
        yield out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("questions", help="questions-*.jsonl (id, kind, question, answer, file)")
    ap.add_argument("--corpus", help="a corpus directory built by build_corpus.py")
    ap.add_argument("--build-corpus", help="build the corpus into this directory first (default: a temp dir)")
    ap.add_argument("--builder", help="build_corpus.py to use (default: the one beside this script)")
    ap.add_argument("--grid", action="store_true", help="also try fusion settings (for the dev split only)")
    ap.add_argument("--json", help="write the per-question outcomes here")
    ap.add_argument("--keep", help="keep the indexed project and database here; a later run with the same "
                    "directory reuses them (no re-indexing, no re-embedding: for tuning on dev)")
    args = ap.parse_args()
    questions = load(Path(args.questions))
    with corpus_dir(args) as corpus:
        runs = anyio.run(evaluate, questions, corpus, args.grid, Path(args.keep) if args.keep else None)
    print(report(runs))
    if args.json:
        Path(args.json).write_text(json.dumps({r.name: [o.__dict__ for o in r.outcomes] for r in runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

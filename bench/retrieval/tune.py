"""Fast in-process measurement on the DEV split, for choosing designs (run.py reports; this one tunes).

    .venv/bin/python bench/retrieval/tune.py --corpus apiref-md=DIR [...] [--semantic off|now|settled] \
        [--keep DIR] [--json OUT] [--split dev]

One server in memory (the SDK's in-memory client), each question in its own client session, so a
section sent for one question is never "already sent" for the next. The corpus is indexed once per
--keep directory and reused. `--semantic off`: words only; `now`: right after indexing, whatever
the index has then (the user's first seconds); `settled`: after every background vector is in.
Numbers here are for tuning only: report the test split with run.py, in fresh processes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import statistics
import sys
import time
import uuid
from dataclasses import asdict
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "server"))

from mcp.client.client import Client  # noqa: E402
from questions import Corpus, Question, holds, open_corpus  # noqa: E402
from run import Outcome, Site, table, text_of  # noqa: E402

from context_kernel.settings import Settings  # noqa: E402
from context_kernel.tools.server import create_server  # noqa: E402

SESSION_KEY = "context-kernel/session"
SOURCE_LINE = r"^### .* — source: (.+?)(?: \(same text in .*\))?$"


def settings_for(home: Path, project: Path, semantic: bool) -> Settings:
    return Settings(home=home, project_dir=project, semantic=semantic, base_env={})


async def index(corpus: Corpus, home: Path, project: Path) -> float:
    async with Client(create_server(settings_for(home, project, semantic=True))) as client:
        started = time.perf_counter()
        if corpus.html:
            with Site(corpus.root) as base:
                for page in corpus.files:
                    await client.call_tool("ctx_fetch_and_index", {"url": base + page, "source": page})
        else:
            reply = text_of(await client.call_tool("ctx_index", {"path": str(project), "maxFiles": 100000}))
            print(f"  {reply[:200]}", file=sys.stderr)
        return time.perf_counter() - started


async def settle(home: Path, project: Path) -> float:
    """Every background vector in, with the server's own code at normal priority."""
    sys.path.insert(0, str(HERE.parent / "search_eval"))
    from run_search import embed_now

    return await embed_now(settings_for(home, project, semantic=True))


async def ask_all(corpus: Corpus, questions: list[Question], home: Path, project: Path, semantic: bool,
                  tag: str) -> list[Outcome]:
    import re

    out = []
    nonce = uuid.uuid4().hex[:8]
    async with Client(create_server(settings_for(home, project, semantic))) as client:
        if semantic:  # the server loads its vectors at start; measure what it answers once they are in
            for attempt in range(120):
                probe = text_of(await client.call_tool("ctx_search", {"queries": ["warm up"]},
                                                       meta={SESSION_KEY: f"{nonce}-warm-{attempt}"}))
                if "ranked by words only" not in probe:
                    break
                await anyio.sleep(0.5)
        for n, q in enumerate(questions):
            started = time.perf_counter()
            reply = text_of(await client.call_tool("ctx_search", {"queries": [q.question], "limit": 2},
                                                   meta={SESSION_KEY: f"{nonce}-{n}"}))
            ms = (time.perf_counter() - started) * 1000
            labels = [m.strip() for m in re.findall(SOURCE_LINE, reply, re.M)]

            def right(label: str, q: Question = q) -> bool:
                return label == q.file or label.endswith("/" + q.file)

            spans = [q.answer, *(a for _, a in q.also)]
            out.append(Outcome(corpus.name, "ours", tag, q.id, q.kind, holds(reply, q.answer),
                               all(holds(reply, s) for s in spans), any(right(x) for x in labels),
                               bool(labels) and right(labels[0]), len(reply.encode()), ms, reply))
    return out


async def main_async(args: argparse.Namespace) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for spec in args.corpus:
        name, _, where = spec.partition("=")
        corpus = open_corpus(name, Path(where))
        questions = [q for q in corpus.questions if args.split == "all" or q.split == args.split]
        if args.only:
            questions = [q for q in questions if q.id in set(args.only.split(","))]
        root = args.keep / name
        home, project = root / "home", root / "project"
        if args.reindex and root.exists():
            shutil.rmtree(root)
        if not (home / "context-kernel.sqlite3").is_file():
            home.mkdir(parents=True, exist_ok=True)
            if corpus.html:
                project.mkdir(parents=True, exist_ok=True)
            else:
                shutil.copytree(corpus.root, project, dirs_exist_ok=True)
            print(f"{name}: indexed in {await index(corpus, home, project):.1f} s", file=sys.stderr)
        for mode in args.semantic.split(","):
            if mode == "settled":
                print(f"{name}: settled in {await settle(home, project):.0f} s more", file=sys.stderr)
            outcomes += await ask_all(corpus, questions, home, project, semantic=mode != "off", tag=mode)
            last = [o for o in outcomes if o.corpus == name and o.condition == mode]
            print(f"{name} {mode}: answer in reply {sum(o.in_reply for o in last) / len(last):.3f}, "
                  f"median {statistics.median(o.reply_bytes for o in last):.0f} B", file=sys.stderr)
    return outcomes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", required=True, metavar="NAME=DIR")
    ap.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    ap.add_argument("--semantic", default="off,now", help="comma-separated: off, now, settled")
    ap.add_argument("--keep", type=Path, default=Path("/tmp/ck-tune"))
    ap.add_argument("--reindex", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                    help="override a constant for this run, e.g. knowledge.reply.HIT_BYTES=900 (experiments)")
    args = ap.parse_args()
    for spec in args.set:
        target, _, value = spec.partition("=")
        module, _, attr = target.rpartition(".")
        setattr(importlib.import_module("context_kernel." + module), attr, type(getattr(
            importlib.import_module("context_kernel." + module), attr))(value))
    outcomes = anyio.run(main_async, args)
    print(table(outcomes))
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

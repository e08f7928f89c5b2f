"""The blind evaluation sets under `corpora/`: their questions, their corpus directories, scoring.

Each `corpora/<name>/` was written by a helper that never read the search code (its README says how):
`build.py OUTDIR` rebuilds the corpus from Debian/PyPI/npm packages, `questions.jsonl` holds the
questions (`id`, `kind`, `split`, `question`, `file`, `answer`, and `also` for multi-concept ones).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = HERE / "corpora"
KINDS = ("paraphrase", "identifier", "code", "typo", "multi-concept", "error")


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    split: str
    question: str
    file: str
    answer: str
    also: tuple[tuple[str, str], ...] = ()
    """(file, answer) of a multi-concept question's other concepts."""


@dataclass(frozen=True)
class Corpus:
    name: str
    questions: list[Question]
    root: Path
    """The built corpus directory."""
    html: bool = False
    """Pages served on 127.0.0.1 and fetched one by one (ctx_fetch_and_index), not indexed from disk."""
    files: list[str] = field(default_factory=list)


def load_questions(name: str) -> list[Question]:
    out = []
    for line in (CORPORA / name / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        also = tuple((a["file"], a["answer"]) for a in q.get("also", []))
        out.append(Question(q["id"], q["kind"], q["split"], q["question"], q["file"], q["answer"], also))
    return out


def corpus_names() -> list[str]:
    return sorted(p.name for p in CORPORA.iterdir() if (p / "questions.jsonl").is_file())


def open_corpus(name: str, root: Path) -> Corpus:
    manifest = json.loads((CORPORA / name / "manifest.json").read_text(encoding="utf-8"))
    files = sorted(manifest["files"])
    missing = [f for f in files if not (root / f).is_file()]
    if missing:
        raise SystemExit(f"{name}: {len(missing)} corpus files missing under {root} (first: {missing[0]}); "
                         f"build it: python3 {CORPORA / name / 'build.py'} {root}")
    return Corpus(name, load_questions(name), root, html=all(f.endswith(".html") for f in files), files=files)


# -- scoring --------------------------------------------------------------------------------------

_MARKS = re.compile(r"[`*_#>|\\]")


def strict(text: str) -> str:
    """Whitespace runs to one space: the span must be in the reply as written."""
    return re.sub(r"\s+", " ", text).strip()


def lenient(text: str) -> str:
    """Also case-folded, entities decoded and markdown marks dropped: a page converted to markdown
    writes `code` in backticks and **bold** in stars where the HTML had tags."""
    return re.sub(r"\s+", " ", _MARKS.sub("", html.unescape(text))).strip().casefold()


def holds(reply: str, answer: str) -> bool:
    return lenient(answer) in lenient(reply)

"""Check `questions.jsonl` against the corpus: every answer must occur verbatim in its source.

Rules checked for each line:
  * fields `id`, `query`, `source`, `answer` present; ids unique;
  * `source` names a corpus file (its stem: `py-httpx` for `corpus/py-httpx.md`);
  * `answer` is 15-80 characters, on one line, and occurs exactly in the source file;
  * the query does not contain the answer (questions are paraphrased, not copied).
Warnings (not failures): the answer occurs more than once in its file.

Usage: python bench/retrieval/check_questions.py   (exit status 1 on any failure)
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
QUESTIONS = HERE / "questions.jsonl"


def corpus_files() -> dict[str, Path]:
    return {p.stem: p for p in sorted(CORPUS.iterdir()) if p.is_file() and p.name != "SOURCES.md"}


def load_questions(path: Path = QUESTIONS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check(questions: list[dict], files: dict[str, Path]) -> tuple[list[str], list[str]]:
    errors: list[str] = []
    warnings: list[str] = []
    texts = {stem: p.read_text(encoding="utf-8") for stem, p in files.items()}
    ids = Counter(q.get("id") for q in questions)
    for dup in [i for i, n in ids.items() if n > 1]:
        errors.append(f"duplicate id {dup}")
    for q in questions:
        qid = q.get("id", "?")
        missing = [k for k in ("id", "query", "source", "answer") if not q.get(k)]
        if missing:
            errors.append(f"{qid}: missing {missing}")
            continue
        answer, source = q["answer"], q["source"]
        if source not in texts:
            errors.append(f"{qid}: unknown source {source!r}")
            continue
        if not 15 <= len(answer) <= 80:
            errors.append(f"{qid}: answer is {len(answer)} chars (want 15-80)")
        if "\n" in answer:
            errors.append(f"{qid}: answer spans lines")
        count = texts[source].count(answer)
        if count == 0:
            errors.append(f"{qid}: answer not found in {source}: {answer!r}")
        elif count > 1:
            warnings.append(f"{qid}: answer occurs {count}x in {source}")
        if answer.lower() in q["query"].lower():
            errors.append(f"{qid}: query contains the answer verbatim")
    return errors, warnings


def main() -> int:
    questions = load_questions()
    errors, warnings = check(questions, corpus_files())
    for w in warnings:
        print("warning:", w)
    for e in errors:
        print("ERROR:", e)
    tags = Counter(t for q in questions for t in q.get("tags", []))
    print(f"{len(questions)} questions, {len(errors)} errors, {len(warnings)} warnings; tags: "
          + ", ".join(f"{t}={n}" for t, n in sorted(tags.items())))  # fmt: skip
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Validate questions.jsonl of the chat-logs evaluation set.

Usage:  python3 check.py OUTDIR

OUTDIR is a directory produced by `python3 build.py OUTDIR` (a copy of
corpus/).  Standard library only.  Checks: required keys, kinds, split values
and per-kind dev/test balance, unique ids of the form chat-logs-<kind>-NNN,
answer lengths (10-200 characters), that every answer (and every `also`
answer of multi-concept questions) occurs exactly once in its file after
whitespace normalisation, minimum counts per kind and overall, and the number
of distinct gold files.  Exits 1 on any failure.
"""
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ["paraphrase", "identifier", "code", "typo", "multi-concept", "error"]
MIN_PER_KIND = 14
MIN_TOTAL = 90
MIN_FILES = 40


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    outdir = Path(sys.argv[1])
    errors = []
    cache = {}

    def text_of(rel):
        if rel not in cache:
            p = outdir / rel
            if not p.is_file():
                cache[rel] = None
            else:
                cache[rel] = norm(p.read_text(encoding="utf-8", errors="replace"))
        return cache[rel]

    def check_answer(qid, rel, ans, label):
        if not isinstance(ans, str) or not isinstance(rel, str):
            errors.append(f"{qid}: {label} file/answer must be strings")
            return
        n = len(ans)
        if not 10 <= n <= 200:
            errors.append(f"{qid}: {label} answer length {n} not in 10..200")
        t = text_of(rel)
        if t is None:
            errors.append(f"{qid}: {label} file missing: {rel}")
            return
        a = norm(ans)
        c = t.count(a)
        if c != 1:
            errors.append(f"{qid}: {label} answer occurs {c} times in {rel}: {ans[:60]!r}")

    qs = []
    with open(HERE / "questions.jsonl", encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                qs.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"line {ln}: bad JSON: {e}")

    ids = Counter()
    per_kind = Counter()
    split_kind = defaultdict(Counter)
    files = set()
    for q in qs:
        qid = q.get("id", "?")
        ids[qid] += 1
        req = {"id", "kind", "split", "question", "file", "answer"}
        missing = req - q.keys()
        if missing:
            errors.append(f"{qid}: missing keys {sorted(missing)}")
            continue
        kind = q["kind"]
        if kind not in KINDS:
            errors.append(f"{qid}: bad kind {kind}")
            continue
        if not re.fullmatch(rf"chat-logs-{re.escape(kind)}-\d{{3}}", qid):
            errors.append(f"{qid}: id does not match chat-logs-{kind}-NNN")
        if q["split"] not in ("dev", "test"):
            errors.append(f"{qid}: bad split {q['split']}")
        if not q["question"].strip():
            errors.append(f"{qid}: empty question")
        per_kind[kind] += 1
        split_kind[kind][q["split"]] += 1
        files.add(q["file"])
        check_answer(qid, q["file"], q["answer"], "answer")
        extra = set(q.keys()) - req - {"also"}
        if extra:
            errors.append(f"{qid}: unexpected keys {sorted(extra)}")
        if kind == "multi-concept":
            also = q.get("also")
            if not isinstance(also, list) or not also:
                errors.append(f"{qid}: multi-concept needs non-empty 'also' list")
            else:
                for i, a in enumerate(also):
                    if not isinstance(a, dict) or set(a.keys()) != {"file", "answer"}:
                        errors.append(f"{qid}: also[{i}] must have exactly file and answer")
                        continue
                    check_answer(qid, a["file"], a["answer"], f"also[{i}]")
        elif "also" in q:
            errors.append(f"{qid}: 'also' only allowed for multi-concept")

    for qid, c in ids.items():
        if c > 1:
            errors.append(f"duplicate id {qid} ({c}x)")
    for k in KINDS:
        if per_kind[k] < MIN_PER_KIND:
            errors.append(f"kind {k}: only {per_kind[k]} questions (< {MIN_PER_KIND})")
        n = per_kind[k]
        d = split_kind[k]["dev"]
        if n and not (0.25 <= d / n <= 0.55):
            errors.append(f"kind {k}: dev share {d}/{n} outside 25..55 %")
    if len(qs) < MIN_TOTAL:
        errors.append(f"only {len(qs)} questions (< {MIN_TOTAL})")
    if len(files) < MIN_FILES:
        errors.append(f"only {len(files)} distinct gold files (< {MIN_FILES})")

    print(f"questions: {len(qs)}, distinct gold files: {len(files)}")
    for k in KINDS:
        print(f"  {k:14s} {per_kind[k]:3d}  dev {split_kind[k]['dev']:3d}  test {split_kind[k]['test']:3d}")
    if errors:
        print(f"{len(errors)} problem(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check questions.jsonl of the manual-text set against a built corpus.

Usage: python3 check.py OUTDIR      (OUTDIR as written by `python3 build.py OUTDIR`)

Checks: required keys and no unknown keys; kind is one of the six kinds, each
kind has at least 14 questions, at least 90 in all; ids unique and of the form
manual-text-<kind>-NNN; split is dev/test with 30-50 % dev within every kind;
answer (and every `also` answer) is 10-200 characters and occurs exactly once
in its file after whitespace normalisation (every whitespace run -> one
space); `also` present exactly for multi-concept; at least 40 distinct gold
files.  Exits 1 on any failure.  Standard library only.
"""

import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "manual-text"
KINDS = ("paraphrase", "identifier", "code", "typo", "multi-concept", "error")
KEYS = {"id", "kind", "split", "question", "file", "answer"}


def norm(s):
    return " ".join(s.split())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    errors = []
    cache = {}

    def text(rel):
        if rel not in cache:
            p = os.path.join(outdir, rel)
            if os.path.isabs(rel) or ".." in rel.split("/") or not os.path.isfile(p):
                cache[rel] = None
            else:
                with open(p, encoding="utf-8") as f:
                    cache[rel] = norm(f.read())
        return cache[rel]

    def check_span(qid, rel, ans, what):
        if not isinstance(ans, str) or not isinstance(rel, str):
            errors.append(f"{qid}: {what}: file/answer must be strings")
            return
        n = norm(ans)
        if not 10 <= len(n) <= 200:
            errors.append(f"{qid}: {what}: answer length {len(n)} not in 10..200")
        t = text(rel)
        if t is None:
            errors.append(f"{qid}: {what}: file {rel!r} not found in {outdir}")
            return
        c = t.count(n)
        if c != 1:
            errors.append(f"{qid}: {what}: answer occurs {c} times in {rel} (need 1)")

    rows = []
    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"line {ln}: bad JSON: {e}")

    ids = collections.Counter()
    per_kind = collections.Counter()
    dev_kind = collections.Counter()
    gold = set()
    for r in rows:
        qid = r.get("id", "?")
        ids[qid] += 1
        kind = r.get("kind")
        allowed = KEYS | ({"also"} if kind == "multi-concept" else set())
        missing = KEYS - set(r)
        extra = set(r) - allowed
        if missing:
            errors.append(f"{qid}: missing keys {sorted(missing)}")
        if extra:
            errors.append(f"{qid}: unexpected keys {sorted(extra)}")
        if kind not in KINDS:
            errors.append(f"{qid}: bad kind {kind!r}")
            continue
        if not re.fullmatch(rf"{NAME}-{re.escape(kind)}-\d{{3}}", str(qid)):
            errors.append(f"{qid}: id must be {NAME}-{kind}-NNN")
        if r.get("split") not in ("dev", "test"):
            errors.append(f"{qid}: bad split {r.get('split')!r}")
        if not isinstance(r.get("question"), str) or len(r["question"].strip()) < 5:
            errors.append(f"{qid}: empty question")
        per_kind[kind] += 1
        dev_kind[kind] += r.get("split") == "dev"
        gold.add(r.get("file"))
        check_span(qid, r.get("file"), r.get("answer"), "answer")
        if kind == "multi-concept":
            also = r.get("also")
            if not isinstance(also, list) or not also:
                errors.append(f"{qid}: multi-concept needs a non-empty also list")
            else:
                for i, a in enumerate(also):
                    if not isinstance(a, dict) or set(a) != {"file", "answer"}:
                        errors.append(f"{qid}: also[{i}] must have exactly file, answer")
                        continue
                    check_span(qid, a["file"], a["answer"], f"also[{i}]")
                    if norm(a["answer"]) == norm(r.get("answer", "")) and a["file"] == r.get("file"):
                        errors.append(f"{qid}: also[{i}] repeats the first answer")

    for qid, c in ids.items():
        if c > 1:
            errors.append(f"{qid}: id used {c} times")
    for kind in KINDS:
        n = per_kind[kind]
        if n < 14:
            errors.append(f"kind {kind}: {n} questions (need >= 14)")
        elif not 0.3 <= dev_kind[kind] / n <= 0.5:
            errors.append(f"kind {kind}: dev share {dev_kind[kind]}/{n} not in 30-50 %")
    if len(rows) < 90:
        errors.append(f"{len(rows)} questions (need >= 90)")
    if len(gold) < 40:
        errors.append(f"{len(gold)} distinct gold files (need >= 40)")

    for k in KINDS:
        print(f"{k:14s} {per_kind[k]:3d}  dev {dev_kind[k]:3d}  test {per_kind[k] - dev_kind[k]:3d}")
    print(f"total {len(rows)} questions, {len(gold)} distinct gold files")
    if errors:
        for e in errors:
            print("FAIL", e)
        print(f"{len(errors)} problem(s)")
        sys.exit(1)
    print("check.py: all questions OK")


if __name__ == "__main__":
    main()

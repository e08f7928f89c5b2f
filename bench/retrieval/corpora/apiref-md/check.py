#!/usr/bin/env python3
"""Validate questions.jsonl against a built corpus (standard library only).

    python3 check.py OUTDIR          # OUTDIR = directory written by `python3 build.py OUTDIR`

Checks: required keys and no unknown ones; id format `apiref-md-<kind>-NNN` and uniqueness;
kind in the six kinds, each with >= 14 questions, >= 90 in all; split in dev/test, with dev
between 30 % and 50 % inside every kind; `file` exists in OUTDIR; `answer` (and every
`also[].answer`) is 10-200 characters and occurs exactly once in its file after whitespace
normalisation (every run of whitespace -> one space); `also` present (non-empty) exactly for
kind multi-concept; at least 40 distinct gold files. Also reports (without failing) answers
that occur in other corpus files too. Exits 1 on any failure.
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ["paraphrase", "identifier", "code", "typo", "multi-concept", "error"]
KEYS = {"id", "kind", "split", "question", "file", "answer"}
WS = re.compile(r"\s+")


def norm(s):
    return WS.sub(" ", s)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    outdir = sys.argv[1]
    cache = {}

    def text(rel):
        if rel not in cache:
            path = os.path.join(outdir, rel)
            if not os.path.isfile(path):
                cache[rel] = None
            else:
                with open(path, encoding="utf-8") as f:
                    cache[rel] = norm(f.read())
        return cache[rel]

    all_files = []
    for root, _, names in os.walk(outdir):
        for n in names:
            if n.endswith(".md"):
                all_files.append(os.path.relpath(os.path.join(root, n), outdir))

    errors = []
    warnings = []
    ids = set()
    per_kind = collections.Counter()
    per_kind_dev = collections.Counter()
    gold_files = set()
    qs = []
    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"line {ln}: bad JSON: {e}")
                continue
            qs.append((ln, q))

    def check_span(where, rel, ans):
        if not isinstance(ans, str) or not (10 <= len(ans) <= 200):
            errors.append(f"{where}: answer length {len(ans) if isinstance(ans, str) else '?'} not in 10-200")
            return
        t = text(rel)
        if t is None:
            errors.append(f"{where}: file {rel} not in corpus")
            return
        n = t.count(norm(ans))
        if n != 1:
            errors.append(f"{where}: answer occurs {n} times in {rel}: {ans!r}")
            return
        others = [o for o in all_files if o != rel and norm(ans) in text(o)]
        if others:
            warnings.append(f"{where}: answer also in {', '.join(sorted(others)[:3])}")

    for ln, q in qs:
        qid = q.get("id", f"line{ln}")
        keys = set(q)
        want = KEYS | ({"also"} if q.get("kind") == "multi-concept" else set())
        if keys != want:
            errors.append(f"{qid}: keys {sorted(keys)} != {sorted(want)}")
        kind = q.get("kind")
        if kind not in KINDS:
            errors.append(f"{qid}: bad kind {kind!r}")
            continue
        if not re.fullmatch(rf"apiref-md-{re.escape(kind)}-\d{{3}}", str(qid)):
            errors.append(f"{qid}: id does not match apiref-md-{kind}-NNN")
        if qid in ids:
            errors.append(f"{qid}: duplicate id")
        ids.add(qid)
        if q.get("split") not in ("dev", "test"):
            errors.append(f"{qid}: bad split {q.get('split')!r}")
        per_kind[kind] += 1
        per_kind_dev[kind] += q.get("split") == "dev"
        if not isinstance(q.get("question"), str) or len(q["question"].strip()) < 3:
            errors.append(f"{qid}: empty question")
        gold_files.add(q.get("file"))
        check_span(qid, q.get("file"), q.get("answer"))
        if kind == "multi-concept":
            also = q.get("also")
            if not isinstance(also, list) or not also:
                errors.append(f"{qid}: multi-concept needs a non-empty also list")
            else:
                for i, a in enumerate(also):
                    if not isinstance(a, dict) or set(a) != {"file", "answer"}:
                        errors.append(f"{qid}: also[{i}] must have exactly file and answer")
                        continue
                    check_span(f"{qid} also[{i}]", a["file"], a["answer"])

    for k in KINDS:
        n = per_kind[k]
        if n < 14:
            errors.append(f"kind {k}: {n} questions < 14")
        elif not (0.30 <= per_kind_dev[k] / n <= 0.50):
            errors.append(f"kind {k}: dev share {per_kind_dev[k]}/{n} outside 30-50 %")
    total = sum(per_kind.values())
    if total < 90:
        errors.append(f"{total} questions < 90")
    if len(gold_files) < 40:
        errors.append(f"{len(gold_files)} distinct gold files < 40")

    for w in warnings:
        print("note:", w)
    print(f"{total} questions, {len(gold_files)} distinct gold files, corpus {len(all_files)} files")
    for k in KINDS:
        print(f"  {k:14s} {per_kind[k]:3d}  dev {per_kind_dev[k]:3d}  test {per_kind[k] - per_kind_dev[k]:3d}")
    for e in errors:
        print("FAIL:", e)
    print("check " + ("FAILED" if errors else "passed"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check questions.jsonl against a built corpus (standard library only).

  python3 check.py OUTDIR

For each question: required keys, kind, split, id format and uniqueness,
answer length 10..200, and that `answer` (and each `also[].answer`) occurs
exactly once in the VISIBLE TEXT of its page: the HTML with <script>,
<style> and <template> contents dropped, tags removed (a space is put at the
edges of block-level elements such as p, li, td, pre, div, h1..h6, br, so
that text of adjacent blocks does not run together; inline tags such as
<code>, <a>, <span>, <em> are removed without a space), character
references decoded, and every run of whitespace turned into one space.
The answer is whitespace-normalised the same way before it is searched.
Also checks split balance per kind (about 40 % dev), kind counts (>= 14
each, >= 90 in all) and that at least 40 distinct gold files are used.
Exits 1 on any failure.
"""
import json
import os
import re
import sys
from collections import Counter, defaultdict
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "html-mdbook-mkdocs"
KINDS = ["paraphrase", "identifier", "code", "typo", "multi-concept", "error"]
SKIP = {"script", "style", "template"}
BLOCK = {
    "address", "article", "aside", "blockquote", "body", "br", "caption",
    "dd", "details", "dialog", "div", "dl", "dt", "fieldset", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "head",
    "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section",
    "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr",
    "ul", "option", "select", "textarea", "label", "input", "button", "img",
    "svg", "meta", "link",
}


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        elif tag in BLOCK:
            self.parts.append(" ")

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in BLOCK:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def visible_text(path):
    with open(path, encoding="utf-8") as f:
        html = f.read()
    p = _Text()
    p.feed(html)
    p.close()
    return norm("".join(p.parts))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 check.py OUTDIR")
    outdir = sys.argv[1]
    errors = []
    cache = {}

    def count_in(rel, ans, qid):
        path = os.path.join(outdir, rel)
        if not os.path.isfile(path):
            errors.append(f"{qid}: missing file {rel}")
            return
        if rel not in cache:
            cache[rel] = visible_text(path)
        a = norm(ans)
        if not 10 <= len(a) <= 200:
            errors.append(f"{qid}: answer length {len(a)} not in 10..200")
        n = cache[rel].count(a)
        if n != 1:
            errors.append(f"{qid}: answer occurs {n} times in {rel}: {a[:80]!r}")

    qs = []
    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                try:
                    qs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    errors.append(f"line {i}: bad JSON: {e}")
    ids = Counter(q.get("id") for q in qs)
    for qid, n in ids.items():
        if n > 1:
            errors.append(f"duplicate id {qid}")
    per_kind = Counter()
    split = defaultdict(Counter)
    files = set()
    for q in qs:
        qid = q.get("id", "?")
        need = {"id", "kind", "split", "question", "file", "answer"}
        if q.get("kind") == "multi-concept":
            need.add("also")
        extra = set(q) - need
        if need - set(q):
            errors.append(f"{qid}: missing keys {sorted(need - set(q))}")
            continue
        if extra:
            errors.append(f"{qid}: unexpected keys {sorted(extra)}")
        kind = q["kind"]
        if kind not in KINDS:
            errors.append(f"{qid}: bad kind {kind}")
            continue
        if not re.fullmatch(rf"{NAME}-{re.escape(kind)}-\d{{3}}", qid):
            errors.append(f"{qid}: id does not match {NAME}-{kind}-NNN")
        if q["split"] not in ("dev", "test"):
            errors.append(f"{qid}: bad split {q['split']}")
        if not q["question"].strip():
            errors.append(f"{qid}: empty question")
        per_kind[kind] += 1
        split[kind][q["split"]] += 1
        files.add(q["file"])
        count_in(q["file"], q["answer"], qid)
        if kind == "multi-concept":
            also = q["also"]
            if not isinstance(also, list) or not also:
                errors.append(f"{qid}: also must be a non-empty list")
                continue
            for a in also:
                if set(a) != {"file", "answer"}:
                    errors.append(f"{qid}: also entry keys {sorted(a)}")
                    continue
                count_in(a["file"], a["answer"], qid)
                if a["file"] == q["file"] and norm(a["answer"]) == norm(q["answer"]):
                    errors.append(f"{qid}: also repeats the answer")
    for kind in KINDS:
        n = per_kind[kind]
        if n < 14:
            errors.append(f"kind {kind}: only {n} questions (need >= 14)")
        dev = split[kind]["dev"]
        if n and not (0.3 <= dev / n <= 0.5):
            errors.append(f"kind {kind}: dev share {dev}/{n} not about 40 %")
    if len(qs) < 90:
        errors.append(f"only {len(qs)} questions (need >= 90)")
    if len(files) < 40:
        errors.append(f"only {len(files)} distinct gold files (need >= 40)")

    for kind in KINDS:
        print(f"{kind:14s} {per_kind[kind]:3d}  dev {split[kind]['dev']:3d}  test {split[kind]['test']:3d}")
    print(f"total {len(qs)} questions, {len(files)} distinct gold files")
    if errors:
        for e in errors:
            print("FAIL", e)
        print(f"{len(errors)} failure(s)")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()

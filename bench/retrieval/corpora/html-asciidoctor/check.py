#!/usr/bin/env python3
"""Check questions.jsonl of the html-asciidoctor set against a built corpus.

    python3 check.py OUTDIR            # OUTDIR as written by `python3 build.py OUTDIR`

For every question: required keys (and no others), kind, id pattern and
uniqueness, split ("dev" or "test": 6 of each kind's 15 are dev, see README),
non-empty question, and for `answer` and each `also[].answer` (kind
multi-concept only):

  * 20..120 characters, no line break, no leading/trailing whitespace;
  * occurs EXACTLY ONCE in the page's visible text: the HTML parsed with
    html.parser, <script>/<style>/<template> contents and comments dropped,
    tags removed (a space at the edges of block-level elements such as p,
    li, dd, dt, td, pre, div, h1..h6, br; inline tags such as <code>, <samp>,
    <a>, <span>, <em> removed without a space), character references decoded
    (&#8217; is the character ’, &#8594; is →), every whitespace run
    turned into one space;
  * lies on ONE line of the page's main content: within one block element
    (paragraph, list item, table cell, heading, ...), and inside <pre>
    within one source line of the example. Main content is everything in
    <body> except Asciidoctor's table of contents (<div id="toc">, which
    sits inside <div id="header">) and the footer (<div id="footer">: the
    version and "Last updated" lines). The document title (<h1>) and the
    author/revision line in <div id="header"> count as main content.

Also checks 15 questions per kind (90 in all), 6 dev and 9 test per kind,
and that every one of the 7 pages is the gold file of some question.
Exits 1 on any failure. Standard library only.
"""
import collections
import json
import os
import re
import sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "html-asciidoctor"
KINDS = ["paraphrase", "identifier", "code", "typo", "multi-concept", "error"]
PER_KIND = 15
MIN_FILES = 7  # all pages of the corpus
MIN_LEN, MAX_LEN = 20, 120
DEV_PER_KIND = 6

BLOCK = {
    "address", "article", "aside", "blockquote", "body", "br", "caption", "dd",
    "details", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer",
    "form", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr", "html",
    "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
    "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul", "meta", "link",
}
SKIP = {"script", "style", "template"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "param", "source", "track", "wbr"}


def _is_nav(tag, attrs):
    a = dict(attrs)
    return tag == "div" and a.get("id") in ("toc", "footer")


class TextExtractor(HTMLParser):
    """Visible text of a page, and the main-content text split into lines."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.all = []       # whole page, block edges as spaces
        self.main = []      # main content, block edges and <pre> newlines as "\n"
        self.skip = 0
        self.pre = 0
        self.in_body = False
        self.stack = []     # open non-void tags
        self.nav_depth = None

    def _edge(self):
        self.all.append(" ")
        if self._in_main():
            self.main.append("\n")

    def _in_main(self):
        return self.in_body and self.nav_depth is None

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        if tag in BLOCK:
            self._edge()
        if tag == "body":
            self.in_body = True
        if tag in VOID:
            return
        if tag == "pre":
            self.pre += 1
        self.stack.append(tag)
        if self.nav_depth is None and _is_nav(tag, attrs):
            self.nav_depth = len(self.stack)

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK:
            self._edge()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag in SKIP and self.skip:
            self.skip -= 1
        if tag in BLOCK:
            self._edge()
        if tag == "pre" and self.pre:
            self.pre -= 1
        if tag in self.stack:
            while self.stack:
                t = self.stack.pop()
                if self.nav_depth is not None and len(self.stack) < self.nav_depth:
                    self.nav_depth = None
                if t == tag:
                    break

    def handle_data(self, data):
        if self.skip:
            return
        self.all.append(data)
        if self._in_main():
            self.main.append(data if self.pre else re.sub(r"\s+", " ", data))


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


_cache = {}


def page(path):
    """(normalised visible text, list of normalised main-content lines)."""
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            html = f.read()
        p = TextExtractor()
        p.feed(html)
        p.close()
        lines = [norm(x) for x in "".join(p.main).split("\n")]
        _cache[path] = (norm("".join(p.all)), [x for x in lines if x])
    return _cache[path]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 check.py OUTDIR")
    outdir = sys.argv[1]
    errors = []
    qs = []
    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                qs.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"line {n}: bad JSON: {e}")

    def check_span(qid, rel, ans, label):
        if not isinstance(ans, str):
            errors.append(f"{qid}: {label} is not a string")
            return
        if not MIN_LEN <= len(ans) <= MAX_LEN:
            errors.append(f"{qid}: {label} length {len(ans)} not in {MIN_LEN}..{MAX_LEN}")
        if "\n" in ans or "\r" in ans or ans != ans.strip():
            errors.append(f"{qid}: {label} has a line break or edge whitespace")
        path = os.path.join(outdir, rel)
        if not os.path.isfile(path):
            errors.append(f"{qid}: {label} file missing: {rel}")
            return
        full, lines = page(path)
        a = norm(ans)
        c = full.count(a)
        if c != 1:
            errors.append(f"{qid}: {label} occurs {c} times in {rel}: {ans!r}")
        elif not any(a in x for x in lines):
            errors.append(f"{qid}: {label} not on one line of the main content of {rel}: {ans!r}")

    ids = set()
    files = set()
    required = {"id", "kind", "split", "question", "file", "answer"}
    for q in qs:
        qid = q.get("id", "?")
        missing = required - set(q)
        if missing:
            errors.append(f"{qid}: missing keys {sorted(missing)}")
            continue
        extra = set(q) - required - {"also"}
        if extra:
            errors.append(f"{qid}: unexpected keys {sorted(extra)}")
        if qid in ids:
            errors.append(f"{qid}: duplicate id")
        ids.add(qid)
        if q["kind"] not in KINDS:
            errors.append(f"{qid}: bad kind {q['kind']!r}")
        if not re.fullmatch(rf"{NAME}-{re.escape(q['kind'])}-\d{{3}}", qid):
            errors.append(f"{qid}: id does not match {NAME}-<kind>-NNN")
        if q["split"] not in ("dev", "test"):
            errors.append(f"{qid}: split {q['split']!r}, must be 'dev' or 'test'")
        if not q["question"].strip():
            errors.append(f"{qid}: empty question")
        files.add(q["file"])
        check_span(qid, q["file"], q["answer"], "answer")
        if q["kind"] == "multi-concept":
            also = q.get("also")
            if not isinstance(also, list) or not also:
                errors.append(f"{qid}: multi-concept needs a non-empty 'also' list")
            else:
                for i, x in enumerate(also):
                    if not isinstance(x, dict) or set(x) != {"file", "answer"}:
                        errors.append(f"{qid}: also[{i}] keys must be file, answer")
                        continue
                    check_span(qid, x["file"], x["answer"], f"also[{i}]")
                    if x["file"] == q["file"] and norm(x["answer"]) == norm(q["answer"]):
                        errors.append(f"{qid}: also[{i}] repeats the answer")
        elif "also" in q:
            errors.append(f"{qid}: 'also' only allowed for multi-concept")

    by_kind = collections.Counter(q.get("kind") for q in qs)
    for k in KINDS:
        if by_kind.get(k, 0) != PER_KIND:
            errors.append(f"kind {k}: {by_kind.get(k, 0)} questions (want {PER_KIND})")
    dev = collections.Counter(q.get("kind") for q in qs if q.get("split") == "dev")
    for k in KINDS:
        if dev.get(k, 0) != DEV_PER_KIND:
            errors.append(f"kind {k}: {dev.get(k, 0)} dev questions (want {DEV_PER_KIND})")
    if len(files) < MIN_FILES:
        errors.append(f"only {len(files)} distinct gold files (< {MIN_FILES})")

    print(f"{len(qs)} questions, {len(files)} distinct gold files")
    for k in KINDS:
        print(f"  {k:14s} {by_kind.get(k, 0):3d}  ({dev.get(k, 0)} dev)")
    if errors:
        print(f"FAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()

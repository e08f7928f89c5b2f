#!/usr/bin/env python3
"""Check questions.jsonl of the html-sphinx-rustdoc set against a built corpus.

    python3 check.py OUTDIR            # OUTDIR as written by `python3 build.py OUTDIR`

For every question: required keys, kind, split, id pattern/uniqueness, answer length
10..200, and that `answer` (and each `also[].answer`) occurs EXACTLY ONCE in the page's
visible text (html.parser: tags removed, <script>/<style>/<template> dropped, entities
decoded, every whitespace run -> one space). It additionally verifies that the span lies
inside the page's main content (Sphinx: <div role="main">; rustdoc:
<section id="main-content">), not in navigation/sidebars/footers.
Also checks per-kind minimums, >= 90 questions, >= 40 distinct gold files, and a
~40/60 dev/test split within every kind. Exits 1 on any failure.  Standard library only.
"""
import collections
import json
import os
import re
import sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "html-sphinx-rustdoc"
KINDS = ["paraphrase", "identifier", "code", "typo", "multi-concept", "error"]
MIN_PER_KIND = 14
MIN_TOTAL = 90
MIN_FILES = 40

BLOCK = {
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div",
    "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
    "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
    "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "title", "body",
    "head", "html",
}
SKIP = {"script", "style", "template", "noscript"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr"}


class TextExtractor(HTMLParser):
    """Collects the visible text of a page; also the text of the main-content element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.all = []
        self.main = []
        self.skip = 0
        self.stack = []          # open non-void tag names
        self.main_depth = None   # len(stack) at which the main element was opened

    @staticmethod
    def _is_main(tag, attrs):
        d = dict(attrs)
        if tag == "section" and d.get("id") == "main-content":
            return True                                       # rustdoc
        if tag == "div" and d.get("role") == "main":
            return True                                       # sphinx
        return False

    def _emit(self, s):
        self.all.append(s)
        if self.main_depth is not None:
            self.main.append(s)

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        if tag in BLOCK:
            self._emit("\n")
        if tag in VOID:
            return
        self.stack.append(tag)
        if self.main_depth is None and self._is_main(tag, attrs):
            self.main_depth = len(self.stack)

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK:
            self._emit("\n")

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag in SKIP and self.skip:
            self.skip -= 1
        if tag in BLOCK:
            self._emit("\n")
        if tag in self.stack:
            while self.stack:
                t = self.stack.pop()
                if self.main_depth is not None and len(self.stack) < self.main_depth:
                    self.main_depth = None
                if t == tag:
                    break

    def handle_data(self, data):
        if not self.skip:
            self._emit(data)


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


_cache = {}


def page_texts(path):
    """(full visible text, main-content text), both whitespace-normalised."""
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            html = f.read()
        p = TextExtractor()
        p.feed(html)
        p.close()
        _cache[path] = (norm("".join(p.all)), norm("".join(p.main)))
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
        if not isinstance(ans, str) or not (10 <= len(ans) <= 200):
            errors.append(f"{qid}: {label} length {len(ans) if isinstance(ans, str) else ans!r} not in 10..200")
            return
        path = os.path.join(outdir, rel)
        if not os.path.isfile(path):
            errors.append(f"{qid}: {label} file missing: {rel}")
            return
        full, mainc = page_texts(path)
        a = norm(ans)
        c = full.count(a)
        if c != 1:
            errors.append(f"{qid}: {label} occurs {c} times in {rel}: {ans!r}")
        elif mainc.count(a) != 1:
            errors.append(f"{qid}: {label} not inside main content of {rel}: {ans!r}")

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
            errors.append(f"{qid}: bad split {q['split']!r}")
        if not q["question"].strip():
            errors.append(f"{qid}: empty question")
        files.add(q["file"])
        check_span(qid, q["file"], q["answer"], "answer")
        if q["kind"] == "multi-concept":
            also = q.get("also")
            if not isinstance(also, list) or not also:
                errors.append(f"{qid}: multi-concept needs non-empty 'also' list")
            else:
                for i, x in enumerate(also):
                    if set(x) != {"file", "answer"}:
                        errors.append(f"{qid}: also[{i}] keys must be file, answer")
                        continue
                    check_span(qid, x["file"], x["answer"], f"also[{i}]")
        elif "also" in q:
            errors.append(f"{qid}: 'also' only allowed for multi-concept")

    by_kind = collections.Counter(q.get("kind") for q in qs)
    split = collections.Counter((q.get("kind"), q.get("split")) for q in qs)
    for k in KINDS:
        n = by_kind.get(k, 0)
        if n < MIN_PER_KIND:
            errors.append(f"kind {k}: only {n} questions (< {MIN_PER_KIND})")
        if n:
            dev = split.get((k, "dev"), 0)
            frac = dev / n
            if not (0.3 <= frac <= 0.5):
                errors.append(f"kind {k}: dev fraction {frac:.2f} not about 40%")
    if len(qs) < MIN_TOTAL:
        errors.append(f"only {len(qs)} questions (< {MIN_TOTAL})")
    if len(files) < MIN_FILES:
        errors.append(f"only {len(files)} distinct gold files (< {MIN_FILES})")

    print(f"{len(qs)} questions, {len(files)} distinct gold files")
    for k in KINDS:
        print(f"  {k:14s} {by_kind.get(k, 0):3d}  dev {split.get((k, 'dev'), 0):3d}  test {split.get((k, 'test'), 0):3d}")
    if errors:
        print(f"FAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()

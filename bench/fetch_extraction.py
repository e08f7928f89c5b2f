"""Main-content extraction on real documentation pages: how much of the text is kept, how much of
the navigation is dropped, and what the 3 KB preview is made of, per extractor.

    python bench/fetch_extraction.py [--per-site N] [--extractors ours,readability-only,trafilatura]

`ours` is what ctx_fetch_and_index indexes; `readability-only` is readability's summary kept
whatever it dropped; `trafilatura` needs the `bench` extra (`pip install -e '.[bench]'` in the checkout).

The pages are real HTML manuals that Debian packages install (valgrind, postgresql-doc-15,
debian-reference-en, python3.11-doc, nodejs); sites whose package is missing are skipped and
said so. A real HTTP server on 127.0.0.1 serves them and the fetcher the server uses gets them,
so the bytes converted are the bytes the agent's fetch would convert.

What is main text and what is navigation is read off each generator's markup, per site (DocBook:
navheader, navfooter and toc; Sphinx: related, sphinxsidebar, footer; Node's docs: the side
column, the header and the table of contents around #apicontent). Text is compared as words
(lower-cased `\\w+`, counted with multiplicity):
- kept: the share of the main text's words present in the output;
- nav kept: the share of the navigation's words present in the output beyond the main text's
  own (a word both have counts as main first);
- preview shows the opening: of as many words of the main text's opening as the preview (its
  first 3 KB, as the reply shows it) holds, the share it shows; a preview that is the navigation
  table and the table of contents shows few of them.
No number here is a threshold.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import lxml.html

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from context_kernel.web.client import SafeFetcher
from context_kernel.web.convert import convert
from context_kernel.web.outcomes import preview


@dataclass(frozen=True)
class Site:
    name: str
    root: Path
    pages: tuple[str, ...]
    main: str          # XPath of the main content
    nav: str           # XPath of navigation blocks (anywhere, inside main too: a TOC)


_DOCBOOK_NAV = ("//div[contains(concat(' ', @class, ' '), ' navheader ') or contains(concat(' ', @class, ' '),"
                " ' navfooter ') or contains(concat(' ', @class, ' '), ' toc ')]"
                " | //table[starts-with(@summary, 'Navigation')]")  # valgrind: <table class="nav" summary=…>
SITES = (
    Site("valgrind", Path("/usr/share/doc/valgrind/html"),
         ("manual-core.html", "mc-manual.html", "cg-manual.html", "hg-manual.html", "manual-intro.html",
          "FAQ.html", "dh-manual.html", "manual-writing-tools.html"),
         "//body", _DOCBOOK_NAV),
    Site("postgresql", Path("/usr/share/doc/postgresql-doc-15/html"),
         ("sql-select.html", "sql-createtable.html", "functions-json.html", "indexes-types.html",
          "runtime-config-wal.html", "tutorial-join.html", "app-psql.html", "datatype-numeric.html"),
         "//body", _DOCBOOK_NAV),
    Site("debian-reference", Path("/usr/share/debian-reference"),
         ("ch01.en.html", "ch02.en.html", "ch03.en.html", "ch05.en.html", "ch09.en.html", "ch10.en.html"),
         "//body", _DOCBOOK_NAV),
    Site("python", Path("/usr/share/doc/python3.11-doc/html"),
         ("library/json.html", "library/pathlib.html", "library/asyncio-task.html", "library/re.html",
          "tutorial/controlflow.html", "reference/datamodel.html", "library/argparse.html", "howto/logging.html"),
         "//div[@role='main']",
         "//div[contains(@class, 'related') or contains(@class, 'sphinxsidebar') or contains(@class, 'footer')"
         " or contains(@class, 'mobile-nav')] | //div[@id='contents' and contains(@class, 'contents')]"),
    Site("nodejs", Path("/usr/share/doc/nodejs/api"),
         ("fs.html", "http.html", "stream.html", "child_process.html", "path.html", "events.html", "buffer.html",
          "url.html"),
         "//div[@id='apicontent']",
         "//div[@id='column2'] | //div[@id='column1']/header | //details[@id='toc'] | //nav[@id='toc']"),
)


_LINK_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower()))


def shown_words(markdown: str) -> Counter[str]:
    """The words a reader sees: a link's target URL and title are not text of the page."""
    return words(_LINK_TARGET.sub("]", markdown))


@dataclass
class Truth:
    main: Counter[str]
    nav: Counter[str]
    opening: list[str]
    """The main text's words in order: the preview should be its opening."""


def truth(html: bytes, site: Site) -> Truth:
    """The main text and the navigation of a page, read off its generator's markup."""
    root = lxml.html.document_fromstring(html)
    for el in root.iter("script", "style"):
        el.drop_tree()
    nav = Counter[str]()
    for el in root.xpath(site.nav):
        nav += words(el.text_content())
        el.drop_tree()
    text = " ".join(el.text_content() for el in root.xpath(site.main))
    return Truth(words(text), nav, re.findall(r"\w+", text.lower()))


def overlap(a: Counter[str], b: Counter[str]) -> int:
    return sum(min(n, b[w]) for w, n in a.items())


@dataclass
class Score:
    kept: float
    nav_kept: float
    preview_opening: float
    fallback: bool
    seconds: float
    size: int


def score(text: str, kind: str, page: Truth, seconds: float) -> Score:
    out = shown_words(text)
    beyond_main = Counter({w: max(0, n - page.main[w]) for w, n in out.items()})
    head = shown_words(preview(text))
    # As many words of the main text's opening as the preview holds: how many of them it shows.
    opening = Counter(page.opening[:max(1, sum(head.values()))])
    return Score(kept=overlap(page.main, out) / max(1, sum(page.main.values())),
                 nav_kept=overlap(page.nav, beyond_main) / max(1, sum(page.nav.values())),
                 preview_opening=overlap(opening, head) / max(1, sum(opening.values())),
                 fallback=kind == "html-fallback", seconds=seconds, size=len(text.encode()))


def _ours(body: bytes, content_type: str | None, url: str) -> tuple[str, str]:
    converted = convert(body, content_type, url)
    return converted.text, converted.kind


def _trafilatura(body: bytes, content_type: str | None, url: str) -> tuple[str, str]:
    import trafilatura

    text = trafilatura.extract(body.decode("utf-8", "replace"), url=url, output_format="markdown",
                               include_tables=True, include_links=False, include_formatting=True,
                               favor_recall=True, deduplicate=False)
    return text or "", "trafilatura"


def _readability_only(body: bytes, content_type: str | None, url: str) -> tuple[str, str]:
    """readability's summary whatever it dropped (what `ours` would return without its fallback)."""
    from context_kernel.web import html as ours
    from context_kernel.web.markup import parse_html
    from context_kernel.web.navigation import drop_chrome

    root = parse_html(body.decode("utf-8", "replace"))
    if root is None:
        return "", "none"
    drop_chrome(root)
    summary, _ = ours._readability(lxml.html.tostring(root, encoding="unicode"))
    if summary is None:
        return "", "none"
    return ours._to_markdown(lxml.html.tostring(summary, encoding="unicode")), "readability"


EXTRACTORS: dict[str, Callable[[bytes, str | None, str], tuple[str, str]]] = {
    "ours": _ours, "readability-only": _readability_only, "trafilatura": _trafilatura}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


async def fetch_all(sites: list[Site], per_site: int) -> list[tuple[Site, str, bytes, str | None]]:
    got = []
    async with SafeFetcher() as fetcher:
        for site in sites:
            with serve(site.root) as base:
                for name in site.pages[:per_site]:
                    page = await fetcher.fetch(f"{base}/{name}")
                    got.append((site, name, page.body, page.content_type))
    return got


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-site", type=int, default=8)
    parser.add_argument("--extractors", default=",".join(EXTRACTORS))
    args = parser.parse_args()
    sites = [s for s in SITES if all((s.root / p).is_file() for p in s.pages)]
    for s in SITES:
        if s not in sites:
            print(f"(skipped {s.name}: {s.root} is not installed)", file=sys.stderr)
    pages = anyio.run(fetch_all, sites, args.per_site)
    names = args.extractors.split(",")
    if "trafilatura" in names and importlib.util.find_spec("trafilatura") is None:
        print("(skipped trafilatura: pip install -e '.[bench]' in the checkout)", file=sys.stderr)
        names.remove("trafilatura")
    print(f"# Main-content extraction: {len(pages)} real documentation pages from {len(sites)} sites\n")
    print("| site | pages | extractor | main text kept | navigation kept | preview shows the opening "
          "| whole-page fallback | ms/page |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    totals: dict[str, list[Score]] = {n: [] for n in names}
    for site in sites:
        mine = [p for p in pages if p[0] is site]
        for name in names:
            scores = []
            for _, page, body, content_type in mine:
                known = truth(body, site)
                started = time.perf_counter()
                text, kind = EXTRACTORS[name](body, content_type, f"http://127.0.0.1/{site.name}/{page}")
                scores.append(score(text, kind, known, time.perf_counter() - started))
            totals[name] += scores
            print(_row(site.name, name, scores))
    for name in names:
        print(_row("**all**", name, totals[name]))


def _row(site: str, name: str, scores: list[Score]) -> str:
    n = len(scores)
    return (f"| {site} | {n} | {name} | {sum(s.kept for s in scores) / n:.1%} | "
            f"{sum(s.nav_kept for s in scores) / n:.1%} | {sum(s.preview_opening for s in scores) / n:.1%} | "
            f"{sum(s.fallback for s in scores)} of {n} | {1000 * sum(s.seconds for s in scores) / n:.0f} |")


if __name__ == "__main__":
    main()

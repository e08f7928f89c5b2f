"""Fetched documentation keeps its own structure: section titles from the page's headings (link text
only, no URLs), links within the site as their text, and sections repeated across a site stored once.
Real pages of four generators, saved as they were written (pages/generators/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_kernel.knowledge.chunking import chunk_document
from context_kernel.knowledge.model import Chunk
from context_kernel.knowledge.site_sections import SiteSections
from context_kernel.web.convert import convert

PAGES = Path(__file__).parent / "pages" / "generators"
BASE = "http://docs.example.org/"


def sections(name: str) -> tuple[str, list[str]]:
    page = convert((PAGES / name).read_bytes(), "text/html", BASE + name)
    return page.text, [c.title for c in chunk_document(page.text, name=page.name)]


@pytest.mark.parametrize(("name", "expected"), [
    ("mdbook-rustc-json.html", ["JSON Output", "JSON Output > Diagnostics", "JSON Output > Artifact notifications"]),
    ("rustdoc-fn-canonicalize.html", ["Function std::fs::canonicalize",
                                      "Function std::fs::canonicalize > Platform-specific behavior",
                                      "Function std::fs::canonicalize > Errors"]),
    ("rustdoc-struct-child.html", ["Struct std::process::Child > Warning",
                                   "Struct std::process::Child > Implementations > impl Child"]),
    ("sphinx-fnmatch.html", ["`fnmatch` — Unix filename pattern matching"]),
    ("mkdocs-pymdownx-caret.html", ["Caret > Overview", "Caret > Insert", "Caret > Superscript", "Caret > Options"]),
    # Texinfo writes no h1: its <title> ("Patterns (Lexical Analysis With Flex, for Flex 2.6.4)") headed every
    # section title of the page, the manual's name with it; the page's own first heading does now.
    ("texinfo-flex-patterns.html", ["6 Patterns", "6 Patterns > ‘x’", "6 Patterns > ‘r/s’"]),
    ("texinfo-flex-simple-examples.html", ["4 Some Simple Examples"]),  # its node is "Simple Examples"
    ("texinfo-flex-matching.html", ["7 How the Input Is Matched"]),
    # Asciidoctor writes the h1 in `<div id="header">`, dropped as a site's header: the FAQ's sections were
    # titled "1. General", without a word of the page's name.
    ("asciidoctor-faq.html", ["Tidepool FAQ (Frequently Asked Questions) > 1. General",
                              "Tidepool FAQ (Frequently Asked Questions) > 2. Synchronisation > "
                              "2.1. How often are notes synchronised?"]),
])
def test_section_titles_come_from_the_page_headings(name: str, expected: list[str]) -> None:
    _, titles = sections(name)
    for title in expected:
        assert title in titles, titles
    assert not any("http" in t or "](" in t or "**" in t for t in titles), titles
    assert "(part 2)" not in " ".join(titles[:2])  # an mdBook page lost every heading to readability
    assert not any("Lexical Analysis With Flex" in t for t in titles), titles


@pytest.mark.parametrize("name", sorted(p.name for p in PAGES.glob("*.html")))
def test_links_within_the_site_keep_their_text_only(name: str) -> None:
    text, _ = sections(name)
    assert BASE not in text  # no same-site URL left in the content
    assert "javascript:" not in text


def test_mdbook_headings_and_their_text_survive() -> None:
    text, _ = sections("mdbook-rustc-json.html")
    assert "## Diagnostics" in text
    assert "Diagnostics have the following format" in text


def test_a_section_repeated_on_another_page_of_the_site_is_stored_once() -> None:
    seen = SiteSections()
    impl = Chunk("Blanket Implementations > impl<T> Any for T",
                 "#### impl<T> Any for T\nGets the TypeId of self. Read more about type ids and reflection.", "prose")
    first = [Chunk("Struct A", "# Struct A\nA's own text.", "prose"), impl]
    second = [Chunk("Struct B", "# Struct B\nB's own text.", "prose"),
              Chunk("Blanket Implementations > impl<T> Any for T", impl.content, "prose")]
    assert seen.first_copies(BASE + "a.html", "a", first) == first
    assert [c.title for c in seen.first_copies(BASE + "b.html", "b", second)] == ["Struct B"]
    # the page that holds it first keeps it when fetched again; another site keeps its own copy
    assert seen.first_copies(BASE + "a.html", "a", first) == first
    assert seen.first_copies("http://other.example.org/b.html", "c", second) == second
    # a section that is only its heading line is no repeat
    bare = [Chunk("T", "# T", "prose"), Chunk("T > Examples", "## Examples", "prose")]
    assert seen.first_copies(BASE + "c.html", "d", bare) == bare


def test_each_documented_function_of_a_sphinx_page_is_a_section_titled_by_its_signature() -> None:
    """Sphinx puts each function in a <dl>: as paragraphs, the page was one section for four functions."""
    text, titles = sections("sphinx-fnmatch.html")
    for signature in ("fnmatch.fnmatch(filename, pattern)", "fnmatch.fnmatchcase(filename, pattern)",
                      "fnmatch.filter(names, pattern)", "fnmatch.translate(pattern)"):
        assert f"## {signature}" in text  # all at one level, below the page's title
        assert any(t.endswith(f"> {signature}") for t in titles), titles


ASCIIDOC = """<!DOCTYPE html><html><head><title>tool(1)</title></head><body class="manpage">
<div id="header"><h1>tool(1) Manual Page</h1><h2>NAME</h2><div class="sectionbody"><p>tool - does things</p></div></div>
<div id="content"><div class="sect1"><h2 id="_options">OPTIONS</h2><div class="sectionbody"><div class="dlist"><dl>
<dt class="hdlist1">-C &lt;path&gt;</dt><dd><p>Run as if tool was started in &lt;path&gt; instead of the current
working directory.</p></dd>
<dt class="hdlist1">--follow</dt><dd><p>Continue listing the history of a file beyond renames.</p>
<div class="dlist"><dl><dt class="hdlist1">nested</dt><dd><p>a list inside an entry stays a list</p></dd></dl>
</div></dd>
<dt class="hdlist1"><code>--no-pager</code></dt><dd><p>Do not pipe output into a pager.</p></dd>
<dt class="hdlist1">-q</dt>
<dt class="hdlist1">--quiet</dt><dd><p>Print nothing but errors.</p></dd>
</dl></div></div></div>
<div class="sect1"><h2 id="_notes">NOTES</h2><div class="sectionbody"><div class="dlist"><dl>
<dt class="hdlist1">When the repository is shallow and the history you ask for reaches past its boundary, tool
stops there and says so instead of failing, which is what most scripts expect from it anyway.</dt>
<dd><p>A term that is a sentence is not a name.</p></dd></dl></div></div></div>
</div></body></html>"""


def test_a_manuals_option_list_becomes_one_section_per_option() -> None:
    """asciidoc (and DocBook) write OPTIONS as a definition list: each option is now a section titled by
    it, where it was a paragraph among forty in parts titled "OPTIONS (part 3)"."""
    page = convert(ASCIIDOC.encode(), "text/html", BASE + "tool.html")
    chunks = chunk_document(page.text, name=page.name)
    by_title = {c.title: c.content for c in chunks}
    assert "instead of the current" in by_title["tool(1) Manual Page > OPTIONS > -C <path>"]
    assert "beyond renames" in by_title["tool(1) Manual Page > OPTIONS > --follow"]
    assert "a list inside an entry stays a list" in by_title["tool(1) Manual Page > OPTIONS > --follow"]
    assert "into a pager" in by_title["tool(1) Manual Page > OPTIONS > --no-pager"]
    assert not any("nested" in t or "shallow" in t for t in by_title)  # a nested list, a sentence: not headings
    # Several terms of one entry (an option's short and long forms) are one heading: as two, `-q` was an
    # empty section and its description sat under `--quiet` alone.
    assert "nothing but errors" in by_title["tool(1) Manual Page > OPTIONS > -q, --quiet"], list(by_title)
    assert all(content.strip() for content in by_title.values()), by_title


def test_a_pager_of_next_previous_and_up_links_is_navigation() -> None:
    """Texinfo's bar ("Next: Actions, Previous: Patterns, Up: flex [Contents][Index]", links marked rel=next,
    prev, up) named no class we knew and stood above the heading of every page of the manual."""
    text, titles = sections("texinfo-flex-matching.html")
    assert "Previous:" not in text and "[Contents]" not in text, text[:300]
    assert titles[0] == "7 How the Input Is Matched", titles

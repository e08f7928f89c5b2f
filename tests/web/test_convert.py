"""Fetched bodies become indexable text: real readability, real html-to-markdown, no network."""

from __future__ import annotations

import gzip
import io
import json
import re
import time
import zipfile
from pathlib import Path

import lxml.html
import pytest

from context_kernel.web.convert import (
    Converted,
    convert,
    decode_body,
)
from context_kernel.web.errors import UnsupportedContent
from context_kernel.web.outcomes import preview

PAGES = Path(__file__).parent / "pages"
URL = "https://docs.example.com/guide/page.html"


def page(name: str) -> bytes:
    return (PAGES / name).read_bytes()


def fences(markdown: str) -> list[str]:
    """The info string of every opening code fence, in order."""
    languages, open_fence = [], ""
    for line in markdown.splitlines():
        match = re.match(r"(`{3,})(.*)$", line)
        if match and not open_fence:
            open_fence = match.group(1)
            languages.append(match.group(2).strip())
        elif match and match.group(1) == open_fence and not match.group(2).strip():
            open_fence = ""
    return languages


# --- HTML: readability path and fallback ----------------------------------------------------

def test_an_article_keeps_its_text_and_loses_nav_footer_ads_and_scripts() -> None:
    got = convert(page("article.html"), "text/html; charset=utf-8", "https://blog.example.com/posts/fts5")

    assert got.kind == "html"
    assert got.name == "page.md"
    assert got.title == "Why SQLite FTS5 Is Enough For Local Search"
    assert got.text.startswith("# Why SQLite FTS5 Is Enough For Local Search\n")
    assert "## Ranking with BM25" in got.text
    assert "## What we would do differently" in got.text
    assert "reciprocal\nrank fusion" in got.text or "reciprocal rank fusion" in got.text
    # A link within the site keeps its text only: its URL would cost bytes in every search reply
    assert "post about tokenizers" in got.text and "blog.example.com/posts/fts5-tokenizers" not in got.text
    for chrome in ("Archive", "Subscribe now", "BUY CHEAP", "Copyright", "Ten reasons", "secret-tracker-token",
                   ".ad {"):
        assert chrome not in got.text


def test_a_reference_page_that_readability_would_cut_keeps_every_section_and_code_language() -> None:
    got = convert(page("docs.html"), "text/html", URL)

    assert got.kind == "html-fallback"
    assert got.title == "widgetlib API reference"
    headings = [line for line in got.text.splitlines() if line.startswith("#")]
    assert headings == ["# widgetlib API reference", "## Install", "## Client", "### In JavaScript", "## Options",
                        "## fetch_widget", "## delete_widget", "## Command line"]
    # Sphinx highlight-bash, GitHub highlight-source-python, language-javascript, data-lang, lang-js
    assert fences(got.text) == ["bash", "python", "javascript", "python", "js", "bash"]
    assert "```bash\npip install widgetlib\n```" in got.text
    assert "client = Client(timeout=5)" in got.text
    # sidebar (role=navigation), its search form, footer (role=contentinfo), pilcrow permalinks
    for chrome in ("Search the docs", "Copyright", "¶", "[Install](#install)"):
        assert chrome not in got.text


def test_tables_become_gfm_pipe_tables_and_links_within_the_site_become_their_text() -> None:
    got = convert(page("docs.html"), "text/html", URL)

    rows = [line for line in got.text.splitlines() if line.startswith("|")]
    assert re.fullmatch(r"\| Name +\| Type +\| Default +\|", rows[0])
    assert re.fullmatch(r"\| -+ \| -+ \| -+ \|", rows[1])
    assert rows[3].startswith("| `mode`") and r'`"a" \| "b"`' in rows[3]  # the pipe in a cell is escaped
    assert "the client guide" in got.text and "guide/clients.html" not in got.text


def test_an_index_page_of_many_short_sections_is_converted_whole() -> None:
    cards = "".join(f'<div class="card"><h2>Guide {i}</h2><p>What guide {i} covers.</p>'
                    f'<ul><li><a href="/g{i}/a">Part A</a></li><li><a href="/g{i}/b">Part B</a></li></ul></div>'
                    for i in range(12))
    story = "<div class='story'><p>" + "A long paragraph of prose, with commas, that readability likes. " * 8
    html = f"<html><head><title>Guides</title></head><body><h1>All guides</h1>{cards}{story}</p></div></body></html>"

    got = convert(html.encode(), "text/html", "https://example.com/")

    assert got.kind == "html-fallback"
    assert all(f"## Guide {i}" in got.text for i in range(12))
    assert "- [Part B](https://example.com/g11/b)" in got.text


@pytest.mark.parametrize(("markup", "language"), [
    ('<pre><code class="language-python">x = 1</code></pre>', "python"),
    ('<pre class="prettyprint lang-js">let x = 1</pre>', "js"),
    ('<div class="highlight highlight-source-python notranslate"><pre>x = 1</pre></div>', "python"),
    ('<div class="highlight-bash notranslate"><div class="highlight"><pre><span></span>ls</pre></div></div>', "bash"),
    ('<pre data-lang="ruby">puts 1</pre>', "ruby"),
    ('<div class="highlight"><pre><code class="language-go" data-lang="go">fmt.Println()</code></pre></div>', "go"),
    ('<div class="sourceCode"><pre class="sourceCode python"><code class="sourceCode python">x</code></pre></div>',
     "python"),
    ('<pre class="brush: js; gutter: false">var x;</pre>', "js"),
    ('<div class="language-rust highlighter-rouge"><div class="highlight"><pre><code>f()</code></pre></div></div>',
     "rust"),
    ('<div class="lang-en"><pre>plain words</pre></div>', ""),  # a human language is not a code language
    ('<pre class="highlight-text">plain</pre>', ""),
])
def test_code_blocks_are_fenced_with_their_language(markup: str, language: str) -> None:
    got = convert(f"<html><body><h1>T</h1><p>Example.</p>{markup}</body></html>".encode(), "text/html", URL)

    assert fences(got.text) == [language]


def test_code_that_contains_a_fence_gets_a_longer_fence() -> None:
    body = "<html><body><h1>T</h1><pre><code class='language-markdown'>```py\nx\n```</code></pre></body></html>"

    got = convert(body.encode(), "text/html", URL)

    assert "````markdown\n```py\nx\n```\n````" in got.text


def test_links_inside_code_keep_only_their_text() -> None:
    body = (b'<html><body><h1>Vec</h1><pre class="rust item-decl"><code>pub struct Vec&lt;T, A = '
            b'<a href="struct.Global.html" title="struct Global">Global</a>&gt;</code></pre></body></html>')

    got = convert(body, "text/html", URL)

    assert "```rust\npub struct Vec<T, A = Global>\n```" in got.text


def test_skip_links_and_icon_links_are_dropped() -> None:
    body = (b'<html><body><a class="skip" href="#main">Skip to main content</a><h1>Page</h1>'
            b'<p>Text <a href="/edit"><svg><path d="M0"/></svg></a> here.</p></body></html>')

    got = convert(body, "text/html", URL)

    assert got.text == "# Page\n\nText here.\n"


def test_code_in_a_hidden_tab_panel_is_kept() -> None:
    body = b"""<html><body><h1>Install</h1><p>Pick a tool.</p><div class="tabs">
      <div role="tabpanel"><pre><code class="language-bash">pip install x</code></pre></div>
      <div role="tabpanel" hidden><pre><code class="language-bash">conda install x</code></pre></div>
      </div></body></html>"""

    got = convert(body, "text/html", URL)

    assert "pip install x" in got.text and "conda install x" in got.text


def test_the_title_is_prepended_only_when_the_content_has_no_h1() -> None:
    with_h1 = convert(b"<html><head><title>Site | Page</title></head><body><h1>Real heading</h1><p>Body text.</p>"
                      b"</body></html>", "text/html", URL)
    without = convert(b"<html><head><title>Just A Title</title></head><body><p>Body text only.</p><pre>"
                      b"<code class='language-bash'># not a heading\nls</code></pre></body></html>", "text/html", URL)

    assert with_h1.text.startswith("# Real heading") and with_h1.text.count("\n# ") == 0
    assert without.title == "Just A Title"
    assert without.text.startswith("# Just A Title\n\nBody text only.")


def test_xhtml_with_an_xml_declaration_is_read() -> None:
    body = (b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
            b'"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"><html xmlns="http://www.w3.org/1999/xhtml">'
            b"<head><title>X</title></head><body><h1>Hello</h1><p>An XHTML body.</p></body></html>")

    got = convert(body, "application/xhtml+xml", URL)

    assert got.kind in ("html", "html-fallback")
    assert "# Hello" in got.text and "An XHTML body." in got.text


# --- no page makes it crash -----------------------------------------------------------------

@pytest.mark.parametrize(("body", "content_type", "expected"), [
    (b"", "text/html", Converted("", "page.md", None, "html")),
    (b"   \n", "text/html", Converted("", "page.md", None, "html")),
    (b"<!-- only a comment -->", "text/html", Converted("", "page.md", None, "html")),
    (b"", "application/json", Converted("", "data.json", None, "json")),
    (b"", None, Converted("", "page.txt", None, "text")),
    (b"", "text/markdown", Converted("", "page.md", None, "markdown")),
])
def test_an_empty_body_gives_empty_text_of_its_kind(body: bytes, content_type: str | None,
                                                   expected: Converted) -> None:
    assert convert(body, content_type, URL) == expected


@pytest.mark.parametrize("body", [
    b"<<<>>><div <p </b></i><html><html></head>text after junk",
    b"<table><tr><td><table><tr><td>cell</td></tr></tr></td></table>",
    b"<a " * 200_000,
    b"<script>" * 100_000,
    b"<!--" * 100_000,
    b"<p " * 100_000 + b">",
])
def test_malformed_markup_converts_without_raising_and_fast(body: bytes) -> None:
    start = time.monotonic()
    got = convert(body, "text/html", URL)
    assert isinstance(got.text, str)
    assert time.monotonic() - start < 10


def test_sniffing_a_run_of_comments_does_not_backtrack_exponentially() -> None:
    start = time.monotonic()
    got = convert(b"<!--a-->" * 400 + b"not html after all", "text/plain", URL)

    assert got.kind == "text"
    assert time.monotonic() - start < 10  # backtracking over 400 comments would take far longer


def test_nesting_deeper_than_libxml2_allows_still_keeps_the_words() -> None:
    for depth in (300, 5000):  # 300: past libxml2's default limit; 5000: past huge_tree's too
        body = ("<html><body><p>before</p>" + "<div>" * depth + "<p>deep text</p>" + "</div>" * depth +
                "<script>var hidden = 1;</script><p>after &amp; done</p></body></html>").encode()

        got = convert(body, "text/html", URL)

        assert got.kind == "html-fallback"
        assert [w for w in got.text.split("\n") if w] == ["before", "deep text", "after & done"]
    unclosed = ("<html><body>" + "<font>" * 5000 + "<p>old forum post</p></body></html>").encode()
    assert "old forum post" in convert(unclosed, "text/html", URL).text


def test_attribute_soup_is_trimmed_instead_of_parsed_for_minutes() -> None:
    soup = " ".join(f'data-a{i}="{i}"' for i in range(100_000))
    body = f'<html><body><h1>T</h1><p {soup} class="x">soup survived</p><a {soup} href="/next">next</a></body></html>'

    start = time.monotonic()
    got = convert(body.encode(), "text/html", URL)

    assert time.monotonic() - start < 10
    assert "soup survived" in got.text
    assert "next" in got.text


# --- JSON, markdown, text -------------------------------------------------------------------

def test_a_json_object_is_pretty_printed_with_its_unicode_kept() -> None:
    got = convert('{"name":"café","tags":["a","b"],"n":1}'.encode(), "application/json; charset=utf-8", URL)

    assert got == Converted('{\n  "name": "café",\n  "tags": [\n    "a",\n    "b"\n  ],\n  "n": 1\n}',
                            "data.json", None, "json")


def test_an_array_of_records_is_json() -> None:
    records = [{"id": i, "title": f"Issue {i}", "labels": ["bug"]} for i in range(3)]

    got = convert(json.dumps(records, separators=(",", ":")).encode(), "application/vnd.github+json", URL)

    assert got.kind == "json" and got.name == "data.json"
    assert json.loads(got.text) == records
    assert got.text.startswith('[\n  {\n    "id": 0,')


def test_invalid_json_is_indexed_as_text() -> None:
    got = convert(b'{"truncated": [1, 2,', "application/json", URL)

    assert got == Converted('{"truncated": [1, 2,', "data.txt", None, "json-invalid")


@pytest.mark.parametrize("content_type", [None, "application/octet-stream", "text/plain"])
def test_json_without_a_json_type_is_sniffed(content_type: str | None) -> None:
    got = convert(b'  [{"a": 1}]', content_type, "https://api.example.com/items")

    assert (got.kind, got.name, got.text) == ("json", "data.json", '[\n  {\n    "a": 1\n  }\n]')


def test_markdown_is_kept_as_is_and_titled_by_its_first_h1() -> None:
    text = "```bash\n# a comment, not a title\n```\n\n# Guide\r\n\nSome *text*.\n"

    served = convert(text.encode(), "text/markdown; charset=utf-8", URL)
    raw = convert(text.encode(), "text/plain", "https://raw.example.com/org/repo/main/README.md")

    assert served == Converted(text.replace("\r\n", "\n"), "page.md", "Guide", "markdown")
    assert raw == served


def test_plain_text_and_other_text_types_are_text() -> None:
    assert convert(b"line one\r\nline two\r\n", "text/plain", URL) == Converted(
        "line one\nline two\n", "page.txt", None, "text")
    assert convert(b"a,b\n1,2\n", "text/csv", URL).kind == "text"
    xml = convert(b"<?xml version='1.0'?><feed><title>t</title></feed>", "application/atom+xml", URL)
    assert (xml.kind, xml.name) == ("text", "page.txt")
    assert convert(b"key: value\n", "application/yaml", URL).kind == "text"


def test_html_served_as_text_plain_is_converted_as_html() -> None:
    body = b"<!DOCTYPE html>\n<html><head><title>Mislabelled</title></head><body><h1>Real page</h1><p>Body.</p>"

    got = convert(body, "text/plain", URL)

    assert got.kind in ("html", "html-fallback")
    assert got.text.startswith("# Real page")


# --- charsets -------------------------------------------------------------------------------

def test_windows_1252_declared_only_in_meta_is_decoded() -> None:
    body = ("<html><head><meta charset='windows-1252'><title>Caf\u00e9</title></head><body>"
            "<p>\u201cSmart quotes\u201d cost 5 \u20ac at the caf\u00e9.</p></body></html>").encode("cp1252")

    got = convert(body, "text/html", URL)

    assert "\u201cSmart quotes\u201d cost 5 \u20ac at the caf\u00e9." in got.text


def test_iso_8859_1_in_meta_http_equiv_is_read_as_windows_1252_like_browsers() -> None:
    body = (b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
            b"</head><body><p>na\xefve \x93quoted\x94 r\xe9sum\xe9</p></body></html>")

    assert "na\u00efve \u201cquoted\u201d r\u00e9sum\u00e9" in convert(body, "text/html", URL).text


def test_shift_jis_declared_in_the_header_is_decoded() -> None:
    text = "日本語のドキュメント。検索できるテキストです。"
    body = f"<html><body><h1>見出し</h1><p>{text}</p></body></html>".encode("shift_jis")

    got = convert(body, "text/html; charset=Shift_JIS", URL)

    assert "# 見出し" in got.text and text in got.text


def test_the_header_charset_wins_over_meta_and_a_bom_wins_over_both() -> None:
    body = "<meta charset='windows-1252'><p>\u00e9t\u00e9</p>".encode()
    assert decode_body(body, "text/html; charset=utf-8").endswith("\u00e9t\u00e9</p>")
    assert decode_body(b"\xef\xbb\xbfcaf\xc3\xa9", "text/plain; charset=iso-8859-1") == "caf\u00e9"
    assert decode_body("\ufeffhello".encode("utf-16-le"), None) == "hello"


def test_a_meta_charset_inside_json_or_markdown_is_not_a_label() -> None:
    body = "<meta charset='windows-1252'> means caf\u00e9".encode()

    assert decode_body(body, "text/markdown") == "<meta charset='windows-1252'> means caf\u00e9"


def test_undeclared_legacy_text_is_guessed() -> None:
    text = ("Съешь же ещё этих мягких французских булок, да выпей чаю. Широкая электрификация "
            "южных губерний даст мощный толчок подъёму сельского хозяйства. ") * 3

    assert decode_body(text.encode("cp1251"), None) == text


def test_undecodable_bytes_become_replacement_characters() -> None:
    assert decode_body(b"ok \xff\xfe\xfd end", "text/plain; charset=utf-8") == "ok \ufffd\ufffd\ufffd end"
    got = convert(b"<html><body><p>bad \xc3\x28 byte</p></body></html>", "text/html; charset=utf-8", URL)
    assert "bad \ufffd( byte" in got.text


@pytest.mark.parametrize("label", ["no-such-charset", "base64", "rot13", "hex", "zlib", "unicode-escape",
                                   "undefined", "idna"])
def test_a_charset_label_that_is_not_a_text_encoding_is_ignored(label: str) -> None:
    assert decode_body("caf\u00e9 \\x41".encode(), f"text/plain; charset={label}") == "caf\u00e9 \\x41"


def test_utf16_declared_in_the_header_without_a_bom_is_decoded() -> None:
    got = convert("wide text".encode("utf-16-be"), "text/plain; charset=UTF-16BE", URL)

    assert got.text == "wide text"


# --- binary types ---------------------------------------------------------------------------

def _zip_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", "hello")
    return buffer.getvalue()


@pytest.mark.parametrize(("body", "content_type", "named"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png", "image/png"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "application/octet-stream", "PNG image"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", None, "JPEG image"),
    (b"GIF89a\x01\x00\x01\x00", "text/html", "GIF image"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "application/pdf", "application/pdf"),
    (b"%PDF-1.7\n1 0 obj\n", "text/plain", "PDF document"),
    (_zip_bytes(), "application/octet-stream", "ZIP archive"),
    # mtime=0: no clock in the bytes, which are in the test's id (every xdist worker must collect the same ids)
    (gzip.compress(b"hello", mtime=0), None, "gzip data"),
    (b"text\x00with\x00nuls", "text/plain", "binary data"),
    (b"\xde\xad\xbe\xef\x01\x02" * 10, "application/octet-stream", "binary data"),
    (b"plain words", "video/mp4", "video/mp4"),
])
def test_binary_bodies_are_refused_naming_their_type(body: bytes, content_type: str | None, named: str) -> None:
    with pytest.raises(UnsupportedContent) as caught:
        convert(body, content_type, URL)

    first_line = str(caught.value).splitlines()[0]
    assert named in first_line
    assert "only text, HTML, JSON and markdown are indexed" in first_line
    assert caught.value.content_type == (content_type or "no Content-Type")


def test_utf16_text_is_not_mistaken_for_binary() -> None:
    got = convert("\ufeffhello wide world".encode("utf-16-le"), "text/plain", URL)

    assert got.text == "hello wide world"


def test_octet_stream_that_is_plain_utf8_text_is_indexed() -> None:
    got = convert("notes: café\n".encode(), "application/octet-stream", URL)

    assert (got.kind, got.text) == ("text", "notes: café\n")


def test_a_docbook_manual_page_keeps_its_text_and_drops_its_navigation_tables_and_toc() -> None:
    # Valgrind's, PostgreSQL's and Debian's manuals: navigation tables above and below, a table of
    # contents under the title, code blocks readability drops (so the whole-page path is taken).
    got = convert(page("docbook-manual.html"), "text/html", URL)
    text = got.text
    assert text.startswith("# 4. Memcheck: a memory error detector\n\nTo use this tool"), text[:400]
    assert "Valgrind User Manual" not in text and "Table of Contents" not in text
    assert text.count("Section 3 of the memory checker") == 1  # the heading, not its TOC entry too
    assert all(f"./prog{i}" in text for i in range(1, 6)) and "--leak-check=full" in text
    assert preview(text).startswith("# 4. Memcheck: a memory error detector\n\nTo use this tool")


def test_a_node_api_page_keeps_its_api_and_drops_the_side_column_version_picker_and_toc() -> None:
    got = convert(page("node-api.html"), "text/html", URL)
    text = got.text
    assert "Module number" not in text and "About this documentation" not in text  # the side column
    assert "18.x" not in text and "Other versions" not in text  # the version picker
    assert text.count("fs.function7(path[, options], callback)") == 1  # its heading, not a TOC line too
    assert all(f"function{i}('/tmp/file{i}'" in text for i in range(12))
    assert "```js\nimport { function0 } from 'node:fs';" in text
    opening = preview(text)
    assert "The `node:fs` module enables interacting with the file system" in opening[:600], opening[:600]


def test_a_page_that_is_a_list_of_links_keeps_them() -> None:
    links = "".join(f'<li><a href="/api/m{i}.html">Module {i}</a></li>' for i in range(40))
    html = f"<html><head><title>Index</title></head><body><h1>API index</h1><div class='toc'><ul>{links}</ul></div>" \
           "<p>Pick a module.</p></body></html>"
    got = convert(html.encode(), "text/html", "https://example.com/")
    assert "- [Module 39](https://example.com/api/m39.html)" in got.text  # the page is its links


def test_a_summary_that_lost_a_few_of_the_page_s_tables_is_not_the_page() -> None:
    # Readability drops a few of a manual's admonition and data tables (Debian's reference: 14 of
    # 84 in one chapter, a sixth of its words); keeping half of them was accepted, losing those.
    from context_kernel.web.html import _keeps_enough

    tables = [f"<table><tr><td>Note {i}: a fact the reader needs, said once.</td></tr></table>" for i in range(10)]
    prose = "<p>" + "Words of the chapter that readability keeps as its content. " * 40 + "</p>"
    body = lxml.html.fromstring(f"<div>{prose}{''.join(tables)}</div>")
    summary = lxml.html.fromstring(f"<div>{prose}{''.join(tables[:8])}</div>")
    assert not _keeps_enough(summary, body)
    assert _keeps_enough(lxml.html.fromstring(f"<div>{prose}{''.join(tables)}</div>"), body)


def test_a_link_to_another_site_keeps_the_sentence_whole_and_its_address_after_the_paragraph() -> None:
    # rustdoc: "this converts the path to use [extended length path](https://docs.microsoft.com/…) syntax":
    # an agent (and a search) reads the sentence, and the address is still there, after it.
    body = (b'<html><body><h1>canonicalize</h1><p>On Windows, this converts the path to use '
            b'<a href="https://docs.microsoft.com/naming-a-file">extended length path</a> syntax, which allows '
            b'longer names. See <a href="https://www.rfc-editor.org/rfc/rfc3986"><code>RFC 3986</code></a>.</p>'
            b'<p>Mirrors: <a href="https://m.example.org/">m.example.org</a> and '
            b'<a href="https://n.example.org/">https://n.example.org/</a>.</p></body></html>')

    got = convert(body, "text/html", URL)

    assert "On Windows, this converts the path to use extended length path syntax, which allows longer names." \
        in got.text, got.text
    assert "See `RFC 3986`." in got.text
    assert "(extended length path: https://docs.microsoft.com/naming-a-file; RFC 3986: " \
           "https://www.rfc-editor.org/rfc/rfc3986)" in got.text
    # a link that shows its own address is not repeated
    assert "Mirrors: m.example.org and https://n.example.org/. (m.example.org: https://m.example.org/)" in got.text


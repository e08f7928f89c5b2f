"""HTML to Markdown: the main content of a page, its title, code blocks with their language.

HTML goes through readability-lxml for the main content, then to Markdown with
html-to-markdown. We tried markdownify, html2text and html-to-markdown on the same pages:
html2text writes code as indented blocks (the language is lost, fences are what the chunker
keeps whole) and tables in a non-GFM form; markdownify keeps fences but ignores the language
unless called back, leaves `|` unescaped inside table cells (the row splits) and a fence inside
code closes the block early, and it recurses per nesting level (RecursionError on deep pages,
~1 s for a 2 MB page). html-to-markdown writes ATX headings, GFM pipe tables with `\\|`
escaped, longer fences around code that holds ```, reads `language-*`/`lang-*`, keeps the text
of tab panels a browser hides at first, caps its own depth and converts 2 MB in ~50 ms.
Languages it does not read (GitHub's `highlight-source-*`, Sphinx's `highlight-*`, pandoc's
`sourceCode python`, `data-lang`) are moved onto `<code class="language-*">` first.

`convert.py` decides what a body is and calls `convert_html` for HTML. `Converted` and
`first_h1` live here, in a module that imports none of `convert.py`'s, so `convert.py` can use
them without an import cycle. The steps live next to it, each in the module of what it handles:
the tree and plain words (`markup.py`), chrome and navigation (`navigation.py`), code blocks'
languages (`code_blocks.py`), links (`links.py`), definition lists of names (`definition_lists.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import html_to_markdown
import lxml.html
from readability import Document

from .code_blocks import label_code_blocks
from .definition_lists import terms_as_headings
from .links import drop_noise_links, unwrap_heading_links, unwrap_site_links
from .markup import HEADINGS, parse_html, plain_text, text_size
from .navigation import drop_chrome

# readability keeping less than this share of the cleaned page's text means it picked one
# section of an index or reference page, not an article: convert the whole cleaned page.
MIN_READABILITY_SHARE = 0.3
# readability parses three times and scores every node in Python, ~2 s per MB of cleaned HTML;
# pages past this are single-page references, where the whole page is the answer anyway.
MAX_READABILITY_CHARS = 1_000_000


@dataclass(frozen=True)
class Converted:
    """What a fetched body became: the text to index, and the name that picks its chunker."""

    text: str            # what gets indexed
    name: str            # a file-like name that selects the chunker: "page.md", "data.json", "page.txt"
    title: str | None    # page title when known
    kind: str            # "html" | "html-fallback" | "json" | "json-invalid" | "markdown" | "text"


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def first_h1(markdown: str) -> str | None:
    """The first ATX level-1 heading outside code fences (a `# comment` in bash is not one)."""
    fence = ""
    for line in markdown.splitlines():
        if match := _FENCE.match(line):
            marker = match.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker):]:
                fence = ""
        elif not fence and line.startswith("# "):
            return line[2:].strip().strip("#").strip() or None
    return None


# --- HTML -----------------------------------------------------------------------------------

_LEADING_RULES = re.compile(r"\A(?:\s*(?:-{3,}|\*{3,}|_{3,})[ \t]*\n)+\s*")
_OPENING_HEADING = re.compile(r"#{1,6} (\S[^\n]*)")
_NUMBERING = re.compile(r"^(?:[\dA-Z]+\.)*\d+\.?\s+")  # "6 ", "16.2 ", "A.1 "
_MARKDOWN_OPTIONS = html_to_markdown.ConversionOptions(
    heading_style="atx", code_block_style="backticks", bullets="-", extract_metadata=False,
    hidden_content="reachable",  # inactive tabs of code examples are still documentation
    inline_data_media="alt_text_only",  # a base64 image is not text anyone searches for
    preprocessing=html_to_markdown.PreprocessingOptions(enabled=False))  # drop_chrome decides what goes


def convert_html(text: str, url: str) -> Converted:
    """Markdown of the page's main content ("html"), or of the whole cleaned page ("html-fallback")."""
    root = parse_html(text)
    if root is None:  # nothing lxml could read, or it stopped early: keep the words at least
        return words_only(text)
    # The page's own h1, before chrome goes: Asciidoctor writes it in `<div id="header">`, which is dropped as
    # a site's header, and its FAQ's sections were then titled "1. General" with no word of the page's name.
    page_h1 = next((" ".join(h.text_content().split()) for h in root.iter("h1") if h.text_content().strip()), "")
    drop_chrome(root)
    label_code_blocks(root)
    drop_noise_links(root)
    unwrap_heading_links(root)
    if url.startswith(("http://", "https://")):
        root.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
    body = root.find("body")
    body = root if body is None else body
    heading = next((" ".join(h.text_content().split()) for h in body.iter(*HEADINGS) if h.text_content().strip()), "")
    summary, short_title = _readability(lxml.html.tostring(root, encoding="unicode"))
    title = short_title or _title_of(root)
    if summary is not None and _keeps_enough(summary, body):
        chosen, kind = summary, "html"
    else:
        chosen, kind = body, "html-fallback"
    unwrap_site_links(chosen, url)
    terms_as_headings(chosen)
    markdown = _to_markdown(lxml.html.tostring(chosen, encoding="unicode")).strip()
    if not markdown:  # the converter gave up (depth limit, panic): keep the words at least
        markdown = "\n".join(line for line in (" ".join(t.split()) for t in chosen.itertext()) if line)
    markdown = _LEADING_RULES.sub("", markdown)  # a navigation bar's separator, left at the top
    if markdown and first_h1(markdown) is None and (top := page_h1 or _page_heading(heading, title)):
        opening = _OPENING_HEADING.match(markdown)
        # A page that opens with its own first heading is headed by it already ("4 Some Simple Examples" on
        # the page titled "Simple Examples (Lexical Analysis With Flex, for Flex 2.6.4)").
        if opening is None or opening[1].strip() not in ((top,) if page_h1 else (top, heading)):
            markdown = f"# {top}\n\n{markdown}"
    return Converted(markdown + "\n" if markdown else "", "page.md", title, kind)


def words_only(markup: str) -> Converted:
    """The page's words without markup: lxml could not parse it, or `convert_html` failed on it."""
    plain = plain_text(markup)
    return Converted(plain + "\n" if plain else "", "page.md", None, "html-fallback" if plain else "html")


def _readability(markup: str) -> tuple[lxml.html.HtmlElement | None, str]:
    """The main content as readability sees it, and its short title; (None, "") when it fails."""
    if len(markup) > MAX_READABILITY_CHARS:
        return None, ""
    try:
        document = Document(markup)
        title = " ".join((document.short_title() or "").split())
        summary = document.summary(html_partial=True)
        return (lxml.html.fromstring(summary) if summary.strip() else None), title
    except Exception:  # noqa: BLE001 - Unparseable, RecursionError on deep pages, lxml errors: whole page
        return None, ""


def _keeps_enough(summary: lxml.html.HtmlElement, body: lxml.html.HtmlElement) -> bool:
    """Readability picked the content rather than one section of an index or reference page."""
    if text_size(summary) < MIN_READABILITY_SHARE * text_size(body):
        return False
    # Readability drops small code blocks and tables it scores as boilerplate; for documentation
    # a lost code block is a lost answer, so any lost one sends the page down the fallback path,
    # and so does a tenth of the tables lost (Debian's manuals: notes and option tables; keeping
    # half was accepted and lost a sixth of a chapter's words). The fallback drops navigation.
    for tags, floor, share in ((HEADINGS, 3, 0.5), (("pre",), 1, 1.0), (("table",), 1, 0.9)):
        in_body = sum(1 for _ in body.iter(*tags))
        if in_body >= floor and sum(1 for _ in summary.iter(*tags)) < share * in_body:
            return False
    return True


def _page_heading(heading: str, title: str | None) -> str | None:
    """What heads a page that has no h1: its first heading when that restates its <title> (Texinfo's
    "16.2 Options Affecting Scanner Behavior" for "Options Affecting Scanner Behavior (Lexical Analysis With
    Flex, for Flex 2.6.4)"), else the title. The title alone put the manual's name into every section title
    of every page, where it is ranked (a title weighs five times) and shown; readability may also drop that
    heading, leaving a page's options without the section they belong to."""
    name = _NUMBERING.sub("", heading).strip().lower()
    if heading and title and name and name in title.lower():
        return heading
    return title


def _title_of(root: lxml.html.HtmlElement) -> str | None:
    for path in (".//title", ".//h1"):
        el = root.find(path)
        if el is not None and (title := " ".join(el.text_content().split())):
            return title
    return None


def _to_markdown(markup: str) -> str:
    try:
        return html_to_markdown.convert(markup, _MARKDOWN_OPTIONS).content or ""
    except Exception:  # noqa: BLE001 - its ConversionError, PanicError, ...: the caller keeps plain text
        return ""

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
`sourceCode python`, `data-lang`) are moved onto `<code class="language-*">` here first.

`convert.py` decides what a body is and calls `convert_html` for HTML. `Converted` and
`first_h1` live here, in the module that imports nothing of its siblings, so `convert.py` can
use them without an import cycle.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import html_to_markdown
import lxml.html
from lxml import etree
from readability import Document

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
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*>")  # lxml refuses str input that declares an encoding
_TAG = re.compile(r"<[^<>]*>")  # [^<>]: each scan stops at the next "<", so linear on any input
_BLOCK_TAG = re.compile(r"<(?:br|/?(?:p|div|h[1-6]|li|dt|dd|tr|pre|table|section|article|blockquote))\b[^<>]*>",
                        re.IGNORECASE)
_RAW_TEXT_START = re.compile(r"<(script|style)\b", re.IGNORECASE)
_NEVER_CONTENT = ("script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
                  "canvas", "button")
_CHROME = ("nav", "footer", "aside", "form")
_CHROME_ROLES = "//*[@role='navigation' or @role='banner' or @role='contentinfo']"
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Blocks that may be navigation by name or by link density; what names them so.
_BLOCKS = ("div", "table", "ul", "ol", "details", "section", "header", "p", "dl")
_NAV_NAMES = re.compile(r"(?:^|[\s_-])(?:nav|navbar|navheader|navfooter|navigation|toc|sidebar|sphinxsidebar|related"
                        r"|breadcrumbs?|menu|mobile-nav|pagination|pager|footer)(?:$|[\s_-])", re.IGNORECASE)
_LINK_DENSITY = 0.6   # a block whose text is at least this share link text is a list of links
_MIN_LINK_BLOCK = 40  # characters: "See also: [json]" inside a paragraph is not a block of links
# A longer URL is a program's state (a playground link carrying the example's code), not a place to read.
_MAX_KEPT_URL = 200
# A start tag this long is attribute soup: libxml2 checks attribute names pairwise, so 200k
# attributes take minutes to parse. Only the attributes conversion reads are kept.
_SOUP_TAG = re.compile(r"<([a-zA-Z][\w:-]*)(\s[^<>]{2048,})>")
_ATTRIBUTE = re.compile(r"""([^\s=/<>"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")
_KEPT_ATTRIBUTES = frozenset({"href", "src", "alt", "title", "class", "id", "lang", "data-lang", "data-language",
                              "role", "hidden", "colspan", "rowspan", "start", "charset", "http-equiv", "content"})
_ANCHOR_MARKS = frozenset({"¶", "#", "§", "🔗", "\u200b", "link", "permalink"})
_CODE_WRAPPER = re.compile(r"highlight|code|source|syntax", re.IGNORECASE)  # GitHub, Sphinx, Rouge, MkDocs...
_LANGUAGE_PREFIXES = ("language-", "lang-", "highlight-source-", "highlight-")
_NO_LANGUAGE = frozenset({"", "none", "text", "plain", "plaintext", "default", "nohighlight", "txt", "output"})
_BARE_LANGUAGES = frozenset({  # read as a language only on the <pre>/<code> itself (pandoc, rustdoc)
    "python", "py", "javascript", "js", "typescript", "ts", "jsx", "tsx", "bash", "sh", "shell", "zsh", "console",
    "powershell", "json", "yaml", "toml", "ini", "html", "xml", "css", "scss", "sql", "c", "cpp", "csharp", "java",
    "kotlin", "go", "rust", "ruby", "php", "perl", "swift", "scala", "haskell", "elixir", "lua", "dockerfile",
    "makefile", "diff", "r", "julia"})
_LANGUAGE = re.compile(r"[\w+#.-]{1,32}")
_MARKDOWN_OPTIONS = html_to_markdown.ConversionOptions(
    heading_style="atx", code_block_style="backticks", bullets="-", extract_metadata=False,
    hidden_content="reachable",  # inactive tabs of code examples are still documentation
    inline_data_media="alt_text_only",  # a base64 image is not text anyone searches for
    preprocessing=html_to_markdown.PreprocessingOptions(enabled=False))  # _drop_chrome decides what goes


def convert_html(text: str, url: str) -> Converted:
    """Markdown of the page's main content ("html"), or of the whole cleaned page ("html-fallback")."""
    root = _parse_html(text)
    if root is None:  # nothing lxml could read, or it stopped early: keep the words at least
        return words_only(text)
    # The page's own h1, before chrome goes: Asciidoctor writes it in `<div id="header">`, which is dropped as
    # a site's header, and its FAQ's sections were then titled "1. General" with no word of the page's name.
    page_h1 = next((" ".join(h.text_content().split()) for h in root.iter("h1") if h.text_content().strip()), "")
    _drop_chrome(root)
    _label_code_blocks(root)
    _drop_noise_links(root)
    _unwrap_heading_links(root)
    if url.startswith(("http://", "https://")):
        root.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
    body = root.find("body")
    body = root if body is None else body
    heading = next((" ".join(h.text_content().split()) for h in body.iter(*_HEADINGS) if h.text_content().strip()), "")
    summary, short_title = _readability(lxml.html.tostring(root, encoding="unicode"))
    title = short_title or _title_of(root)
    if summary is not None and _keeps_enough(summary, body):
        chosen, kind = summary, "html"
    else:
        chosen, kind = body, "html-fallback"
    _unwrap_site_links(chosen, url)
    _terms_as_headings(chosen)
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


def _parse_html(text: str) -> lxml.html.HtmlElement | None:
    """The document tree, or None when lxml read nothing or lost most of the text.

    libxml2 stops at nesting depth 256 (2048 with huge_tree) and then returns an empty tree, not
    a partial one; thousands of unclosed <font> or <div> tags in old pages get there.
    """
    text = _SOUP_TAG.sub(_trim_soup, _XML_DECL.sub("", text, count=1))
    if not text.strip():
        return None
    try:  # a parser per call: lxml parsers must not be shared between threads
        root = lxml.html.document_fromstring(text, parser=lxml.html.HTMLParser(huge_tree=True))
    except (etree.ParserError, ValueError, RecursionError):  # "Document is empty": comments only
        return None
    expected = len("".join(html.unescape(_TAG.sub("", text)).split()))
    return root if _text_size(root) >= expected / 2 else None


def words_only(markup: str) -> Converted:
    """The page's words without markup: lxml could not parse it, or `convert_html` failed on it."""
    plain = _plain_text(markup)
    return Converted(plain + "\n" if plain else "", "page.md", None, "html-fallback" if plain else "html")


def _plain_text(markup: str) -> str:
    """Words of a page lxml could not parse, blocks on their own lines. Regexes that stop at the
    next "<" and forward-only searches keep this linear (the stdlib HTMLParser is quadratic on
    "<a <a <a ...")."""
    kept, pos, lower = [], 0, markup.lower()
    while match := _RAW_TEXT_START.search(markup, pos):  # script/style: their text is not words
        kept.append(markup[pos:match.start()])
        close = lower.find(f"</{match.group(1).lower()}", match.end())
        pos = len(markup) if close < 0 else close
    kept.append(markup[pos:])
    text = html.unescape(_TAG.sub("", _BLOCK_TAG.sub("\n", "".join(kept))))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _trim_soup(match: re.Match[str]) -> str:
    kept: dict[str, str] = {}  # the first of each name, as an HTML parser would keep it
    for attribute in _ATTRIBUTE.finditer(match.group(2)):
        if (name := attribute.group(1).lower()) in _KEPT_ATTRIBUTES:
            kept.setdefault(name, attribute.group(0))
    return f"<{match.group(1)} {' '.join(kept.values())}>"


def _drop_chrome(root: lxml.html.HtmlElement) -> None:
    """Remove what is never content, then site chrome unless it holds most of the page."""
    for el in list(root.iter(*_NEVER_CONTENT)):
        el.drop_tree()
    total = _text_size(root)
    chrome = list(root.iter(*_CHROME)) + root.xpath(_CHROME_ROLES)
    # A page header goes; an article's own <header> carries its H1 and stays.
    chrome += [h for h in root.iter("header") if h.find(".//h1") is None
               and not any(a.tag in ("article", "main") for a in h.iterancestors())]
    for el in chrome:
        # ASP.NET wraps whole pages in one <form>: "chrome" holding most of the text is the page.
        if el.getparent() is not None and _text_size(el) <= total / 2:
            el.drop_tree()
    _drop_navigation(root, total)


def _drop_navigation(root: lxml.html.HtmlElement, total: int) -> None:
    """Navigation that is not marked up as <nav>: the blocks documentation generators name so
    (DocBook's navheader/navfooter tables and its table of contents, Sphinx's related bars and
    sidebar, a "toc" of Node's docs) and blocks that are mostly link text (a side column of links,
    a version picker). Each goes only while it holds at most half of the page (an index page made
    of links keeps them) and holds no code block."""
    pagers: set[str] = set()
    for el in list(root.iter(*_BLOCKS)):
        if el.getparent() is None or not _looks_like_navigation(el):
            continue
        size = _text_size(el)
        if size <= total / 2 and el.find(".//pre") is None:
            if _is_pager(el):
                pagers.add(" ".join(el.text_content().split()))
            el.drop_tree()
    # The same bar repeated at the foot of the page, its links without rel (Texinfo writes it so).
    for el in list(root.iter("div", "p")) if pagers else []:
        if el.getparent() is not None and " ".join(el.text_content().split()) in pagers:
            el.drop_tree()


def _looks_like_navigation(el: lxml.html.HtmlElement) -> bool:
    names = " ".join(el.get(a, "") for a in ("class", "id", "summary", "aria-label"))
    if _NAV_NAMES.search(names):
        return True
    if el.tag != "p" and _is_pager(el):
        return True
    if el.tag in ("p", "dl"):
        return False  # a paragraph or definition list of links is still prose
    size = _text_size(el)
    if size < _MIN_LINK_BLOCK:
        return False
    linked = sum(_text_size(a) for a in el.iter("a"))
    return linked >= _LINK_DENSITY * size


def _is_pager(el: lxml.html.HtmlElement) -> bool:
    """A short block of next / previous / up links and no heading: Texinfo's "Next: Actions, Previous:
    Patterns, Up: flex [Contents][Index]" bar (class "header", or "nav-panel" since Texinfo 7), which stood
    above the heading of every page of a manual."""
    rels = {rel for a in el.iter("a") for rel in (a.get("rel") or "").lower().split()}
    return (len(rels & _PAGER_RELS) >= 2 and _text_size(el) <= _MAX_PAGER_CHARS
            and next(el.iter(*_HEADINGS), None) is None)


_PAGER_RELS = frozenset({"next", "prev", "previous", "up"})
_MAX_PAGER_CHARS = 300
_HEADING = re.compile(r"h([1-6])$")
# A definition list's term becomes a heading when it is a name, not a sentence.
MAX_TERM_CHARS = 160


def _terms_as_headings(root: lxml.html.HtmlElement) -> None:
    """Each term of a definition list as a heading one level below the one above it.

    Manuals put their options, variables and functions in <dl>: asciidoc's `-C <path>`, Sphinx's
    `-B` and `shutil.copy(src, dst)`, DocBook's variablelist. Converted as they were, a term was a
    paragraph like any other, a whole OPTIONS section of forty options one chunk cut into parts
    titled "OPTIONS (part 3)", and a search for an option found a part that may not hold its text.
    As headings, each entry is a section titled by its name (`tig(1) > OPTIONS > -C <path>`).
    Lists inside a list, table or another definition list stay as they are, as do lists whose terms
    are sentences.
    """
    lists = {dl for dl in root.iter("dl") if _names_things(dl)}  # chosen before any is changed
    level = 1
    made: set[lxml.html.HtmlElement] = set()
    for el in list(root.iter()):
        if not isinstance(el.tag, str) or el in made:
            continue
        heading = _HEADING.match(el.tag)
        if heading:
            level = int(heading[1])
            continue
        if el not in lists:
            continue
        tag = f"h{min(level + 1, 6)}"
        term: lxml.html.HtmlElement | None = None  # the heading the entry's terms so far went into
        for child in list(el):
            if not isinstance(child.tag, str):
                continue
            if child.tag == "dt":
                text = " ".join(child.text_content().split())
                if term is not None:
                    # Several terms of one entry (`-q` then `--quiet`, asciidoc and DocBook write each in its
                    # own dt) are one heading: as two, the first was an empty section.
                    term.text = f"{term.text}, {text}"
                    el.remove(child)
                    continue
                for sub in list(child):
                    child.remove(sub)
                child.text, child.tag = text, tag
                child.attrib.clear()
                made.add(child)
                term = child
            elif child.tag == "dd":
                child.tag = "div"
                term = None
        el.tag = "div"


def _names_things(dl: lxml.html.HtmlElement) -> bool:
    """A definition list of names (options, functions, variables) at the top level of the text."""
    if any(a.tag in ("li", "table", "dd", "dl") for a in dl.iterancestors()):
        return False
    terms = dl.findall("dt")
    return bool(terms) and dl.find("dd") is not None and not any(
        len(" ".join(t.text_content().split())) > MAX_TERM_CHARS or t.find(".//pre") is not None for t in terms)


def _label_code_blocks(root: lxml.html.HtmlElement) -> None:
    """Put each code block's language where the converter reads it: <pre><code class="language-x">."""
    for pre in list(root.iter("pre")):
        for a in list(pre.iter("a")):  # rustdoc, javadoc link names in code: `[Global](url)` breaks the code
            a.drop_tag()
        if (language := _language_of(pre)) is None:
            continue
        children = list(pre)
        if len(children) == 1 and children[0].tag == "code" and not (pre.text or "").strip():
            code = children[0]
        else:
            code = lxml.html.Element("code")
            code.text, pre.text = pre.text, None
            for child in children:
                code.append(child)  # moves the child, its tail text with it
            pre.append(code)
        code.set("class", f"language-{language}")
        pre.set("class", f"language-{language}")


def _language_of(pre: lxml.html.HtmlElement) -> str | None:
    """From the block itself first, then from up to three wrappers that look like code wrappers
    (not any ancestor: `<body class="lang-en">` or `data-lang="fr"` name a human language)."""
    own = [el for el in (pre.find("code"), pre) if el is not None]
    wrappers = [el for el in list(pre.iterancestors())[:3] if _CODE_WRAPPER.search(el.get("class", ""))]
    for el in own + wrappers:
        for attribute in ("data-lang", "data-language"):
            if language := _clean_language(el.get(attribute, "")):
                return language
    for el in own + wrappers:
        if language := _language_from_classes(el.get("class", ""), bare=el in own):
            return language
    return None


def _language_from_classes(classes: str, *, bare: bool) -> str | None:
    if brush := re.search(r"brush:\s*([\w+#-]+)", classes):  # SyntaxHighlighter
        return _clean_language(brush.group(1))
    for token in classes.lower().split():
        for prefix in _LANGUAGE_PREFIXES:
            if token.startswith(prefix) and (language := _clean_language(token[len(prefix):])):
                return language
        if bare and token in _BARE_LANGUAGES:
            return token
    return None


def _clean_language(value: str) -> str | None:
    value = value.strip().lower()
    return None if value in _NO_LANGUAGE or not _LANGUAGE.fullmatch(value) else value


def _drop_noise_links(root: lxml.html.HtmlElement) -> None:
    """Icon links (their <svg> is gone) would be `[](...)` noise, a heading's permalink (¶) would
    end up in every section title the chunker builds from headings, and "Skip to content" is a
    control, not text."""
    for a in list(root.iter("a")):
        label, in_page = a.text_content().strip(), a.get("href", "").startswith("#")
        if a.find(".//img") is None and (not label or (in_page and (label in _ANCHOR_MARKS
                                                                     or label.lower().startswith("skip to")))):
            a.drop_tree()


def _unwrap_heading_links(root: lxml.html.HtmlElement) -> None:
    """A heading's text, not its link: mdBook writes `<h2><a class="header" href="#ar">ar</a></h2>`, and
    readability drops elements classed "header", leaving the heading empty (every section of the rustc
    book then went under the page's title, "(part 2)", "(part 3)"); rustdoc's headings are links too, and
    a URL in a section title is noise in every hit's heading line."""
    for heading in root.iter(*_HEADINGS):
        for a in list(heading.iter("a")):
            a.drop_tag()


_TEXT_BLOCKS = frozenset({"p", "li", "dd", "dt", "td", "th", "caption", "figcaption", "blockquote"})


def _unwrap_site_links(content: lxml.html.HtmlElement, url: str) -> None:
    """Links to the same site keep their text only: documentation cross-references every name
    (`[InvalidInput](https://host/std/io/enum.ErrorKind.html#variant.InvalidInput)`), and those URLs were
    a third of a rustdoc page's bytes, in every search reply and in the words a section is ranked by.
    Links to other sites keep their address after the paragraph (a cited RFC, a project's repository), a
    list item that is one link and every link of a page that is mostly links (an index: its links are its
    content) stay links."""
    host = urlsplit(url).netloc.lower() if url.startswith(("http://", "https://")) else ""
    size = _text_size(content)
    links = list(content.iter("a"))
    if size and sum(_text_size(a) for a in links) >= _LINK_DENSITY * size:
        return
    for img in list(content.iter("img")):
        if host and urlsplit(img.get("src", "")).netloc.lower() == host:  # the site's logo, icons, figures
            alt = " ".join((img.get("alt") or "").split())
            img.drop_tag() if not alt or alt.lower() in ("logo", "icon") else _replace_with_text(img, alt)
    cited: dict[lxml.html.HtmlElement, list[str]] = {}
    for a in links:
        href = a.get("href", "").strip()
        if href.lower().startswith("javascript:"):  # a control ("collapse all docs"), not a link
            a.drop_tree()
        elif (not href or href.startswith("#") or len(href) > _MAX_KEPT_URL
              or (host and urlsplit(href).netloc.lower() == host and not _is_list_entry(a))):
            a.drop_tag()
        elif not _is_list_entry(a) and (block := _block_of(a)) is not None:
            label = " ".join(a.text_content().split())
            if label and label != href and label != href.rstrip("/"):
                cited.setdefault(block, []).append(f"{label}: {href}")
            a.drop_tag()
    for block, refs in cited.items():  # after its text, so that the sentence reads (and is found) whole
        _append_text(block, f" ({'; '.join(refs)})")


def _block_of(a: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The paragraph, item or cell a link to another site sits in; its address goes after that block's
    text (`[extended length path](https://docs.microsoft.com/…) syntax` cut the sentence an agent reads
    and a search matches in two). None outside such a block or inside code: the link stays as it is."""
    for el in a.iterancestors():
        if el.tag in ("pre", "code"):
            return None
        if el.tag in _TEXT_BLOCKS:
            return el
    return None


def _append_text(el: lxml.html.HtmlElement, text: str) -> None:
    children = list(el)
    if children:
        children[-1].tail = (children[-1].tail or "").rstrip() + text
    else:
        el.text = (el.text or "").rstrip() + text


def _is_list_entry(a: lxml.html.HtmlElement) -> bool:
    """A list item that is just this link ("See also", a guide's parts): there the URL is the point."""
    item = a.getparent()
    return item is not None and item.tag == "li" and item.text_content().strip() == a.text_content().strip()


def _replace_with_text(el: lxml.html.HtmlElement, text: str) -> None:
    el.tail = text + (el.tail or "")
    el.drop_tag()


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
    if _text_size(summary) < MIN_READABILITY_SHARE * _text_size(body):
        return False
    # Readability drops small code blocks and tables it scores as boilerplate; for documentation
    # a lost code block is a lost answer, so any lost one sends the page down the fallback path,
    # and so does a tenth of the tables lost (Debian's manuals: notes and option tables; keeping
    # half was accepted and lost a sixth of a chapter's words). The fallback drops navigation.
    for tags, floor, share in ((_HEADINGS, 3, 0.5), (("pre",), 1, 1.0), (("table",), 1, 0.9)):
        in_body = sum(1 for _ in body.iter(*tags))
        if in_body >= floor and sum(1 for _ in summary.iter(*tags)) < share * in_body:
            return False
    return True


def _text_size(el: lxml.html.HtmlElement) -> int:
    return sum(len(t) - t.count(" ") - t.count("\n") for t in el.itertext())


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

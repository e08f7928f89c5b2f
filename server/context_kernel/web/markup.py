"""Reading a page's markup: its tree, the words of a page lxml cannot parse, the size of an element's text.

Every step of the conversion in `html.py` starts from or measures with these, so they live apart
from those steps: `navigation.py` and `links.py` import them without importing `html.py`.
"""

from __future__ import annotations

import html
import re

import lxml.html
from lxml import etree

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# A block whose text is at least this share link text is a list of links (navigation, an index page).
LINK_DENSITY = 0.6

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*>")  # lxml refuses str input that declares an encoding
_TAG = re.compile(r"<[^<>]*>")  # [^<>]: each scan stops at the next "<", so linear on any input
_BLOCK_TAG = re.compile(r"<(?:br|/?(?:p|div|h[1-6]|li|dt|dd|tr|pre|table|section|article|blockquote))\b[^<>]*>",
                        re.IGNORECASE)
_RAW_TEXT_START = re.compile(r"<(script|style)\b", re.IGNORECASE)
# A start tag this long is attribute soup: libxml2 checks attribute names pairwise, so 200k
# attributes take minutes to parse. Only the attributes conversion reads are kept.
_SOUP_TAG = re.compile(r"<([a-zA-Z][\w:-]*)(\s[^<>]{2048,})>")
_ATTRIBUTE = re.compile(r"""([^\s=/<>"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")
_KEPT_ATTRIBUTES = frozenset({"href", "src", "alt", "title", "class", "id", "lang", "data-lang", "data-language",
                              "role", "hidden", "colspan", "rowspan", "start", "charset", "http-equiv", "content"})


def parse_html(text: str) -> lxml.html.HtmlElement | None:
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
    return root if text_size(root) >= expected / 2 else None


def plain_text(markup: str) -> str:
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


def text_size(el: lxml.html.HtmlElement) -> int:
    """Characters of an element's text, spaces and newlines not counted (indentation is not text)."""
    return sum(len(t) - t.count(" ") - t.count("\n") for t in el.itertext())

"""Site chrome and navigation: what of a page is never content, and the blocks that only lead elsewhere."""

from __future__ import annotations

import re

import lxml.html

from .markup import HEADINGS, LINK_DENSITY, text_size

_NEVER_CONTENT = ("script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
                  "canvas", "button")
_CHROME = ("nav", "footer", "aside", "form")
_CHROME_ROLES = "//*[@role='navigation' or @role='banner' or @role='contentinfo']"
# Blocks that may be navigation by name or by link density; what names them so.
_BLOCKS = ("div", "table", "ul", "ol", "details", "section", "header", "p", "dl")
_NAV_NAMES = re.compile(r"(?:^|[\s_-])(?:nav|navbar|navheader|navfooter|navigation|toc|sidebar|sphinxsidebar|related"
                        r"|breadcrumbs?|menu|mobile-nav|pagination|pager|footer)(?:$|[\s_-])", re.IGNORECASE)
_MIN_LINK_BLOCK = 40  # characters: "See also: [json]" inside a paragraph is not a block of links
_PAGER_RELS = frozenset({"next", "prev", "previous", "up"})
_MAX_PAGER_CHARS = 300


def drop_chrome(root: lxml.html.HtmlElement) -> None:
    """Remove what is never content, then site chrome unless it holds most of the page."""
    for el in list(root.iter(*_NEVER_CONTENT)):
        el.drop_tree()
    total = text_size(root)
    chrome = list(root.iter(*_CHROME)) + root.xpath(_CHROME_ROLES)
    # A page header goes; an article's own <header> carries its H1 and stays.
    chrome += [h for h in root.iter("header") if h.find(".//h1") is None
               and not any(a.tag in ("article", "main") for a in h.iterancestors())]
    for el in chrome:
        # ASP.NET wraps whole pages in one <form>: "chrome" holding most of the text is the page.
        if el.getparent() is not None and text_size(el) <= total / 2:
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
        size = text_size(el)
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
    size = text_size(el)
    if size < _MIN_LINK_BLOCK:
        return False
    linked = sum(text_size(a) for a in el.iter("a"))
    return linked >= LINK_DENSITY * size


def _is_pager(el: lxml.html.HtmlElement) -> bool:
    """A short block of next / previous / up links and no heading: Texinfo's "Next: Actions, Previous:
    Patterns, Up: flex [Contents][Index]" bar (class "header", or "nav-panel" since Texinfo 7), which stood
    above the heading of every page of a manual."""
    rels = {rel for a in el.iter("a") for rel in (a.get("rel") or "").lower().split()}
    return (len(rels & _PAGER_RELS) >= 2 and text_size(el) <= _MAX_PAGER_CHARS
            and next(el.iter(*HEADINGS), None) is None)

"""Links of a converted page: which are noise, which keep only their text, and where an address goes."""

from __future__ import annotations

from urllib.parse import urlsplit

import lxml.html

from .markup import HEADINGS, LINK_DENSITY, text_size

_ANCHOR_MARKS = frozenset({"¶", "#", "§", "🔗", "\u200b", "link", "permalink"})
# A longer URL is a program's state (a playground link carrying the example's code), not a place to read.
_MAX_KEPT_URL = 200
_TEXT_BLOCKS = frozenset({"p", "li", "dd", "dt", "td", "th", "caption", "figcaption", "blockquote"})


def drop_noise_links(root: lxml.html.HtmlElement) -> None:
    """Icon links (their <svg> is gone) would be `[](...)` noise, a heading's permalink (¶) would
    end up in every section title the chunker builds from headings, and "Skip to content" is a
    control, not text."""
    for a in list(root.iter("a")):
        label, in_page = a.text_content().strip(), a.get("href", "").startswith("#")
        if a.find(".//img") is None and (not label or (in_page and (label in _ANCHOR_MARKS
                                                                     or label.lower().startswith("skip to")))):
            a.drop_tree()


def unwrap_heading_links(root: lxml.html.HtmlElement) -> None:
    """A heading's text, not its link: mdBook writes `<h2><a class="header" href="#ar">ar</a></h2>`, and
    readability drops elements classed "header", leaving the heading empty (every section of the rustc
    book then went under the page's title, "(part 2)", "(part 3)"); rustdoc's headings are links too, and
    a URL in a section title is noise in every hit's heading line."""
    for heading in root.iter(*HEADINGS):
        for a in list(heading.iter("a")):
            a.drop_tag()


def unwrap_site_links(content: lxml.html.HtmlElement, url: str) -> None:
    """Links to the same site keep their text only: documentation cross-references every name
    (`[InvalidInput](https://host/std/io/enum.ErrorKind.html#variant.InvalidInput)`), and those URLs were
    a third of a rustdoc page's bytes, in every search reply and in the words a section is ranked by.
    Links to other sites keep their address after the paragraph (a cited RFC, a project's repository), a
    list item that is one link and every link of a page that is mostly links (an index: its links are its
    content) stay links."""
    host = urlsplit(url).netloc.lower() if url.startswith(("http://", "https://")) else ""
    size = text_size(content)
    links = list(content.iter("a"))
    if size and sum(text_size(a) for a in links) >= LINK_DENSITY * size:
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

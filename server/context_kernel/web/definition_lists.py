"""Definition lists of names (options, functions, variables) as sections: each term a heading."""

from __future__ import annotations

import re

import lxml.html

_HEADING = re.compile(r"h([1-6])$")
# A definition list's term becomes a heading when it is a name, not a sentence.
MAX_TERM_CHARS = 160


def terms_as_headings(root: lxml.html.HtmlElement) -> None:
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

"""Plain text chunked by its own structure: man-page outlines and conversations."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.knowledge.chunking import chunk_document
from context_kernel.knowledge.chunking.outline import chunk_structured

SORT = """SORT(1)                          User Commands                         SORT(1)

NAME
       sort - sort lines of text files

SYNOPSIS
       sort [OPTION]... [FILE]...

DESCRIPTION
       Write sorted concatenation of all FILE(s) to standard output.

       -b, --ignore-leading-blanks
              ignore leading blanks

       -n, --numeric-sort
              compare according to string numerical value

       -T, --temporary-directory=DIR
              use DIR for temporaries, not $TMPDIR or /tmp; multiple options
              specify multiple directories

EXIT STATUS
       0 on success, 2 on trouble.

SEE ALSO
       shuf(1), uniq(1)
"""


def lines_of(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_a_man_page_is_chunked_by_its_headings_and_titled_by_their_path() -> None:
    chunks = chunk_document(SORT, name="sort.1.txt")
    titles = [c.title for c in chunks]
    numeric = next(c for c in chunks if "compare according to string numerical value" in c.content)
    assert numeric.title.startswith("SORT(1) > DESCRIPTION > ")
    assert "-n, --numeric-sort" in numeric.title  # packed siblings are named in the title
    assert any(t.startswith("SORT(1) > EXIT STATUS") for t in titles)
    # every non-blank line once, in order
    assert [line for c in chunks for line in lines_of(c.content)] == lines_of(SORT)


def test_a_large_option_is_its_own_chunk_and_small_siblings_are_packed() -> None:
    options = "".join(f"       --option-{i}\n              does thing number {i} to the input\n\n" for i in range(40))
    page = "TOOL(1)       User Commands       TOOL(1)\n\nNAME\n       tool - a tool\n\nOPTIONS\n" + options
    page += "       --huge\n" + "".join(f"              line {i} of a long description of one option\n"
                                       for i in range(120))
    page += "\nEXIT STATUS\n       0\n"
    chunks = chunk_document(page, name="tool.1.txt")
    assert all(len(c.content.encode()) <= 4096 for c in chunks)
    assert any(c.title.startswith("TOOL(1) > OPTIONS > --huge") for c in chunks)
    packed = [c for c in chunks if "--option-0" in c.title]
    assert packed and "; --option-1" in packed[0].title
    assert [line for c in chunks for line in lines_of(c.content)] == lines_of(page)


CURL = """curl(1)                          curl Manual                          curl(1)

NAME
       curl - transfer a URL

DESCRIPTION
       curl is a tool for transferring data from or to a server.

OPTIONS
       --fail-with-body
              Return an error on server errors where the HTTP response code
              is 400 or greater. This flag will still allow curl to output
              and save that content but also to return error 22.

              Example:
               curl --fail-with-body https://example.com

              See also -f, --fail.

       -f, --fail
              Fail silently (no output at all) on server errors.

              Example:
               curl --fail https://example.com

EXIT CODES
       22     HTTP page not retrieved.
"""


def test_an_options_example_stays_with_the_option_it_shows() -> None:
    """curl's `Example:` under each option was a chunk of its own: for `curl --fail-with-body` it
    outranked the option's description, and the reply held the example without the answer."""
    chunks = chunk_document(CURL, name="curl.1.txt")
    example = next(c for c in chunks if "curl --fail-with-body https://example.com" in c.content)
    assert "return error 22" in example.content
    assert example.title.startswith("curl(1) > OPTIONS > --fail-with-body")
    assert [line for c in chunks for line in lines_of(c.content)] == lines_of(CURL)


def test_prose_without_an_outline_is_left_to_the_plain_chunker() -> None:
    prose = "A paragraph of prose.\nIt has two lines.\n\nAnother paragraph.\n\nA third one.\n"
    assert chunk_structured(prose) is None
    assert chunk_document(prose, name="notes.txt")


def test_a_plain_conversation_is_chunked_by_turns() -> None:
    turns = []
    for i in range(8):
        turns.append(f"user: question {i} about the staging database port\n")
        turns.append(f"assistant: answer {i}: " + "we settled on port 5433 because of the clash. " * 30 + "\n")
    text = "=== session ===\n\n" + "\n".join(turns)
    chunks = chunk_document(text, name="s01.txt")
    assert any("user (turn 1): question 0" in c.title for c in chunks)
    assert any(c.title.startswith("assistant (turn 2): answer 0") for c in chunks)
    assert [line for c in chunks for line in lines_of(c.content)] == lines_of(text)


def test_json_lines_of_messages_are_chunked_as_their_decoded_turns() -> None:
    messages = [{"role": "user" if i % 2 == 0 else "assistant",
                 "content": f"message {i}\nwith a second line about \"quotes\" and ports"} for i in range(6)]
    text = "\n".join(json.dumps(m) for m in messages) + "\n"
    chunks = chunk_document(text, name="s03.jsonl")
    joined = "\n".join(c.content for c in chunks)
    assert 'with a second line about "quotes" and ports' in joined  # decoded, not escaped
    assert chunks[0].title.startswith("user (turn 1): message 0")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab -:\n\tXY1")), max_size=600))
def test_any_text_keeps_every_line_and_fits_the_budget(text: str) -> None:
    chunks = chunk_structured(text)
    if chunks is None:
        return
    assert all(0 < len(c.content.encode()) <= 4096 for c in chunks)
    assert [line for c in chunks for line in lines_of(c.content)] == lines_of(text)

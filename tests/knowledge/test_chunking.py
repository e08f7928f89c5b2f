"""Chunkers: what text is kept, where documents are cut, how chunks are titled."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.knowledge.chunking import (
    chunk_code,
    chunk_document,
    chunk_json,
    chunk_markdown,
    chunk_text,
)
from context_kernel.knowledge.model import MAX_CHUNK_BYTES, Chunk

PROPERTY = settings(max_examples=60, deadline=None)
FENCE_LINE = re.compile(r" {0,3}(```|~~~)")


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def assert_partition(text: str, chunks: list[Chunk]) -> None:
    """Contents are consecutive substrings of `text`, with only whitespace around them."""
    cursor = 0
    for chunk in chunks:
        assert chunk.content.strip(), chunk
        position = text.find(chunk.content, cursor)
        assert position >= 0, (chunk, text[cursor:])
        assert text[cursor:position].strip() == "", (chunk, text[cursor:position])
        cursor = position + len(chunk.content)
    assert text[cursor:].strip() == ""


def assert_lines_covered_in_order(text: str, chunks: list[Chunk], max_bytes: int) -> None:
    """Every input line that fits a chunk appears whole in some chunk, in document order."""
    expected = [line.strip() for line in text.split("\n") if line.strip() and size(line) + 1 <= max_bytes]
    seen = iter([line.strip() for chunk in chunks for line in chunk.content.split("\n")])
    for line in expected:
        assert any(line == other for other in seen), line


# -- strategies: markdown-like documents ------------------------------------------------------

words = st.sampled_from(
    ["alpha", "beta", "gamma", "délta", "日本語", "x", "#", "##", "-", "=", "*", "`", "~", ">", "1.", "|a|"]
)
inline = st.lists(words, min_size=1, max_size=8).map(" ".join)
junk = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=40)
# Outside fences nothing may open a fence or front matter, so the fences we build stay fences.
prose_line = st.one_of(inline, junk).filter(
    lambda line: not FENCE_LINE.match(line) and line.rstrip() not in ("---", "+++")
)
heading = st.builds(lambda level, name: "#" * level + " " + name, st.integers(1, 6), inline)
setext = st.builds(lambda name, rule: f"{name}\n{rule}", inline, st.sampled_from(["===", "---", "-----"]))


@st.composite
def fences(draw: st.DrawFn) -> str:
    marker = draw(st.sampled_from(["```", "````", "~~~", "~~~~~"]))
    info = draw(st.sampled_from(["", "python", " js title=x"]))
    # A shorter fence of the same character, or one of the other character, does not close it.
    inner = marker[0] * (len(marker) - 1) if len(marker) > 3 else ("~~~" if marker[0] == "`" else "```")
    body_line = st.one_of(
        st.sampled_from(["# not a heading", "## neither", "", "   ", "---", inner, inner + "python"]),
        prose_line,
    )
    body = draw(st.lists(body_line, max_size=8))
    return "\n".join([marker + info, *body, marker])


markdown_parts = st.lists(
    st.one_of(heading, setext, fences(), prose_line, st.just(""), st.just("  ")), max_size=40
)
budgets = st.sampled_from([16, 40, 120, MAX_CHUNK_BYTES])


def markdown_doc(parts: list[str], newline_at_end: bool) -> str:
    return "\n".join(parts) + ("\n" if newline_at_end else "")


# -- markdown ---------------------------------------------------------------------------------

@PROPERTY
@given(markdown_parts, st.booleans(), budgets)
def test_markdown_chunks_keep_all_text_in_order_and_fences_whole(
    parts: list[str], newline_at_end: bool, max_bytes: int
) -> None:
    text = markdown_doc(parts, newline_at_end)
    chunks = chunk_markdown(text, max_bytes)
    assert_partition(text, chunks)
    for chunk in chunks:
        assert size(chunk.content) <= max_bytes or chunk.content.lstrip(" ").startswith(("```", "~~~"))
    for fence in (part for part in parts if FENCE_LINE.match(part)):
        assert any(fence in chunk.content for chunk in chunks), fence


@PROPERTY
@given(st.text(max_size=400), budgets)
def test_markdown_chunks_keep_all_of_any_text(text: str, max_bytes: int) -> None:
    assert_partition(text, chunk_markdown(text, max_bytes))


def test_headings_inside_fences_are_not_headings_and_the_fence_stays_one_chunk() -> None:
    fence = "```python title=x\n# not a heading\n\n## nor this\n\nx = 1\n```"
    nested = "````markdown\n# inner doc\n```python\n# comment\n```\n\n# still inside\n````"
    tilde = "~~~\n```\n# inside tilde\n~~~"
    text = f"# Real\n\nintro\n\n{fence}\n\n{nested}\n\n{tilde}\n\n## Next\nafter\n"
    chunks = chunk_markdown(text, max_bytes=60)
    assert {c.title.split(" (part")[0] for c in chunks} == {"Real", "Real > Next"}
    for block in (fence, nested, tilde):
        [holder] = [c for c in chunks if block in c.content]
        assert holder.kind == "code"
    assert_partition(text, chunks)


def test_a_10_kb_fence_is_not_split() -> None:
    body = "\n\n".join(f"value_{i} = compute({i})  # step {i}" for i in range(300))
    fence = f"```python\n{body}\n```"
    assert size(fence) > 10_000
    text = f"# Big\n\nBefore the code.\n\n{fence}\n\nAfter the code.\n"
    chunks = chunk_markdown(text)
    [holder] = [c for c in chunks if "```python" in c.content]
    assert holder.content == fence and holder.kind == "code" and holder.title.startswith("Big")
    assert all(size(c.content) <= MAX_CHUNK_BYTES for c in chunks if c is not holder)
    assert [c.content for c in chunks if c is not holder] == ["# Big\n\nBefore the code.", "After the code."]


def test_titles_are_heading_breadcrumbs() -> None:
    text = (
        "Preface line\n\n# A\na\n## B\nb\n### C\nc\n#### D\nd\n##### E is not a split\ne\n"
        "## F ##\nf\n\nG\n===\ng\n\nH\n---\nh\n"
    )
    titles = [c.title for c in chunk_markdown(text)]
    assert titles == ["Preface line", "A", "A > B", "A > B > C", "A > B > C > D", "A > F", "G", "G > H"]


def test_text_before_the_first_heading_is_titled_by_front_matter_first_line_or_top() -> None:
    assert chunk_markdown("---\ntitle: My Page\nlayout: x\n---\nhello\n# A\n")[0].title == "My Page"
    assert chunk_markdown("```sh\nls\n```\n# A\nx")[0].title == "(top)"
    assert chunk_markdown("just text, no headings")[0].title == "just text, no headings"


def test_a_section_over_4_kb_is_split_at_paragraphs_into_parts_under_4_kb() -> None:
    paragraphs = [f"Paragraph {i} " + "lorem ipsum dolor sit amet " * 10 for i in range(40)]
    text = "# A\n\n## B\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = chunk_markdown(text)
    parts = [c for c in chunks if c.title.startswith("A > B")]
    assert len(parts) >= 3
    assert parts[0].title == "A > B" and parts[1].title == "A > B (part 2)"
    for part in parts:
        assert size(part.content) <= MAX_CHUNK_BYTES and part.kind == "prose"
        assert part.content.startswith(("## B", "Paragraph ")), part.content[:40]
    assert_partition(text, chunks)


def test_a_huge_paragraph_is_split_at_lines_and_a_huge_line_at_the_budget() -> None:
    paragraph = "\n".join(f"line {i} " + "x" * 90 for i in range(100))
    line = "é" * 5000
    chunks = chunk_markdown(f"# P\n{paragraph}\n\n{line}\n")
    assert all(size(c.content) <= MAX_CHUNK_BYTES for c in chunks)
    assert all(c.content.startswith(("# P", "line ", "é")) for c in chunks)
    assert "".join(c.content for c in chunks if c.content.startswith("é")) == line


# -- plain text -------------------------------------------------------------------------------

text_parts = st.lists(st.one_of(prose_line, st.just(""), st.sampled_from(["  ", "\t"])), max_size=120)


@PROPERTY
@given(text_parts, budgets)
def test_plain_text_chunks_cover_every_line_in_order_within_budget(parts: list[str], max_bytes: int) -> None:
    text = "\n".join(parts)
    chunks = chunk_text(text, max_bytes)
    for chunk in chunks:
        assert chunk.content.strip() and chunk.content in text
        assert size(chunk.content) <= max_bytes
    assert_lines_covered_in_order(text, chunks, max_bytes)


def test_a_3000_line_log_is_cut_into_20_line_windows_overlapping_by_2() -> None:
    lines = [f"2024-05-01T10:{i // 60 % 60:02}:{i % 60:02} INFO worker-{i % 7} handled {i}" for i in range(3000)]
    chunks = chunk_text("\n".join(lines) + "\n")
    assert chunks[0].title == "lines 1-20" and chunks[1].title == "lines 19-38"
    assert chunks[-1].title.endswith("-3000")
    previous: list[str] = []
    for chunk in chunks:
        window = chunk.content.split("\n")
        first, last = map(int, re.fullmatch(r"lines (\d+)-(\d+)", chunk.title).groups())
        assert window == lines[first - 1 : last] and len(window) <= 20
        if previous:
            assert window[:2] == previous[-2:]
        previous = window
    assert len(chunks) == 167


def test_paragraphs_are_merged_up_to_the_budget_and_titled_by_their_first_line() -> None:
    paragraphs = [f"Topic {i}\n" + "some words here " * 20 for i in range(30)]
    chunks = chunk_text("\n\n".join(paragraphs))
    assert 1 < len(chunks) < 30
    assert chunks[0].title == "Topic 0" and all(c.title.startswith("Topic ") for c in chunks)
    assert all(size(c.content) <= MAX_CHUNK_BYTES and c.kind == "prose" for c in chunks)


def test_a_line_longer_than_the_budget_is_split() -> None:
    chunks = chunk_text("short\n" + "z" * 10_000 + "\nend")
    assert all(size(c.content) <= MAX_CHUNK_BYTES for c in chunks)
    assert "".join(c.content for c in chunks if c.content.startswith("z")) == "z" * 10_000


# -- JSON -------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=6), children, max_size=6),
    max_leaves=60,
)


def leaves(value: Any) -> list[str]:
    if isinstance(value, dict) and value:
        return [leaf for child in value.values() for leaf in leaves(child)]
    if isinstance(value, list) and value:
        return [leaf for child in value for leaf in leaves(child)]
    return [json.dumps(value)]


@PROPERTY
@given(json_values, st.sampled_from([128, 256, MAX_CHUNK_BYTES]))
def test_json_chunks_parse_and_give_back_every_leaf_in_order(value: Any, max_bytes: int) -> None:
    chunks = chunk_json(json.dumps(value), max_bytes)
    assert all(size(c.content) <= max_bytes and c.kind == "prose" for c in chunks)
    assert [leaf for c in chunks for leaf in leaves(json.loads(c.content))] == leaves(value)


def test_an_array_of_500_records_is_batched_and_titled_by_id() -> None:
    users = [{"id": i, "name": f"user{i}", "email": f"u{i}@example.com", "roles": ["a", "b"]} for i in range(500)]
    chunks = chunk_json(json.dumps({"users": users}))
    assert 10 < len(chunks) < 100
    seen: list[int] = []
    for chunk in chunks:
        first, last = map(int, re.fullmatch(r"users > \[id (\d+)\.\.(\d+)\]", chunk.title).groups())
        batch = json.loads(chunk.content)
        assert [u["id"] for u in batch] == list(range(first, last + 1))
        assert size(chunk.content) <= MAX_CHUNK_BYTES
        seen += [u["id"] for u in batch]
    assert seen == list(range(500))


def test_records_without_ids_are_titled_by_name_else_by_index_range() -> None:
    # Records under json_.RECORD_BYTES, so they batch (larger ones stand alone, see
    # test_chunking_json_records.py).
    named = [{"name": name, "bio": "b" * 400} for name in ("alice", "bob", "carol", "dave")]
    titles = [c.title for c in chunk_json(json.dumps({"people": named}), 1024)]
    assert titles == ["people > alice, bob", "people > carol, dave"]
    plain = [["row", i, "x" * 100] for i in range(60)]
    titles = [c.title for c in chunk_json(json.dumps(plain), 1024)]
    assert titles[0] == "[0-6]" and titles[-1].endswith("-59]")


def test_objects_are_chunked_by_key_path() -> None:
    doc = {"config": {"servers": {"web": {"port": 80, "note": "w" * 3000}, "db": {"port": 5432, "note": "d" * 3000}}}}
    chunks = chunk_json(json.dumps(doc))
    assert [c.title for c in chunks] == ["config > servers > web", "config > servers > db"]
    assert json.loads(chunks[0].content)["web"]["port"] == 80
    assert [c.title for c in chunk_json('{"a": 1}')] == ["(root)"]


def test_invalid_json_raises_value_error_and_documents_fall_back_to_text() -> None:
    try:
        chunk_json("{not json")
    except ValueError:
        pass
    else:
        raise AssertionError("invalid JSON must raise ValueError")
    assert [c.content for c in chunk_document("{not json", name="x.json")] == ["{not json"]


# -- source code ------------------------------------------------------------------------------

PYTHON = '''"""A module."""
import os

# Attached to f.
@cache
def f(x):
    return x

# ---- helpers ----

async def g():
    await f(1)


class Shape(Base):
    """A shape."""

    def area(self):
        return 0


if __name__ == "__main__":
    f(os.sep)
'''


def test_python_is_split_into_module_code_functions_and_classes() -> None:
    chunks = chunk_code(PYTHON, "python")
    assert [c.title for c in chunks] == ["(module)", "def f", "async def g", "class Shape", "(module)"]
    assert chunks[1].content.startswith("# Attached to f.\n@cache\ndef f(x):")
    assert chunks[2].content.startswith("# ---- helpers ----")
    assert all(c.kind == "code" for c in chunks)
    assert_partition(PYTHON, chunks)


def test_a_large_class_is_split_at_its_methods() -> None:
    methods = "\n".join(f"    def method_{i}(self):\n        return {i!r} * 40  # {'pad ' * 20}\n" for i in range(60))
    source = f"import x\n\nclass Big:\n    size = 1\n\n{methods}"
    chunks = chunk_code(source, "python")
    assert chunks[1].title == "class Big" and chunks[1].content.startswith("class Big:")
    assert chunks[2].title == "class Big > def method_0"
    assert all(size(c.content) <= MAX_CHUNK_BYTES for c in chunks)
    assert_partition(source, chunks)


def test_broken_python_and_other_languages_are_split_by_regex() -> None:
    broken = "def ok():\n    pass\n\ndef broken(:\n    pass\n"
    assert [c.title for c in chunk_code(broken, "py")] == ["def ok", "def broken"]
    go = (
        "package main\n\nimport \"fmt\"\n\n// Server serves.\ntype Server struct{}\n\n"
        "func (s *Server) Run() {\n}\n\nfunc main() {\n}\n"
    )
    assert [c.title for c in chunk_code(go, "go")] == ["(module)", "type Server", "func Server.Run", "func main"]
    rust = "use std::fmt;\n\n#[derive(Debug)]\npub struct P;\n\nimpl fmt::Display for P {\n}\n\npub async fn run() {}\n"
    assert [c.title for c in chunk_code(rust, "rust")] == ["(module)", "struct P", "impl fmt::Display for P", "fn run"]
    js = "import a from 'a';\n\n/** Doc. */\nexport function f() {}\nexport const g = async () => 1;\nclass K {}\n"
    assert [c.title for c in chunk_code(js, "typescript")] == ["(module)", "function f", "const g", "class K"]
    ruby = "require 'x'\n\nmodule M\n  def a; end\nend\n"
    assert [c.title for c in chunk_code(ruby, "ruby")] == ["(module)", "module M"]
    assert [c.kind for c in chunk_code("int main() {}\n", "c")] == ["code"]


code_lines = st.one_of(
    st.sampled_from([
        "def f(x):", "    return x", "class C:", "    def m(self):", "        pass", "@dec", "# comment",
        "", "import os", "x = 1", "func (s *S) Run() {", "}", "fn main() {", "impl Foo for Bar {",
        "    fn go(&self) {}", "export const a = () => 1", "function g() {", "// doc", "module M", "end",
    ]),
    prose_line,
)


@PROPERTY
@given(st.lists(code_lines, max_size=60), st.sampled_from(["python", "javascript", "go", "rust", "ruby", "java"]),
       st.sampled_from([16, 64, MAX_CHUNK_BYTES]))
def test_code_chunks_keep_all_text_in_order_within_budget(lines: list[str], language: str, max_bytes: int) -> None:
    text = "\n".join(lines)
    chunks = chunk_code(text, language, max_bytes)
    assert all(c.kind == "code" and size(c.content) <= max_bytes for c in chunks)
    if language == "java":  # plain text windows overlap
        assert_lines_covered_in_order(text, chunks, max_bytes)
    else:
        assert_partition(text, chunks)


# -- dispatch ---------------------------------------------------------------------------------

def test_documents_are_dispatched_by_extension_mime_type_then_content() -> None:
    def titles(text: str, **kwargs: Any) -> list[str]:
        return [c.title for c in chunk_document(text, **kwargs)]

    assert titles("# A\ntext", name="README.md") == ["A"]
    assert titles('{"k": 1}', name="https://x.test/data.json?v=1") == ["(root)"]
    assert titles("def f():\n    pass\n", name="tool.py") == ["def f"]
    assert titles("# not a heading in rst\n", name="notes.rst") == ["lines 1-1"]
    assert titles("# Sniffed\nbody") == ["Sniffed"]
    assert titles('[{"id": 1}]') == ["(root)"]
    assert titles("[INFO] started\n") == ["lines 1-1"]
    assert titles("#!/usr/bin/env python3\nimport os\n\ndef main():\n    pass\n") == ["(module)", "def main"]
    assert titles("# T\nx", mime="text/markdown; charset=utf-8") == ["T"]
    assert titles("# T\nx", mime="text/plain", name="notes.txt") == ["lines 1-2"]


def test_a_notebook_is_chunked_as_the_markdown_of_its_cells() -> None:
    notebook = {
        "metadata": {"language_info": {"name": "python"}},
        "cells": [
            {"cell_type": "markdown", "source": ["# Analysis\n", "Intro."]},
            {"cell_type": "code", "source": "# a comment, not a heading\nprint(1)", "outputs": []},
            {"cell_type": "markdown", "source": "## Results"},
        ],
    }
    chunks = chunk_document(json.dumps(notebook), name="work.ipynb")
    assert [c.title for c in chunks] == ["Analysis", "Analysis > Results"]
    assert "```python\n# a comment, not a heading\nprint(1)\n```" in chunks[0].content


def test_windows_of_very_short_lines_grow_to_a_minimum_size() -> None:
    # `yes` printed 4 million 2-byte lines; 20-line windows made 200,000 chunks of 40 bytes.
    from context_kernel.knowledge.chunking.plain import MIN_WINDOW_BYTES

    chunks = chunk_text("y\n" * 20_000)
    assert all(len(c.content.encode()) >= MIN_WINDOW_BYTES - 2 for c in chunks[:-1])
    assert len(chunks) < 20_000 * 2 // MIN_WINDOW_BYTES * 1.1

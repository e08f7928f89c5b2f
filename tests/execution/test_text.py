"""Head+tail trimming and traceback compaction."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from context_kernel.execution.text import HeadTail, strip_ansi
from context_kernel.execution.tracebacks import compact_traceback


def test_output_within_budget_is_returned_whole() -> None:
    buf = HeadTail(1000)
    buf.feed("a\nb\n")
    buf.feed("c")
    assert buf.render() == "a\nb\nc" and not buf.trimmed


def test_long_output_keeps_first_and_last_lines_and_says_what_was_cut() -> None:
    buf = HeadTail(1000)
    for i in range(1000):
        buf.feed(f"line {i}\n")
    out = buf.render()
    assert out.startswith("line 0\n") and out.endswith("line 999\n")
    assert "lines /" in out and "cut" in out
    assert buf.cut_lines > 850 and buf.total_lines == 1000
    assert len(out.encode()) < 1200


def test_a_single_huge_line_is_clipped_not_kept_whole() -> None:
    buf = HeadTail(1000)
    buf.feed("".join(str(i) for i in range(2_000_000)))  # ~12 MB, no newline, no long run
    out = buf.render()
    assert len(out) < 2000 and "chars of this line cut" in out
    buf = HeadTail(1000)
    buf.feed("x" * 10_000_000)
    assert buf.render() == "xxxxxxxxxxxxxxxx…['x' repeated 10,000,000 times]"
    buf = HeadTail(1000)
    for _ in range(50):  # a run arriving in pieces, then the rest of its line
        buf.feed("ab" * 500)
    buf.feed("a")
    buf.feed(" then words\n")
    assert buf.render() == "abababababababab…['ab' repeated 25,000 times]a then words\n"


@given(st.lists(st.text(max_size=300), max_size=60), st.integers(min_value=256, max_value=4096))
def test_memory_and_reply_stay_bounded_whatever_is_fed(chunks: list[str], budget: int) -> None:
    buf = HeadTail(budget)
    for chunk in chunks:
        buf.feed(chunk)
    rendered = buf.render()
    assert len(rendered.encode()) <= 2 * budget + 200
    if not buf.trimmed:
        assert rendered == "".join(chunks)


@given(st.lists(st.sampled_from(["a", "é", "ab" * 30]), max_size=400),
       st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=8),
       st.integers(min_value=256, max_value=4096))
def test_every_line_and_byte_is_either_shown_or_counted_as_cut(lines: list[str], sizes: list[int],
                                                               budget: int) -> None:
    text = "".join(line + "\n" for line in lines)
    buf = HeadTail(budget)
    at = 0
    while at < len(text):
        size = sizes[at % len(sizes)]
        buf.feed(text[at : at + size])
        at += size
    shown = buf.render()
    # Drop the marker lines: the one that stands for the cut lines, those for collapsed repeats.
    shown = "".join(line for line in shown.splitlines(keepends=True) if not line.startswith("["))
    assert buf.total_lines == len(lines)
    assert buf.cut_lines + buf.collapsed_lines + shown.count("\n") == len(lines)
    assert buf.cut_bytes + buf.collapsed_bytes + len(shown.encode()) == len(text.encode())


def test_a_flood_of_short_lines_keeps_its_first_and_last_lines_and_counts_the_rest() -> None:
    buf = HeadTail(1000)
    for start in range(0, 200_000, 10_000):
        buf.feed("".join(f"{i}\n" for i in range(start, start + 10_000)))
    out = buf.render()
    assert out.startswith("0\n1\n") and out.endswith("199998\n199999\n")
    assert buf.total_lines == 200_000 and buf.cut_lines == 200_000 - (out.count("\n") - 1)


def test_ansi_codes_are_stripped_from_tracebacks() -> None:
    tb = ["\x1b[0;31mZeroDivisionError\x1b[0m", "", "\x1b[1;32m----> 1\x1b[0m 1/0",
          "ZeroDivisionError: division by zero"]
    assert compact_traceback(tb).text == "ZeroDivisionError\n----> 1 1/0\nZeroDivisionError: division by zero"
    assert strip_ansi("\x1b]0;title\x07plain") == "plain"


def test_a_flood_of_one_line_collapses_to_the_line_and_a_count() -> None:
    buf = HeadTail(8192)
    for _ in range(50):  # lines split across feeds too
        buf.feed("x" * 60 + "\n" + "x" * 60 + "\n" * 0)
        buf.feed("\n" + ("x" * 60 + "\n") * 500)
    buf.feed("done\n")
    out = buf.render(marker="; the full output is recorded as execution #7")
    assert out.startswith("x" * 60 + "\n[… the line above repeated 25,099 more times")  # was 8 KB of xxxx…
    assert "done\n" in out and len(out.encode()) < 300 and buf.trimmed, out
    assert "recorded as execution #7" in out
    assert buf.total_lines == 25_101 and buf.collapsed_lines == 25_099


def test_a_few_repeats_stay_as_they_are() -> None:
    buf = HeadTail(1000)
    buf.feed("ok\nok\nok\nnext\n")
    assert buf.render() == "ok\nok\nok\nnext\n" and not buf.trimmed


def test_long_repeated_runs_inside_a_line_collapse() -> None:
    buf = HeadTail(8192)
    buf.feed("=" * 40 + " ruler stays\n")
    buf.feed("ab" * 500 + " end\n")
    buf.feed("y" * 1_000_000 + "\n")
    out = buf.render()
    assert "=" * 40 + " ruler stays\n" in out  # short runs are left alone
    assert "'ab' repeated 500 times" in out and " end\n" in out
    assert "yyyy…['y' repeated 1,000,000 times]\n" in out and len(out.encode()) < 400, out  # counted whole
    assert buf.trimmed


def test_a_flood_of_repeats_costs_few_steps_per_chunk() -> None:
    buf = HeadTail(8192)
    chunk = "yes\n" * 250_000
    for _ in range(16):  # 4M lines of `yes`
        buf.feed(chunk)
    assert buf.total_lines == 4_000_000
    assert buf.render() == "yes\n[… the line above repeated 3,999,999 more times]\n"


def test_a_flood_of_one_line_after_the_budget_is_spent_still_collapses() -> None:
    buf = HeadTail(8192)
    data = "".join(f"line {i}\n" for i in range(10_000)) + "x\n" * 1_000_000 + "end\n"
    for at in range(0, len(data), 65536):  # the flood arrives in chunks, the tail already full
        buf.feed(data[at:at + 65536])
    out = buf.render()
    # Was one literal "x" per chunk (31 of them) before the marker.
    tail = re.search(r"\nline \d+\nx\n\[… the line above repeated ([\d,]+) more times\]\nend\n$", out)
    assert tail is not None and int(tail.group(1).replace(",", "")) > 900_000, out[-200:]
    assert buf.total_lines == 1_010_001
    assert buf.cut_lines + buf.collapsed_lines + out.count("\n") - 2 == buf.total_lines  # less the two markers

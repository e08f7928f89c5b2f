"""A failed cell's traceback as the agent reads it: short, and never without the agent's own failing line.

A chained pandas KeyError runs to 40 lines of library code; cutting it in the middle kept pandas' internals and
dropped `Cell In[1], line 4`, the one frame the agent can act on. So a long traceback is shortened in steps:
a library frame keeps its header and the line it failed on, the agent's own frames (IPython's `Cell In[n]`,
`Input In [n]`, `<ipython-input-…>`, a script's `<string>`/`<stdin>`) stay whole, and only then is the middle cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import strip_ansi

MAX_LINES = 30
# A frame's first line: IPython's (`File /…/base.py:3816, in Index.get_loc(…)`, `Cell In[1], line 4`) or plain
# Python's (`  File "x.py", line 3, in f`).
_FRAME = re.compile(r"^\s*(File |Cell In\[\d+\]|Input In \[\d+\]|<ipython-input-)")
_OWN = re.compile(r"^\s*(Cell In\[\d+\]|Input In \[\d+\]|<ipython-input-|File \"<(string|stdin)>\")")
# The line a frame failed on: IPython marks it with an arrow, plain Python prints it first.
_ARROW = re.compile(r"^\s*-+>")


@dataclass(frozen=True)
class Traceback:
    text: str
    shortened: bool
    """Lines of it were left out: the agent did not see all of it."""


def compact_traceback(lines: list[str], max_lines: int = MAX_LINES) -> Traceback:
    """ANSI stripped, blank and rule lines dropped, and a long one shortened as the module says."""
    text = strip_ansi("\n".join(lines))
    rows = [r for r in text.splitlines() if r.strip() and not set(r.strip()) <= {"-"}]
    if len(rows) <= max_lines:
        return Traceback("\n".join(rows), shortened=False)
    blocks = _blocks(rows)
    folded = [row for block in blocks for row in _fold(block)]
    if len(folded) > max_lines:
        folded = _cut_middle(blocks, max_lines)
    return Traceback("\n".join(folded), shortened=True)


def _blocks(rows: list[str]) -> list[list[str]]:
    """The rows grouped: each frame with its code lines; every other row (a heading, a chain's "The above
    exception…", the error line) a block of its own."""
    blocks: list[list[str]] = []
    in_frame = False
    for row in rows:
        if _FRAME.match(row):
            blocks.append([row])
            in_frame = True
        elif in_frame and (row[:1].isspace() or _ARROW.match(row)):
            blocks[-1].append(row)
        else:
            blocks.append([row])
            in_frame = False
    return blocks


def _fold(block: list[str]) -> list[str]:
    """A library frame as its header and the line it failed on; the agent's own frames and other rows whole."""
    if len(block) <= 2 or not _FRAME.match(block[0]) or _OWN.match(block[0]):
        return block
    failing = next((row for row in block[1:] if _ARROW.match(row)), block[1])
    return [block[0], failing]


def _cut_middle(blocks: list[list[str]], max_lines: int) -> list[str]:
    """Still too long folded: the first block, the agent's own frames and as many of the last rows as fit,
    with a line saying how many were cut."""
    folded = [_fold(b) for b in blocks]
    keep = {0} | {i for i, b in enumerate(blocks) if _OWN.match(b[0])}
    budget = max_lines - 1 - sum(len(folded[i]) for i in keep)
    for i in range(len(blocks) - 1, 0, -1):
        if i in keep:
            continue
        if len(folded[i]) > budget:
            break
        keep.add(i)
        budget -= len(folded[i])
    out: list[str] = []
    cut = 0
    for i, rows in enumerate(folded):
        if i in keep:
            if cut:
                out.append(f"... ({cut} traceback lines cut) ...")
                cut = 0
            out += rows
        else:
            cut += len(rows)
    return out

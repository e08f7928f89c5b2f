"""Line templates: which lines of an output share a shape, Drain-style, small and dependency-free.

A line's variable parts (numbers, ids, hex, timestamps, quoted strings: any token holding a digit)
become `<*>`; lines of the same token count and first token are then merged into one template when
most of their tokens agree (the core of Drain, He et al. 2017, without its prefix tree: an output is
mined once, and exact masked lines, the common case, are a dictionary hit). drain3 does the same
with persistence, masking config and jsonpickle we do not need, at several times the cost per line.
"""

from __future__ import annotations

import re

WILD = "<*>"
TOKEN = re.compile(r"[^\s,;|]+")
# A quoted string holding a digit is one variable token (an id, a path, a user agent); one without
# stays words (`"msg": "payment capture failed"` is the template, not a parameter of it).
_QUOTED = re.compile(r"\"[^\"]*\d[^\"]*\"|'[^']*\d[^']*'")
_SEPARATORS = re.compile(r"[\s,;|]")
_VARIABLE = re.compile(r"[^\s,;|]*\d[^\s,;|]*|(?<![^\s,;|])[0-9a-fA-F]{8,}(?![^\s,;|])")
# Above this share of equal tokens two masked lines are one template. Below 0.5 on purpose: in a
# two-token line (`test_x PASSED` / `test_y FAILED`) one differing word is not a parameter.
SIMILARITY = 0.6
# New shapes are compared with at most this many templates of their group: bounds the work on
# outputs where every line is different.
MAX_COMPARED = 32


def tokens(line: str) -> list[str]:
    """The line's tokens; a quoted string holding a digit is one token, aligned with `mask`."""
    return TOKEN.findall(_QUOTED.sub(lambda m: _SEPARATORS.sub("_", m.group(0)), line))


def mask(line: str) -> list[str]:
    """The line's tokens with the variable ones (holding a digit, hex) replaced by `<*>`."""
    return TOKEN.findall(_VARIABLE.sub(WILD, _QUOTED.sub(WILD, line)))


class TemplateMiner:
    """Assigns each line a template id (`count[id]` lines share it) and a shape id: the exact
    masked line before merging (`shape_count[id]`), finer than the template."""

    def __init__(self, keep: frozenset[str] = frozenset()) -> None:
        # Words never turned into a parameter: a log level or failure word is what tells lines apart.
        self._keep = keep
        self._exact: dict[tuple[str, ...], tuple[int, int]] = {}
        self._groups: dict[tuple[int, str], list[int]] = {}
        self.templates: list[list[str]] = []
        self.count: list[int] = []
        self.shape_count: list[int] = []

    def add(self, line: str) -> tuple[int, int]:
        """(template id, shape id) of the line."""
        tokens = tuple(mask(line))
        ids = self._exact.get(tokens)
        if ids is None:
            ids = self._exact[tokens] = (self._match(tokens), len(self.shape_count))
            self.shape_count.append(0)
        self.count[ids[0]] += 1
        self.shape_count[ids[1]] += 1
        return ids

    def _match(self, tokens: tuple[str, ...]) -> int:
        group = self._groups.setdefault((len(tokens), tokens[0] if tokens else ""), [])
        best, best_sim = -1, SIMILARITY
        for tid in group[-MAX_COMPARED:]:
            sim = self._similarity(self.templates[tid], tokens)
            if sim >= best_sim:
                best, best_sim = tid, sim
        if best >= 0:
            template = self.templates[best]
            for i, token in enumerate(tokens):
                if template[i] != token:
                    template[i] = WILD
            return best
        self.templates.append(list(tokens))
        self.count.append(0)
        group.append(len(self.templates) - 1)
        return len(self.templates) - 1

    def _similarity(self, template: list[str], tokens: tuple[str, ...]) -> float:
        if not tokens:
            return 1.0
        same = 0
        for a, b in zip(template, tokens, strict=True):
            if a in (b, WILD):
                same += 1
            elif a.lower() in self._keep or b.lower() in self._keep:
                return 0.0
        return same / len(tokens)

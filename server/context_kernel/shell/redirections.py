"""Redirections of a simple command, wherever they stand among its words (standard library only)."""

from __future__ import annotations

import re

from .command import Redirect
from .words import unquote

# A redirection word: an optional descriptor, the operator (longest first), and its target when glued.
_REDIRECTION = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|>|<)(.*)", re.DOTALL)
_REDIRECTION_START = frozenset("0123456789<>&")


def _redirection(raw: list[str], i: int) -> tuple[Redirect, int] | None:
    """The redirection at `raw[i]` and how many words it takes (2 when its target is the next word)."""
    if raw[i][:1] not in _REDIRECTION_START:
        return None
    match = _REDIRECTION.fullmatch(raw[i])
    if match is None:
        return None
    fd, op, target = match.groups()
    if target:
        return Redirect(op, unquote(target), fd), 1
    return Redirect(op, unquote(raw[i + 1]) if i + 1 < len(raw) else "", fd), 2


def _without_redirections(raw: list[str], redirects: list[Redirect]) -> list[str]:
    # Redirections may stand anywhere (`rm 2>/dev/null -rf x`); Claude Code matches rules on the
    # command without them (its CHANGELOG, 1.0.123: "`Bash(python:*)` matches `python script.py >
    # output.txt`", https://github.com/anthropics/claude-code), so they go wherever they are.
    kept: list[str] = []
    i = 0
    while i < len(raw):
        found = _redirection(raw, i)
        if found is None:
            kept.append(raw[i])
            i += 1
        else:
            redirects.append(found[0])
            i += found[1]
    while kept and kept[-1] in ("}", ")"):
        kept = kept[:-1]
    return kept


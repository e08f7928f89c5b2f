"""The scanner that cuts a text into raw pieces on control operators, outside quotes, setting
aside substitutions, groups and heredoc bodies to be split on their own (standard library only)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .command import Origin, Redirect, _within
from .redirections import _without_redirections
from .words import (
    _closed,
    _end_ansi,
    _end_backtick,
    _end_double,
    _end_paren,
    _end_single,
    _inside,
    _unescape_backtick,
    heredoc_bodies,
    heredoc_operator,
    words_of,
)

MAX_DEPTH = 32
"""Nesting depth ($(...) inside bash -c inside ...) past which the rest is flattened (quotes and
substitution syntax dropped, then split once more) instead of parsed: it is still checked."""

_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "coproc", "{", "(", "}", ")"})


@dataclass
class _Piece:
    """A raw simple command as cut from the text, with what the cutting learnt about it."""

    text: str
    origin: Origin
    pipeline: int
    stage: int
    heredocs: list[str]
    """Filled when the bodies are read, after the line that opened them (the piece may be cut before)."""
    unterminated: bool
    group_redirects: list[Redirect] = field(default_factory=list)
    """The redirections of the groups around it (`{ a; } > f`, `(a) > f`), filled when they close."""


def _split(text: str, out: list[_Piece], depth: int, origin: Origin, ids: Iterator[int], heredoc_lines: bool) -> None:
    """Cut `text` on control operators; nested substitutions and heredoc bodies are split into `out`
    after the pieces of `text` itself."""
    scanner = _Scanner(text, out, origin, ids)
    scanner.scan(heredoc_lines)
    for body, kind in scanner.nested:
        inner = _within(origin, kind)
        if depth < MAX_DEPTH:
            _split(body, out, depth + 1, inner, ids, heredoc_lines)
        else:
            out.extend(_Piece(piece, inner, next(ids), 0, [], False) for piece in _flatten(body))


class _Scanner:
    """One pass over a text, cutting it into pieces: one method per construct (escapes, quotes,
    substitutions, heredocs, comments, groups, operators), each called where its first character
    stands and saying whether it took the text from there (else the character is a plain one)."""

    def __init__(self, text: str, out: list[_Piece], origin: Origin, ids: Iterator[int]) -> None:
        self.text, self.out, self.origin, self.ids = text, out, origin, ids
        self.current: list[str] = []
        self.nested: list[tuple[str, Origin]] = []
        self.heredocs: list[str] = []  # the bodies of the current piece's heredocs
        self.pending: list[tuple[str, bool, list[str]]] = []  # heredocs whose bodies start after the next newline
        self.open_ended = False
        self.pipeline, self.stage = next(ids), 0
        self.arithmetic = 0  # inside `(( ... ))`, `<<` is a shift
        self.groups: list[list[_Piece]] = []  # the pieces of each open `( … )` / `{ …; }`, outermost first
        self.closed: list[_Piece] = []  # the pieces of a group just closed: the next piece holds its redirections
        self.line_start = len(out)  # the first piece of the current line
        self.i = 0
        self.at_word_start = True
        self.heredoc_lines = True

    def scan(self, heredoc_lines: bool) -> None:
        self.heredoc_lines = heredoc_lines
        text, n = self.text, len(self.text)
        while self.i < n:
            c = text[self.i]
            construct = _CONSTRUCTS.get(c)
            if construct is None or not construct(self, c):
                self.current.append(c)
                self.at_word_start = c in " \t"
                self.i += 1
        self.cut("")
        out = self.out
        if out[self.line_start:] and out[-1].unterminated:  # bash refuses the whole line, not only that piece
            for piece in out[self.line_start:]:
                piece.unterminated = True

    def cut(self, operator: str) -> None:
        """End the current piece; `|` and `|&` continue its pipeline, a parenthesis ("") leaves it be,
        any other operator starts a new one."""
        piece = "".join(self.current).strip()
        if self.closed and piece:
            redirects: list[Redirect] = []
            _without_redirections(words_of(piece), redirects)
            for member in self.closed:
                member.group_redirects.extend(redirects)
        self.closed = []
        if piece:
            self.out.append(_Piece(piece, self.origin, self.pipeline, self.stage, self.heredocs, self.open_ended))
            for group in self.groups:
                group.append(self.out[-1])
        self.current.clear()
        self.heredocs, self.open_ended = [], False
        if operator in ("|", "|&"):
            self.stage += 1
        elif operator:
            self.pipeline, self.stage = next(self.ids), 0

    def _take(self, end: int, open_from: int | None = None, closer: str = "") -> bool:
        """The text up to `end` joins the current word; `open_from`: where a quote or substitution closed
        by `closer` began, to note one left open."""
        if open_from is not None:
            self.open_ended = self.open_ended or not _closed(self.text, open_from, end, closer)
        self.current.append(self.text[self.i:end])
        self.i, self.at_word_start = end, False
        return True

    def escape(self, _c: str) -> bool:
        text, i = self.text, self.i
        if i + 1 < len(text) and text[i + 1] == "\n":  # line continuation
            self.i += 2
            return True
        return self._take(i + 2)

    def single(self, _c: str) -> bool:
        return self._take(_end_single(self.text, self.i + 1), self.i + 1, "'")

    def dollar(self, c: str) -> bool:
        if self.text.startswith("$'", self.i):  # ANSI-C quoting: backslash escapes, no expansion
            return self._take(_end_ansi(self.text, self.i + 2), self.i + 2, "'")
        return self.substitution(c)

    def double(self, _c: str) -> bool:
        inside: list[str] = []
        end = _end_double(self.text, self.i + 1, inside)
        self.nested.extend((body, "substitution") for body in inside)
        return self._take(end, self.i + 1, '"')

    def backtick(self, _c: str) -> bool:
        end = _end_backtick(self.text, self.i + 1)
        self.nested.append((_unescape_backtick(_inside(self.text, self.i + 1, end, "`")), "substitution"))
        return self._take(end, self.i + 1, "`")

    def less(self, c: str) -> bool:
        text, i = self.text, self.i
        if self.arithmetic or not text.startswith("<<", i):
            return self.substitution(c)
        found = None if text.startswith("<<<", i) else heredoc_operator(text, i)
        end = i + 3 if found is None and text.startswith("<<<", i) else (i + 2 if found is None else found[2])
        if found is not None:
            self.pending.append((found[0], found[1], self.heredocs))
        return self._take(end)

    def substitution(self, _c: str) -> bool:
        """`$( )`, `<( )`, `>( )`: split on their own."""
        if not self.text.startswith("(", self.i + 1):
            return False
        end = _end_paren(self.text, self.i + 2)
        self.nested.append((_inside(self.text, self.i + 2, end, ")"), "substitution"))
        return self._take(end, self.i + 2, ")")

    def comment(self, _c: str) -> bool:
        if not self.at_word_start:
            return False
        end = self.text.find("\n", self.i)  # a comment runs to the end of the line
        self.i = len(self.text) if end == -1 else end
        return True

    def brace(self, c: str) -> bool:
        """A brace group opens or closes where a command starts; the brace itself stays in the piece."""
        text, i = self.text, self.i
        if (i + 1 == len(text) or text.startswith(_GROUP_END, i + 1)) and _command_starts(self.current):
            if c == "{":
                self.groups.append([])
            elif self.groups:
                self.closed = self.groups.pop()
        return False

    def line_end(self, c: str) -> bool:
        self.cut(c)
        self.i, self.at_word_start = self.i + 1, True
        if c == "\n":
            self.line_start = len(self.out)
            if self.pending:
                bodies, self.i = heredoc_bodies(self.text, self.i, [(d, tabs) for d, tabs, _ in self.pending])
                for (_, _, owner), body in zip(self.pending, bodies, strict=True):
                    owner.append(body)
                    if self.heredoc_lines:
                        self.nested.append((body, "heredoc"))
                self.pending.clear()
        return True

    def pipe(self, c: str) -> bool:
        text, i = self.text, self.i
        if i and text[i - 1] == ">":  # `>|` is a redirection
            self.current.append(c)
            self.i += 1
            return True
        operator = "|&" if text.startswith("|&", i) else ("||" if text.startswith("||", i) else "|")
        return self._operator(operator)

    def ampersand(self, c: str) -> bool:
        text, i = self.text, self.i
        prev = text[i - 1] if i else ""  # "" is `in` every string: a leading & is taken as a redirection's
        if prev in "<>" or text.startswith("&>", i):  # 2>&1, >&2, &>file
            self.current.append(c)
            self.i += 1
            return True
        return self._operator("&&" if text.startswith("&&", i) else "&")

    def _operator(self, operator: str) -> bool:
        self.cut(operator)
        self.i += len(operator)
        self.at_word_start = True
        return True

    def paren(self, c: str) -> bool:
        """Subshells and function bodies: their insides are commands of their own."""
        text, i = self.text, self.i
        if text.startswith("((", i):
            self.arithmetic += 1
        elif text.startswith("))", i) and self.arithmetic:
            self.arithmetic -= 1
        self.cut("")
        if c == "(":
            self.groups.append([])
        elif self.groups:
            self.closed = self.groups.pop()
        self.i, self.at_word_start = i + 1, True
        return True


_CONSTRUCTS: dict[str, Callable[[_Scanner, str], bool]] = {
    "\\": _Scanner.escape, "'": _Scanner.single, "$": _Scanner.dollar, '"': _Scanner.double,
    "`": _Scanner.backtick, "<": _Scanner.less, ">": _Scanner.substitution, "#": _Scanner.comment,
    "{": _Scanner.brace, "}": _Scanner.brace, "\n": _Scanner.line_end, ";": _Scanner.line_end,
    "|": _Scanner.pipe, "&": _Scanner.ampersand, "(": _Scanner.paren, ")": _Scanner.paren,
}


_GROUP_END = (" ", "\t", "\n", ";", "&", "|", ")", "<", ">")


def _command_starts(current: list[str]) -> bool:
    """Whether a reserved word (`{`, `}`) would be one here: nothing but keywords before it."""
    return all(word in _KEYWORDS for word in "".join(current).split())


_HANDOVER = re.compile(r"(?<![\w/-])(?:eval|(?:\S*/)?(?:ba|z|da|k|a|mk)?sh\s+(?:-\w+\s+)*?-\w*c\w*)(?=\s)")
_FLATTEN = re.compile(r"[$<>]\(|[()`]|&&|\|\||[;&|\n]")


def _flatten(body: str) -> list[str]:
    """Past MAX_DEPTH: no more parsing, every opener or operator is a cut and quotes go."""
    text = re.sub(r"[\\'\"]", "", body)
    text = _HANDOVER.sub("\n", text)  # `eval X` and `bash -c X` run X: let X start a piece
    return [piece.strip() for piece in _FLATTEN.split(text) if piece.strip()]

"""The arguments of a call in code of another language, as far as its literals tell them, and the
command line each way of starting a process builds from them (standard library only)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from context_kernel.security.literals import read_literal

_STATEMENT_END = re.compile(r"\s(?:if|unless|or|and|do)\b|&&|\|\|")
_KEYWORD_ARG = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:=(?!=)|:(?!:))")
_KEPT_KEYWORDS = frozenset({"args", "argv", "cmd", "command", "arguments", "program", "file", "filename"})


@dataclass
class _Arg:
    head: str = ""
    """Code at depth 0 before the first literal or bracket (keyword names, `new`, `c`, `array`)."""
    strings: list[str] = field(default_factory=list)
    """Literals at depth 0: concatenated pieces of one string."""
    items: list[str] = field(default_factory=list)
    """Literals inside brackets: the elements of a list or array."""
    opens_object: bool = False
    start: int = 0
    end: int = 0

    @property
    def keyword(self) -> str | None:
        m = _KEYWORD_ARG.match(self.head)
        return m.group(1) if m else None


def _args(code: str, pos: int, lang: str, parenless: bool = False) -> tuple[list[_Arg], int]:
    """Arguments of a call whose `(` ends just before `pos` (or, `parenless`, that run to the end
    of the statement, as in `system "ls"`); returns them and the position after the call."""
    return _ArgReader(code, pos, lang, parenless).read()


class _ArgReader:
    """One pass over a call's arguments, left to right: a literal joins the current argument, and
    every other character is taken by the method for its kind (bracket, comma, end of statement,
    code before the first literal)."""

    def __init__(self, code: str, pos: int, lang: str, parenless: bool) -> None:
        self.code, self.lang, self.parenless = code, lang, parenless
        self.args: list[_Arg] = []
        self.cur = _Arg(start=pos)
        self.depth = 0  # brackets open inside the argument list
        self.i = pos
        self.seen_token = False  # past the current argument's head (its keyword name, `new`, …)

    def read(self) -> tuple[list[_Arg], int]:
        n = len(self.code)
        while self.i < n:
            if self.literal():
                continue
            if self.ends_here(self.code[self.i]):
                break
            self.i += 1
        cur = self.cur
        cur.end = self.i
        if cur.strings or cur.items or cur.head.strip():
            self.args.append(cur)
        return self.args, self.i

    def literal(self) -> bool:
        """Take the literal at `i`, if one starts there."""
        lit = read_literal(self.code, self.i, self.lang)
        if lit is None or lit.end <= self.i:
            return False
        values = lit.value.split() if lit.kind == "words" else [lit.value]
        if self.depth == 0 and lit.kind != "words":
            self.cur.strings.extend(values)
        else:
            self.cur.items.extend(values)
        self.seen_token, self.i = True, lit.end
        return True

    def ends_here(self, c: str) -> bool:
        """Take the character `c` at `i`; True when the arguments end there (`i` then stands after
        the closing parenthesis, or on the end of a paren-less statement)."""
        if c in "([{":
            self.open(c)
            return False
        if c in ")]}":
            return self.close()
        if c == "," and self.depth == 0:
            self.next_argument()
            return False
        if self.parenless and self.depth == 0 and (c in ";\n" or _STATEMENT_END.match(self.code, self.i)):
            return not (c == "\n" and _continues(self.code, self.i))
        if self.depth == 0 and not self.seen_token:
            self.head(c)
        return False

    def open(self, c: str) -> None:
        # A `{` opening an argument is an object (`{args: [...]}`), except where braces make a
        # composite literal (go), an initializer (C#) or a block (php).
        if self.depth == 0 and not self.seen_token and c == "{" and self.lang not in ("go", "csharp", "php"):
            self.cur.opens_object = True
        self.depth += 1
        self.seen_token = True

    def close(self) -> bool:
        if self.depth == 0:  # the call's own closing parenthesis
            self.i += 1
            return True
        self.depth -= 1
        return False

    def next_argument(self) -> None:
        self.cur.end = self.i
        self.args.append(self.cur)
        self.cur = _Arg(start=self.i + 1)
        self.seen_token = False

    def head(self, c: str) -> None:
        self.cur.head += c
        if not c.isspace() and not c.isalnum() and c not in "_=:.":
            self.seen_token = True  # any other symbol ends the head: what follows is an expression


def _continues(code: str, i: int) -> bool:
    """Whether the line ending at `i` ends with a comma (the argument list goes on)."""
    j = i - 1
    while j >= 0 and code[j] in " \t\r":
        j -= 1
    return j >= 0 and code[j] == ","


def _object_value(code: str, arg: _Arg, lang: str, keys: tuple[str, ...]) -> _Arg | None:
    """The value of `key: ...` inside an object argument (`{args: [...]}`, `{cmd: [...]}`)."""
    m = re.compile(r"\b(?:" + "|".join(keys) + r")\s*:\s*").search(code, arg.start, arg.end)
    if m is None:
        return None
    found, _ = _args(code, m.end(), lang)
    return found[0] if found else None


def _positional(code: str, args: list[_Arg], lang: str) -> list[_Arg]:
    """Arguments that carry the command: positional ones, and keyword ones named like a command
    (`args=`, `command =`); objects contribute their `args`/`cmd` entry."""
    kept = []
    for arg in args:
        keyword = arg.keyword
        if arg.opens_object:
            inner = _object_value(code, arg, lang, ("cmd", "args", "command"))
            if inner is not None:
                kept.append(inner)
            continue
        if keyword is not None and keyword not in _KEPT_KEYWORDS:
            continue
        if not arg.strings and not arg.items:
            kept.append(arg)  # a variable: keeps its place, contributes nothing
            continue
        kept.append(arg)
    return kept


def _as_words(arg: _Arg) -> list[str]:
    if arg.strings:
        return ["".join(arg.strings)]
    return list(arg.items)


def _command_line(args: list[_Arg]) -> str | None:
    """First argument as a command: a string as it is, a list joined with quoting."""
    if not args:
        return None
    first = args[0]
    if first.strings:
        return "".join(first.strings)
    if first.items:
        return shlex.join(first.items)
    return None


def _argv_line(args: list[_Arg]) -> str | None:
    """Every argument an argv element (lists flattened); a lone string is a command line."""
    literal_args = [a for a in args if a.strings or a.items]
    if not literal_args:
        return None
    if len(args) == 1 and args[0].strings:
        return "".join(args[0].strings)
    words = [w for a in args for w in _as_words(a)]
    return shlex.join(words) if words else None


def _plain_line(args: list[_Arg]) -> str | None:
    """Program then an arguments string, joined as written (C#'s Process.Start)."""
    parts = ["".join(a.strings) if a.strings else " ".join(a.items) for a in args]
    line = " ".join(p for p in parts if p)
    return line or None

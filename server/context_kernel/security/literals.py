"""String literals of the languages whose code is checked for shell escapes (standard library only).

A small lexer, one function per job: :func:`read_literal` reads the literal starting at a position
(python prefixes and triple quotes, JS templates, ruby `%x{}`/`%w[]`, perl `q/qq/qw/qx`, elixir
sigils, rust and C# raw and verbatim strings, go raw strings, R raw strings) and decodes its value;
:func:`mask_code` blanks comments (and, in a second copy, string bodies) keeping every position,
so calls are searched where code is and arguments read where strings are. Interpolations
(`f"{x}"`, `${x}`, `#{x}`) are kept as written. It is not a parser: regex literals, heredocs and
rarer quoting forms are read as ordinary characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


@dataclass(frozen=True)
class Literal:
    value: str
    end: int
    kind: str = "str"
    """str | shell (runs when evaluated: ruby/perl/php backticks) | words (%w[], qw())"""


# `\x72`, `\x{72}`, `\u0072`, `\u{72}`, `\U00000072` and octal `\162` name a character: "\x72m" is "rm".
_ESCAPE = re.compile(r"\\(x\{[0-9A-Fa-f]{1,6}\}|x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|"
                     r"U[0-9A-Fa-f]{8}|[0-7]{1,3}|.)", re.DOTALL)


def _decode(body: str) -> str:
    """Backslash escapes, as most languages read them in double quotes."""
    simple = {"n": "\n", "t": "\t", "r": "\r", "0": "", "a": "", "e": "", "v": "", "f": ""}

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if len(esc) > 1 and esc[0] in "xuU":
            code = int(esc[1:].strip("{}"), 16)
            return chr(code) if 0 < code <= 0x10FFFF else ""
        if len(esc) > 1 or esc in "1234567":
            return chr(int(esc, 8))
        return simple.get(esc, esc)

    return _ESCAPE.sub(one, body)


def _quoted(code: str, i: int, quote: str, *, escapes: bool = True, doubled: bool = False) -> tuple[str, int]:
    """Body and end of a literal whose opening `quote` ends just before `i`."""
    n = len(code)
    j = i
    while j < n:
        if escapes and code[j] == "\\":
            j += 2
            continue
        if code.startswith(quote, j):
            if doubled and code.startswith(quote * 2, j):
                j += 2
                continue
            return code[i:j], j + len(quote)
        j += 1
    return code[i:n], n


def _delimited(code: str, i: int) -> tuple[str, int]:
    """`%x{...}`, `qx(...)`, `~s[...]`: the delimiter is code[i]; brackets nest."""
    opener = code[i]
    closer = _PAIRS.get(opener, opener)
    depth, j, n = 1, i + 1, len(code)
    while j < n:
        c = code[j]
        if c == "\\":
            j += 2
            continue
        if c == closer and opener != closer:
            depth -= 1
            if depth == 0:
                return code[i + 1:j], j + 1
        elif c == opener and opener != closer:
            depth += 1
        elif c == closer:
            return code[i + 1:j], j + 1
        j += 1
    return code[i + 1:n], n


def _template(code: str, i: int) -> tuple[str, int]:
    """A JS template literal from after its backtick; `${...}` kept as written."""
    n, j = len(code), i
    while j < n:
        c = code[j]
        if c == "\\":
            j += 2
            continue
        if c == "`":
            return code[i:j], j + 1
        if code.startswith("${", j):
            depth, j = 1, j + 2
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(code[j], 0)
                j += 1
            continue
        j += 1
    return code[i:n], n


_PY_STRING = re.compile("([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")
_CS_PREFIX = re.compile(r"(?:\$@|@\$|@|\$)\"")
_CHAR = re.compile(r"'(?:\\.|[^\\'\n])'")
_RUST_RAW = re.compile(r"b?r(#*)\"")
_RUBY_PERCENT = re.compile(r"%([xqQwWiI]?)([^\w\s])")
_PERL_QUOTE = re.compile(r"(qq|qx|qw|q)\s*([^\w\s])")
_SIGIL = re.compile(r"~([sScCwW])([^\w\s])")
_R_RAW = re.compile(r"[rR](['\"])(-*)([(\[{])")


def read_literal(code: str, i: int, lang: str) -> Literal | None:
    """The string literal starting at `i` in `lang`, if one does."""
    c = code[i]  # first, so that a position past the end fails the same way in every language
    if lang == "python":
        return _python_literal(code, i)
    if lang == "csharp" and (c in "@$" or code.startswith('"""', i)):
        return _csharp_literal(code, i)
    quoted = _BY_QUOTE.get(c)
    if quoted is not None:
        return quoted(code, i, lang)
    if _word_before(code, i):  # a prefix glued to a name (`seq(`, `bar"`) is part of that name
        return None
    if lang == "rust":
        return _rust_raw(code, i)
    if lang == "r":
        return _r_raw(code, i)
    return _prefixed(code, i, lang)


def _word_before(code: str, i: int) -> bool:
    prev = code[i - 1] if i else ""
    return prev.isalnum() or prev in ("_", "$")


def _python_literal(code: str, i: int) -> Literal | None:
    """Python: a quote with at most two prefix letters (`r`, `b`, `u`, `f`); raw ones are not decoded."""
    m = _PY_STRING.match(code, i)
    if m and not _word_before(code, i) and (m.group(1) or code[i] in "'\""):
        raw = "r" in m.group(1).lower()
        body, end = _quoted(code, m.end(), m.group(2), escapes=True)
        return Literal(body if raw else _decode(body), end)
    return None


def _csharp_literal(code: str, i: int) -> Literal | None:
    """C#: `@"..."` verbatim (`""` is a quote), `$"..."` interpolated, else a triple-quoted raw string."""
    if code[i] in "@$":
        m = _CS_PREFIX.match(code, i)
        if m:
            verbatim = "@" in m.group(0)
            body, end = _quoted(code, m.end(), '"', escapes=not verbatim, doubled=verbatim)
            return Literal(body.replace('""', '"') if verbatim else _decode(body), end)
        return None
    body, end = _quoted(code, i + 3, '"""', escapes=False)
    return Literal(body, end)


def _double_quoted(code: str, i: int, lang: str) -> Literal | None:
    if lang == "elixir" and code.startswith('"""', i):
        body, end = _quoted(code, i + 3, '"""')
    else:
        body, end = _quoted(code, i + 1, '"')
    return Literal(_decode(body), end)


def _single_quoted(code: str, i: int, lang: str) -> Literal | None:
    if lang in ("go", "rust", "csharp"):  # char literals (and rust lifetimes): never commands
        m = _CHAR.match(code, i)
        return Literal(m.group(0)[1:-1], m.end()) if m else None
    body, end = _quoted(code, i + 1, "'")
    if lang in ("ruby", "perl", "php"):  # only \\ and \' are escapes in single quotes there
        return Literal(body.replace("\\'", "'").replace("\\\\", "\\"), end)
    return Literal(_decode(body), end)


def _backticked(code: str, i: int, lang: str) -> Literal | None:
    if lang in ("javascript", "typescript"):
        body, end = _template(code, i + 1)
        return Literal(body, end)
    if lang == "go":
        body, end = _quoted(code, i + 1, "`", escapes=False)
        return Literal(body, end)
    if lang in ("ruby", "perl", "php"):  # backticks run their body as a shell command
        body, end = _quoted(code, i + 1, "`")
        return Literal(body, end, "shell")
    return None


_BY_QUOTE: dict[str, Callable[[str, int, str], Literal | None]] = {
    '"': _double_quoted, "'": _single_quoted, "`": _backticked,
}


def _rust_raw(code: str, i: int) -> Literal | None:
    m = _RUST_RAW.match(code, i)
    if m:
        body, end = _quoted(code, m.end(), '"' + m.group(1), escapes=False)
        return Literal(body, end)
    return None


def _r_raw(code: str, i: int) -> Literal | None:
    m = _R_RAW.match(code, i)
    if m:
        closer = _PAIRS[m.group(3)] + m.group(2) + m.group(1)
        body, end = _quoted(code, m.end(), closer, escapes=False)
        return Literal(body, end)
    return None


# Quoting with a prefix then any delimiter (ruby `%x{}`, perl `qw()`, elixir `~s[]`): the prefix's
# pattern (the prefix in group 1, the delimiter in group 2) and the kind each prefix gives, "str" else.
_PREFIXED: dict[str, tuple[re.Pattern[str], dict[str, str]]] = {
    "ruby": (_RUBY_PERCENT, {"x": "shell", "w": "words", "W": "words"}),
    "perl": (_PERL_QUOTE, {"qx": "shell", "qw": "words"}),
    "elixir": (_SIGIL, {"w": "words", "W": "words"}),
}


def _prefixed(code: str, i: int, lang: str) -> Literal | None:
    form = _PREFIXED.get(lang)
    if form is None:
        return None
    pattern, kinds = form
    m = pattern.match(code, i)  # the pattern starts with the prefix: `%`, `q` or `~` must stand at i
    if m is None:
        return None
    body, end = _delimited(code, m.start(2))
    return Literal(body, end, kinds.get(m.group(1), "str"))


_LINE_COMMENT = {
    "python": "#", "ruby": "#", "perl": "#", "r": "#", "elixir": "#",
    "javascript": "//", "typescript": "//", "go": "//", "rust": "//", "csharp": "//", "php": "//",
}


# Where a literal or a comment can start, per language; everything else is skipped at C speed.
_STARTS = {
    "python": r"['\"#]|(?<![\w$])[rRbBuUfF]{1,2}['\"]",
    "javascript": r"['\"`/]", "typescript": r"['\"`/]", "go": r"['\"`/]",
    "rust": r"['\"/]|(?<![\w$])b?r#*\"", "csharp": r"['\"@$/]", "php": r"['\"`/#]",
    "ruby": r"['\"`%#]", "perl": r"['\"`#]|(?<![\w$])q[qxw]?\s*[^\w\s]", "elixir": r"['\"~#]",
    "r": r"['\"#]|(?<![\w$])[rR]['\"]",
}


@cache
def _interesting(lang: str) -> re.Pattern[str]:
    return re.compile(_STARTS.get(lang, r"['\"`#/]"))


def mask_code(code: str, lang: str) -> tuple[str, str, list[Literal]]:
    """(code with comments blanked, the same with string bodies blanked too, literals found).

    Lengths are kept so positions agree: calls are searched in the second, arguments read from
    the first, and `shell`-kind literals (backticks) are reported as they are.
    """
    out = list(code)
    bare = list(code)
    literals: list[Literal] = []
    line = _LINE_COMMENT.get(lang, "#")
    interesting = _interesting(lang)
    i, n = 0, len(code)
    while i < n:
        jump = interesting.search(code, i)  # skip plain code in C speed
        if jump is None:
            break
        i = jump.start()
        end = _comment_end(code, i, lang, line)
        if end is not None:
            for j in range(i, end):
                if code[j] != "\n":
                    out[j] = bare[j] = " "
            i = end
            continue
        lit = read_literal(code, i, lang)
        if lit is not None and lit.end > i:
            literals.append(lit)
            for j in range(i + 1, lit.end - 1):
                if code[j] != "\n":
                    bare[j] = " "
            i = lit.end
            continue
        i += 1
    return "".join(out), "".join(bare), literals


def _comment_end(code: str, i: int, lang: str, line: str) -> int | None:
    """Where a comment starting at `i` ends (before its newline, for a line comment); None if none does.
    `line` is `lang`'s line-comment marker."""
    c = code[i]
    comment = code.startswith(line, i) or (lang == "php" and c == "#" and not code.startswith("#[", i))
    if comment and not (lang == "perl" and i and code[i - 1] == "$"):  # $#array is not a comment
        end = code.find("\n", i)
        return len(code) if end < 0 else end
    if line == "//" and code.startswith("/*", i):
        end = code.find("*/", i + 2)
        return len(code) if end < 0 else end + 2
    return None

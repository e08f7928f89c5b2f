"""The words of a bash command line: where a quote or substitution ends, a piece cut into words,
and a word with its quoting removed (standard library only: the hooks import it).

`shell.line` cuts a line into simple commands with these scanners and normalises each one;
the rules for quoting are bash's (bash manual, "Quoting": https://www.gnu.org/software/bash/manual/bash.html#Quoting).
Every scanner returns the index just past its closer, or the end of the text when the closer is
missing, so an unclosed quote or substitution swallows the rest of the line, as in the shell.
"""

from __future__ import annotations

import re

# --- where a quote or substitution ends ----------------------------------------------------


def _closed(text: str, start: int, end: int, closer: str) -> bool:
    """Whether the quote or substitution opened just before `start` and scanned to `end` found its closer."""
    return end > start and text[end - 1] == closer


def _inside(text: str, start: int, end: int, closer: str) -> str:
    """The body between an opener ending at `start` and its closer just before `end` (if any:
    an unclosed substitution runs to the end of the text and is still checked)."""
    return text[start:end - 1] if _closed(text, start, end, closer) else text[start:end]


def _end_single(text: str, i: int) -> int:
    end = text.find("'", i)
    return len(text) if end < 0 else end + 1


def _end_escaped(text: str, i: int, closer: str) -> int:
    """End of a quote in which a backslash escapes the next character (`$'…'`, backticks)."""
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == closer:
            return i + 1
        i += 1
    return n


def _end_ansi(text: str, i: int) -> int:
    return _end_escaped(text, i, "'")


def _end_double(text: str, i: int, nested: list[str]) -> int:
    """End of a double-quoted string; substitutions inside it still run, so they go to `nested`."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c == "`":
            end = _end_backtick(text, i + 1)
            nested.append(_unescape_backtick(_inside(text, i + 1, end, "`")))
            i = end
            continue
        if c == "$" and text.startswith("(", i + 1):
            end = _end_paren(text, i + 2)
            nested.append(_inside(text, i + 2, end, ")"))
            i = end
            continue
        i += 1
    return n


def _end_backtick(text: str, i: int) -> int:
    return _end_escaped(text, i, "`")


def _unescape_backtick(body: str) -> str:
    # Inside backticks a nested backtick is written \` and a backslash \\.
    return re.sub(r"\\([`\\$])", r"\1", body)


def _end_paren(text: str, i: int) -> int:
    """Index just past the `)` closing a `(` opened before `i`; the end of text if unbalanced.
    Heredoc bodies inside are stepped over (an apostrophe in one is text, not a quote)."""
    n, depth = len(text), 1
    pending: list[tuple[str, bool]] = []
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "<" and depth == 1 and text.startswith("<<", i):  # deeper: `$((1 << 2))` is arithmetic
            found = None if text.startswith("<<<", i) else heredoc_operator(text, i)
            if found is None:
                i += 3 if text.startswith("<<<", i) else 2
            else:
                pending.append(found[:2])
                i = found[2]
            continue
        if c == "\n" and pending:
            i = heredoc_bodies(text, i + 1, pending, in_substitution=True)[1]
            pending.clear()
            continue
        if c == "'":
            i = _end_single(text, i + 1)
            continue
        if c == '"':
            i = _end_double(text, i + 1, [])
            continue
        if c == "`":
            i = _end_backtick(text, i + 1)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


# --- heredocs ------------------------------------------------------------------------------

_WORD_BREAK = frozenset(" \t\r\n;&|<>()")


def heredoc_operator(text: str, i: int) -> tuple[str, bool, int] | None:
    """At a `<<` (at index `i`, not `<<<`): the delimiter with its quotes removed, whether leading
    tabs are stripped (`<<-`), and the index just past the delimiter word; None when no word follows."""
    n = len(text)
    j = i + 2
    strip_tabs = text.startswith("-", j)
    j += strip_tabs
    while j < n and text[j] in " \t":
        j += 1
    start = j
    while j < n and text[j] not in _WORD_BREAK:
        j = _end_part(text, j)
    j = min(j, n)
    return (unquote(text[start:j]), strip_tabs, j) if j > start else None


def heredoc_bodies(text: str, i: int, pending: list[tuple[str, bool]],
                   in_substitution: bool = False) -> tuple[list[str], int]:
    """The bodies of the heredocs `pending` ((delimiter, strip tabs) each, in order), read from index
    `i` (just past the newline ending the line that opened them), and the index just past the last
    delimiter line. A missing delimiter ends a body at the end of the text, as in bash (which warns).
    Inside `$( … )` bash also ends a body at a line `EOF)`: the returned index is then at that `)`."""
    bodies: list[str] = []
    n = len(text)
    for delimiter, strip_tabs in pending:
        lines: list[str] = []
        while i < n:
            newline = text.find("\n", i)
            stop = n if newline < 0 else newline
            line = text[i:stop].lstrip("\t") if strip_tabs else text[i:stop]
            if line == delimiter:
                i = stop + 1 if newline >= 0 else n
                break
            if in_substitution and line.startswith(delimiter) and line[len(delimiter):].startswith(")"):
                i = stop - len(line) + len(delimiter)
                break
            lines.append(line)
            i = stop + 1 if newline >= 0 else n
        bodies.append("\n".join(lines))
    return bodies, i


# --- words ---------------------------------------------------------------------------------


def _end_part(text: str, i: int) -> int:
    """End of the piece of a word starting at `i`: an escape, a quote, a substitution, or one character."""
    c = text[i]
    if c == "\\":
        return i + 2
    if c == "'":
        return _end_single(text, i + 1)
    if c == "$" and text.startswith("$'", i):
        return _end_ansi(text, i + 2)
    if c == '"':
        return _end_double(text, i + 1, [])
    if c == "`":
        return _end_backtick(text, i + 1)
    if c == "$" and text.startswith("(", i + 1):
        return _end_paren(text, i + 2)
    return i + 1


def words_of(piece: str) -> list[str]:
    """Split one piece into words on unquoted whitespace, keeping quotes and substitutions."""
    words: list[str] = []
    current: list[str] = []
    i, n = 0, len(piece)
    while i < n:
        c = piece[i]
        if c in " \t\r\n":
            if current:
                words.append("".join(current))
                current.clear()
            i += 1
            continue
        end = _end_part(piece, i) if c in "\\'\"`$" else i + 1
        current.append(piece[i:end])
        i = end
    if current:
        words.append("".join(current))
    return words


def unquote(word: str) -> str:
    """The word the program receives: quotes removed, backslash escapes applied, ANSI-C `$'…'`
    decoded (`$'\\x72m'` is `rm`), pieces glued (`r$'m'`); an unclosed quote runs to the end.

    One pass: shlex builds a token a character at a time, quadratic on a long quoted argument
    (1.5 MB took ~25 s, past a client's hook timeout)."""
    out: list[str] = []
    i, n = 0, len(word)
    while i < n:
        c = word[i]
        if c == "\\":
            out.append(word[i + 1:i + 2])
            i += 2
        elif c == "'":
            end = _end_single(word, i + 1)
            out.append(_body(word, i + 1, end, "'"))
            i = end
        elif c == "$" and word.startswith("$'", i):
            end = _end_ansi(word, i + 2)
            out.append(_ANSI_ESCAPE.sub(_ansi_char, _body(word, i + 2, end, "'")))
            i = end
        elif c == '"' or (c == "$" and word.startswith('$"', i)):  # $"…" is a translated "…"
            start = i + 1 if c == '"' else i + 2
            end = _end_double(word, start, [])
            out.append(_DOUBLE_ESCAPE.sub(r"\1", _body(word, start, end, '"')))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _body(word: str, start: int, end: int, closer: str) -> str:
    """Text between a quote opened before `start` and its closer just before `end`, if it was closed."""
    return word[start:end - 1] if end > start and word[end - 1] == closer else word[start:end]


# Inside double quotes a backslash escapes only these; elsewhere it stays.
_DOUBLE_ESCAPE = re.compile(r'\\([$`"\\\n])')
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_char(m: re.Match[str]) -> str:
    """One escape of bash's `$'…'` quoting (bash manual, "ANSI-C Quoting"); unknown ones stay."""
    esc = m.group(1)
    if esc[0] in "xuU" and len(esc) > 1:
        code = int(esc[1:], 16)
        return chr(code) if code <= 0x10FFFF else ""
    if esc[0] in "01234567":
        return chr(int(esc, 8) & 0xFF)
    if esc[0] == "c" and len(esc) == 2:
        return chr(ord(esc[1]) & 0x1F)
    return _ANSI_SIMPLE.get(esc, "\\" + esc)

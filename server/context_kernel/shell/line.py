"""A shell command line as the simple commands it would run (standard library only).

Deny rules are matched per simple command, the way Claude Code matches them: a rule such as
`Bash(rm -rf *)` must deny `echo hi && rm -rf x` even though the whole line starts with `echo`.
So a line is cut on the control operators `&&`, `||`, `;`, `;;`, `|`, `|&`, `&` and newlines,
outside quotes; `$(...)`, backticks (nested too), `<(...)` and `>(...)` are cut out and split on
their own; subshell parentheses and `{ ...; }` groups are taken apart; heredoc bodies are set aside
(`<<EOF`, `<<-EOF`, quoted delimiters; also inside `$(...)`); the bodies of `bash -c '...'` (and sh,
zsh, dash, ksh), of `eval`, of `find -exec ... ;` and of `flock FILE -c '...'` are split again.

Each piece is then normalised (:func:`normalize`): leading `VAR=value` assignments, redirections
(wherever they stand), the wrappers `sudo`, `doas`, `env`, `command`, `builtin`, `exec`, `time`,
`nohup`, `nice`, `timeout`, `stdbuf`, `ionice`, `chrt`, `taskset`, `setsid`, `flock`, `xargs` (with
the options of each that take a value, and the operand some take before the command: timeout's
duration, taskset's mask, chrt's priority, flock's lock file) and the keywords
`if then else elif do while until ! coproc` are dropped, and whitespace outside quotes is collapsed
to one space. The command as written with its wrappers is kept too (`Command.outer`), so a rule on
the wrapper itself (`Bash(sudo:*)`) still matches.

What each :class:`Command` tells besides its words: its redirections (`Command.redirects`, and
:meth:`Command.stdout_to_file`), the bodies of its heredocs, which pipeline it belongs to and at
which stage, where it stands (`origin`: on the line itself, in a script handed to another shell, in
a substitution whose output is captured, or on a line of a heredoc body), the command that runs its
script (`parent`), and whether a quote or substitution in it was left open (`unterminated`).

Where a quote, substitution or heredoc ends, how a piece is cut into words and what a word reads
once unquoted (`$'…'` decoded too) live in :mod:`context_kernel.shell.words`.

Limits, on purpose (this is a guard against accidents and sloppy agents, not a sandbox, and a
reader of what an agent ran, not an interpreter):
- heredoc bodies are also split like commands by default (`heredoc_lines=True`), so text inside
  `cat <<EOF` can be denied (over-denies, never under-denies: `bash <<EOF` bodies *are* commands);
  they come with `origin="heredoc"`, and a body fed to a shell is not told apart from one fed to cat;
- a pipe out of a group (`(a; b) | c`) continues its last pipeline only (`b | c`; `a` is left
  alone); a group's redirections (`{ a; b; } > f`) do reach every command in it;
- `case ... in a) ...` patterns confuse the parenthesis matching inside `$(...)`;
- anything computed at run time (`$cmd`, `"r""m"` is handled but `$(printf rm)` is not resolved,
  aliases, functions defined earlier, scripts run from files) cannot be seen;
- programs that run a command but are not wrappers here (`watch`, `chroot`, `ssh`, `su -c`,
  `busybox`, `parallel`) are matched as themselves.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import count
from typing import Literal

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
    unquote,
    words_of,
)

# unquote and words_of are part of this module's surface (re-exported from words).
__all__ = ["MAX_DEPTH", "Command", "Origin", "Redirect", "commands", "normalize", "split_commands", "unquote",
           "words_of"]

MAX_DEPTH = 32
"""Nesting depth ($(...) inside bash -c inside ...) past which the rest is flattened (quotes and
substitution syntax dropped, then split once more) instead of parsed: it is still checked."""

Origin = Literal["line", "script", "substitution", "heredoc"]
"""Where a command stands: on the line itself (subshells and groups included); in a script another
program runs (`bash -c`, `eval`, `find -exec`, `flock -c`); inside `$(...)`, backticks, `<(...)` or
`>(...)`, whose output the shell captures or hands over as a file; on a line of a heredoc body (text
fed to a program, split as commands only so that deny rules see it). The outermost of these wins in
this order, heredoc first: a substitution inside a script is a substitution."""

_RANK: dict[str, int] = {"line": 0, "script": 1, "substitution": 2, "heredoc": 3}


def _within(outer: Origin, inner: Origin) -> Origin:
    return inner if _RANK[inner] > _RANK[outer] else outer


_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "coproc", "{", "(", "}", ")"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
# A redirection word: an optional descriptor, the operator (longest first), and its target when glued.
_REDIRECTION = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|>|<)(.*)", re.DOTALL)
_REDIRECTION_START = frozenset("0123456789<>&")


@dataclass(frozen=True)
class Redirect:
    """One redirection of a simple command (`2>/dev/null` is fd "2", op ">", target "/dev/null")."""

    op: str
    """`>`, `>>`, `>|`, `&>`, `&>>`, `>&`, `<`, `<&`, `<>`, `<<`, `<<-` or `<<<`."""
    target: str
    """The word after it, quotes removed: a file, a descriptor (`>&2`), a heredoc's delimiter."""
    fd: str = ""
    """The descriptor written before the operator; "" when there is none (stdout for `>`)."""

    def sends_stdout_to_file(self) -> bool:
        """Whether this sends descriptor 1 somewhere else than where it was going: `> f`, `>> f`,
        `1> f`, `&> f`, `>& f`. Duplicating it onto another descriptor (`>&2`) does not count."""
        if self.op in ("&>", "&>>"):
            return True
        if self.fd not in ("", "1"):
            return False
        return self.op in (">", ">>", ">|") or (self.op == ">&" and not self.target.isdigit())


@dataclass(frozen=True)
class Command:
    """One simple command after normalisation."""

    text: str
    """Words joined by one space, quotes kept: what a rule is shown against."""
    words: tuple[str, ...]
    """The words with shell quoting removed (`r"m"` -> `rm`), without wrappers and redirections."""
    outer: tuple[Command, ...] = ()
    """The same command with the wrappers that were dropped (`sudo rm x`, for `rm x`), outermost
    first: a rule on a wrapper (`Bash(sudo:*)`) must match them. Only their text and words are set."""
    redirects: tuple[Redirect, ...] = ()
    """Its redirections, wherever they stood, in order; then those of the groups around it
    (`{ a; } > f`, `(a; b) > f`)."""
    heredocs: tuple[str, ...] = ()
    """The bodies of its `<<` / `<<-` heredocs, in order (what the program reads on stdin)."""
    origin: Origin = "line"
    """Where it stands (see :data:`Origin`)."""
    pipeline: int = 0
    """Which pipeline it belongs to: a number shared by the stages of one pipeline (`a | b`) and by
    nothing else in the same :func:`commands` answer."""
    stage: int = 0
    """Its place in that pipeline, from 0: in `a | b | c`, `c` is stage 2."""
    parent: Command | None = field(default=None, repr=False, compare=False)
    """For a command of a script (`origin` script, or deeper inside one): the command that runs the
    script (`bash -c '...'`, `find ... -exec`); None on the line itself."""
    unterminated: bool = False
    """Its line leaves a quote or substitution open (it runs to the end of the text): bash would
    refuse that whole line, this command included."""

    @property
    def program(self) -> str:
        """The first word without its directory (`/usr/bin/git` -> `git`); "" for no words."""
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""

    def stdout_to_file(self) -> bool:
        """Whether a redirection of its own sends its standard output away (see :class:`Redirect`)."""
        return any(r.sends_stdout_to_file() for r in self.redirects)

    def forms(self) -> tuple[str, ...]:
        """The spellings a deny rule is matched against: as written, unquoted, and with the
        program's directory dropped (`/bin/rm` -> `rm`)."""
        forms = [self.text, " ".join(self.words)]
        if self.words and "/" in self.words[0]:
            forms.append(" ".join((self.words[0].rsplit("/", 1)[1], *self.words[1:])))
        return tuple(dict.fromkeys(f for f in forms if f))


def split_commands(command: str) -> list[str]:
    """The raw pieces of `command`: top-level pieces first in order, then those found nested
    inside each (substitutions, subshells, heredoc bodies). `bash -c` bodies are opened by
    :func:`commands`."""
    out: list[_Piece] = []
    _split(command, out, 0, "line", count(), True)
    return [piece.text for piece in out]


def commands(command: str, *, heredoc_lines: bool = True) -> list[Command]:
    """Every simple command `command` would run, normalised, `bash -c`/`eval` bodies included.

    With `heredoc_lines=False` heredoc bodies are only text of the command that reads them
    (`Command.heredocs`), not also commands of their own (`origin="heredoc"`)."""
    result: list[Command] = []
    ids = count()
    try:
        _collect(command, result, 0, "line", None, ids, heredoc_lines)
    except RecursionError:
        # Quotes and substitutions nested deeper than Python's stack (`"$("$(`… thousands of times):
        # the hook would answer neutrally and let a denied command through, so check the flattened
        # pieces instead (no quotes, no substitution syntax left: nothing recurses).
        result = _flat_commands(command, "line", None, ids)
    return result


def _collect(command: str, result: list[Command], depth: int, origin: Origin, parent: Command | None,
             ids: Iterator[int], heredoc_lines: bool) -> None:
    pieces: list[_Piece] = []
    _split(command, pieces, 0, origin, ids, heredoc_lines)
    for piece in pieces:
        parts = _normalized(piece.text)
        if parts is None:
            continue
        kept, redirects, outer = parts
        cmd = Command(" ".join(kept), tuple(unquote(w) for w in kept), outer, (*redirects, *piece.group_redirects),
                      tuple(piece.heredocs), piece.origin, piece.pipeline, piece.stage, parent, piece.unterminated)
        result.append(cmd)
        inner = _within(cmd.origin, "script")
        for body in _inner_scripts(cmd):
            if depth < MAX_DEPTH:
                _collect(body, result, depth + 1, inner, cmd, ids, heredoc_lines)
            else:
                result.extend(_flat_commands(body, inner, cmd, ids))


def _flat_commands(body: str, origin: Origin, parent: Command | None, ids: Iterator[int]) -> list[Command]:
    found = (normalize(piece) for piece in _flatten(body))
    return [replace(c, origin=origin, pipeline=next(ids), parent=parent) for c in found if c is not None]


def _inner_scripts(cmd: Command) -> list[str]:
    """Scripts a command hands to another shell: `bash -c BODY`, `bash -lc BODY`, a heredoc given to
    a shell reading its script from stdin (`bash <<EOF`, `sh -s <<EOF`), `eval ARGS`, the commands
    `find -exec/-execdir/-ok/-okdir CMD ;` runs, and `flock FILE -c BODY`."""
    words = cmd.words
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    if program == "eval":
        return [" ".join(words[1:])]
    if program == "find":
        return _find_commands(words)
    if program == "flock":  # its options come before the lock file, so a -c after it is the command
        return [words[j + 1] for j in range(2, len(words) - 1) if words[j] in ("-c", "--command")][:1]
    if program in _SHELLS:
        # bash [--long-opts] [-abc… | +abc…] [-o opt] [-O shopt] [--] [-c] BODY: with -c anywhere among
        # the options, BODY is the first word after all of them (`bash -c -x 'rm x'` runs `rm x`).
        has_c = has_s = False
        i = 1
        while i < len(words):
            word = words[i]
            if word == "--":
                i += 1
                break
            if word.startswith("--"):
                i += 2 if word in _SHELL_LONG_WITH_VALUE else 1
            elif word[:1] in "-+" and len(word) > 1:
                has_c = has_c or (word[0] == "-" and "c" in word[1:])
                has_s = has_s or (word[0] == "-" and "s" in word[1:])
                i += 2 if word[-1] in "oO" else 1  # -o/-O (+o/+O) take the next word
            else:
                break  # the first operand: the body with -c, else a script file
        if has_c:
            return [words[i]] if i < len(words) else []
        if has_s or i == len(words) or words[i] == "-":  # the script is read from stdin
            return list(cmd.heredocs)
    return []


_SHELL_LONG_WITH_VALUE = frozenset({"--rcfile", "--init-file"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find_commands(words: tuple[str, ...]) -> list[str]:
    """`find . -exec rm -rf {} ;` runs `rm -rf {}`: each -exec's words up to `;` or `+`."""
    found: list[str] = []
    i = 1
    while i < len(words):
        if words[i] in _FIND_EXEC:
            end = next((j for j in range(i + 1, len(words)) if words[j] in (";", "+")), len(words))
            if end > i + 1:
                found.append(shlex.join(words[i + 1:end]))
            i = end
        i += 1
    return found


# --- splitting -----------------------------------------------------------------------------


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


# --- normalising ---------------------------------------------------------------------------


def normalize(piece: str) -> Command | None:
    """Drop assignments, redirections, wrappers and keywords at the start (redirections anywhere);
    None if nothing is left. The wrapped forms are kept in `outer`, the redirections in `redirects`."""
    parts = _normalized(piece)
    if parts is None:
        return None
    kept, redirects, outer = parts
    return Command(" ".join(kept), tuple(unquote(w) for w in kept), outer, tuple(redirects))


def _normalized(piece: str) -> tuple[list[str], list[Redirect], tuple[Command, ...]] | None:
    """:func:`normalize`'s parts: the words kept (quoted), the redirections, the wrapped forms."""
    raw = words_of(piece)
    wrapped: list[list[str]] = []
    redirects: list[Redirect] = []
    while raw:
        head = raw[0]
        found = _redirection(raw, 0)
        if found is not None:
            redirects.append(found[0])
            raw = raw[found[1]:]
        elif head in _KEYWORDS or _ASSIGNMENT.match(head):
            raw = raw[1:]
        else:
            stripped = _strip_wrapper(raw)
            if stripped is None:
                break
            wrapped.append(raw)
            raw = stripped
    kept = _without_redirections(raw, redirects)
    if not kept:
        return None
    outer = tuple(c for c in (_plain(_without_redirections(w, [])) for w in wrapped) if c is not None)
    return kept, redirects, outer


def _plain(kept: list[str]) -> Command | None:
    return Command(" ".join(kept), tuple(unquote(w) for w in kept)) if kept else None


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


# Options of each wrapper that take a separate argument (`sudo -u root rm` -> `rm`), as their --help
# lists them (sudo, env, timeout, nice, stdbuf and xargs from GNU coreutils/findutils and sudo; ionice,
# chrt, taskset, setsid and flock from util-linux).
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    # -p/-P/-u act on running processes (nothing is run); -t (--ignore) takes no value.
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"}),
    "chrt": frozenset({"-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"}),
    "taskset": frozenset(),
    "setsid": frozenset(),
    # flock reads its options before the lock file only (`flock FILE -n cmd` runs `-n`).
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    # xargs runs its arguments as a command (Claude Code strips a bare xargs; with options it is as much a wrapper).
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                        "--max-procs", "--max-chars", "--process-slot-var"}),
}
# Operands between a wrapper's options and its command: timeout's duration, taskset's mask or CPU
# list, flock's lock file; chrt's priority is skipped only when it is a number.
_OPERANDS = {"timeout": 1, "taskset": 1, "flock": 1}


def _strip_wrapper(raw: list[str]) -> list[str] | None:
    name = unquote(raw[0]).rsplit("/", 1)[-1]
    takes_arg = _WRAPPERS.get(name)
    if takes_arg is None:
        return None
    if name == "command" and len(raw) > 1 and unquote(raw[1]) in ("-v", "-V"):
        return None  # `command -v rm` looks rm up, it does not run it
    rest = raw[1:]
    while rest:
        word = unquote(rest[0])
        if word == "--":
            rest = rest[1:]
            break
        if name == "env" and _ASSIGNMENT.match(word):
            rest = rest[1:]
        elif word.startswith("-") and len(word) > 1:
            if name == "env" and word in ("-S", "--split-string") and len(rest) > 1:
                # env -S 'rm -rf x' runs the split string
                return words_of(unquote(rest[1])) + rest[2:]
            rest = rest[2:] if word in takes_arg else rest[1:]
        else:
            break
    rest = rest[_OPERANDS.get(name, 0):]
    if name == "chrt" and rest and unquote(rest[0]).isdigit():
        rest = rest[1:]
    if name == "flock" and rest and unquote(rest[0]) in ("-c", "--command"):
        return None  # `flock FILE -c 'script'`: the script is opened like a `bash -c` body
    return rest

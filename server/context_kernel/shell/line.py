"""Splitting a shell command line into the simple commands it would run (standard library only).

Deny rules are matched per simple command, the way Claude Code matches them: a rule such as
`Bash(rm -rf *)` must deny `echo hi && rm -rf x` even though the whole line starts with `echo`.
So a line is cut on the control operators `&&`, `||`, `;`, `;;`, `|`, `|&`, `&` and newlines,
outside quotes; `$(...)`, backticks (nested too), `<(...)` and `>(...)` are cut out and split on
their own; subshell parentheses and `{ ...; }` groups are taken apart; the bodies of `bash -c '...'`
(and sh, zsh, dash, ksh) and of `eval` are split again.

Each piece is then normalised (:func:`normalize`): leading `VAR=value` assignments, redirections
(wherever they stand), the wrappers `sudo`, `env`, `command`, `builtin`, `exec`, `time`, `nohup`,
`nice`, `timeout`, `xargs` and the keywords `if then else elif do while until ! coproc` are dropped, and
whitespace outside quotes is collapsed to one space. The command as written with its wrappers is
kept too (`Command.outer`), so a rule on the wrapper itself (`Bash(sudo:*)`) still matches; the
command given to `find -exec` is opened like a `bash -c` body.

Where a quote or substitution ends, how a piece is cut into words and what a word reads once
unquoted (`$'…'` decoded too) live in :mod:`context_kernel.shell.words`.

Limits, on purpose (this is a guard against accidents and sloppy agents, not a sandbox):
- heredoc bodies are split like commands, so text inside `cat <<EOF` can be denied (over-denies,
  never under-denies: `bash <<EOF` bodies *are* commands);
- `case ... in a) ...` patterns confuse the parenthesis matching inside `$(...)`;
- anything computed at run time (`$cmd`, `"r""m"` is handled but `$(printf rm)` is not resolved,
  aliases, functions defined earlier, scripts run from files) cannot be seen;
- programs that run a command but are not wrappers here (`watch`, `flock`, `setsid`, `chroot`,
  `ssh`, `su -c`, `busybox`, `parallel`) are matched as themselves.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from .words import (
    _end_ansi,
    _end_backtick,
    _end_double,
    _end_paren,
    _end_single,
    _inside,
    _unescape_backtick,
    unquote,
    words_of,
)

# unquote and words_of are part of this module's surface (re-exported from words).
__all__ = ["MAX_DEPTH", "Command", "commands", "normalize", "split_commands", "unquote", "words_of"]

MAX_DEPTH = 32
"""Nesting depth ($(...) inside bash -c inside ...) past which the rest is flattened (quotes and
substitution syntax dropped, then split once more) instead of parsed: it is still checked."""

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "coproc", "{", "(", "}", ")"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_REDIRECTION = re.compile(r"\d*(?:[<>]&?|&>>?|>>|>\||<>|<<<?)")
_REDIRECTION_WITH_TARGET = re.compile(r"\d*(?:[<>]&?|&>>?|>>|>\||<<<?).+")


@dataclass(frozen=True)
class Command:
    """One simple command after normalisation."""

    text: str
    """Words joined by one space, quotes kept: what a rule is shown against."""
    words: tuple[str, ...]
    """The words with shell quoting removed (`r"m"` -> `rm`)."""
    outer: tuple[Command, ...] = ()
    """The same command with the wrappers that were dropped (`sudo rm x`, for `rm x`), outermost
    first: a rule on a wrapper (`Bash(sudo:*)`) must match them."""

    def forms(self) -> tuple[str, ...]:
        """The spellings a deny rule is matched against: as written, unquoted, and with the
        program's directory dropped (`/bin/rm` -> `rm`)."""
        forms = [self.text, " ".join(self.words)]
        if self.words and "/" in self.words[0]:
            forms.append(" ".join((self.words[0].rsplit("/", 1)[1], *self.words[1:])))
        return tuple(dict.fromkeys(f for f in forms if f))


def split_commands(command: str) -> list[str]:
    """The raw pieces of `command`: top-level pieces first in order, then those found nested
    inside each (substitutions, subshells). `bash -c` bodies are opened by :func:`commands`."""
    out: list[str] = []
    _split(command, out, 0)
    return [piece for piece in out if piece.strip()]


def commands(command: str) -> list[Command]:
    """Every simple command `command` would run, normalised, `bash -c`/`eval` bodies included."""
    result: list[Command] = []
    try:
        _collect(command, result, 0)
    except RecursionError:
        # Quotes and substitutions nested deeper than Python's stack (`"$("$(`… thousands of times):
        # the hook would answer neutrally and let a denied command through, so check the flattened
        # pieces instead (no quotes, no substitution syntax left: nothing recurses).
        result = [c for c in map(normalize, _flatten(command)) if c is not None]
    return result


def _collect(command: str, result: list[Command], depth: int) -> None:
    for piece in split_commands(command):
        cmd = normalize(piece)
        if cmd is None:
            continue
        result.append(cmd)
        for body in _inner_scripts(cmd.words):
            if depth < MAX_DEPTH:
                _collect(body, result, depth + 1)
            else:
                result.extend(c for c in map(normalize, _flatten(body)) if c is not None)


def _inner_scripts(words: tuple[str, ...]) -> list[str]:
    """Scripts a command hands to another shell: `bash -c BODY`, `bash -lc BODY`, `eval ARGS`, and the
    commands `find -exec/-execdir/-ok/-okdir CMD ;` runs."""
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    if program == "eval":
        return [" ".join(words[1:])]
    if program == "find":
        return _find_commands(words)
    if program in _SHELLS:
        # bash [--long-opts] [-abc… | +abc…] [-o opt] [-O shopt] [--] [-c] BODY: with -c anywhere among
        # the options, BODY is the first word after all of them (`bash -c -x 'rm x'` runs `rm x`).
        has_c, i = False, 1
        while i < len(words):
            word = words[i]
            if word == "--":
                i += 1
                break
            if word.startswith("--"):
                i += 2 if word in _SHELL_LONG_WITH_VALUE else 1
            elif word[:1] in "-+" and len(word) > 1:
                has_c = has_c or (word[0] == "-" and "c" in word[1:])
                i += 2 if word[-1] in "oO" else 1  # -o/-O (+o/+O) take the next word
            else:
                break  # the first operand: the body with -c, else a script file
        if has_c and i < len(words):
            return [words[i]]
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


def _split(text: str, out: list[str], depth: int) -> None:
    """Cut `text` on control operators; nested substitutions are split into `out` as found."""
    current: list[str] = []
    nested: list[str] = []
    i, n = 0, len(text)

    def cut() -> None:
        piece = "".join(current).strip()
        if piece:
            out.append(piece)
        current.clear()

    at_word_start = True
    while i < n:
        c = text[i]
        if c == "\\":
            if i + 1 < n and text[i + 1] == "\n":  # line continuation
                i += 2
                continue
            current.append(text[i:i + 2])
            i += 2
            at_word_start = False
            continue
        if c == "'":
            end = _end_single(text, i + 1)
            current.append(text[i:end])
            i, at_word_start = end, False
            continue
        if c == "$" and text.startswith("$'", i):  # ANSI-C quoting: backslash escapes, no expansion
            end = _end_ansi(text, i + 2)
            current.append(text[i:end])
            i, at_word_start = end, False
            continue
        if c == '"':
            end = _end_double(text, i + 1, nested)
            current.append(text[i:end])
            i, at_word_start = end, False
            continue
        if c == "`":
            end = _end_backtick(text, i + 1)
            nested.append(_unescape_backtick(_inside(text, i + 1, end, "`")))
            current.append(text[i:end])
            i, at_word_start = end, False
            continue
        if c in "$<>" and text.startswith("(", i + 1):  # $( ), <( ), >( )
            end = _end_paren(text, i + 2)
            nested.append(_inside(text, i + 2, end, ")"))
            current.append(text[i:end])
            i, at_word_start = end, False
            continue
        if c == "#" and at_word_start:  # a comment runs to the end of the line
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == "\n" or c == ";":
            cut()
            i, at_word_start = i + 1, True
            continue
        if c == "|":
            prev = text[i - 1] if i else ""
            if prev == ">":  # `>|` is a redirection
                current.append(c)
                i += 1
                continue
            cut()
            i += 2 if text.startswith(("||", "|&"), i) else 1
            at_word_start = True
            continue
        if c == "&":
            prev = text[i - 1] if i else ""
            if prev in "<>" or text.startswith(("&>",), i):  # 2>&1, >&2, &>file
                current.append(c)
                i += 1
                continue
            cut()
            i += 2 if text.startswith("&&", i) else 1
            at_word_start = True
            continue
        if c in "()":  # subshells and function bodies: their insides are commands of their own
            cut()
            i, at_word_start = i + 1, True
            continue
        current.append(c)
        at_word_start = c in " \t"
        i += 1
    cut()
    for body in nested:
        if depth < MAX_DEPTH:
            _split(body, out, depth + 1)
        else:
            out.extend(_flatten(body))


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
    None if nothing is left. The wrapped forms are kept in `outer`."""
    raw = words_of(piece)
    wrapped: list[list[str]] = []
    while raw:
        head = raw[0]
        if _REDIRECTION.fullmatch(head):  # a bare operator (`>`, `>|`): its target is the next word
            raw = raw[2:]
        elif head in _KEYWORDS or _ASSIGNMENT.match(head) or _REDIRECTION_WITH_TARGET.fullmatch(head):
            raw = raw[1:]
        else:
            stripped = _strip_wrapper(raw)
            if stripped is None:
                break
            wrapped.append(raw)
            raw = stripped
    inner = _command(raw)
    if inner is None:
        return None
    outer = tuple(c for c in map(_command, wrapped) if c is not None)
    return replace(inner, outer=outer) if outer else inner


def _command(raw: list[str]) -> Command | None:
    # Redirections may stand anywhere (`rm 2>/dev/null -rf x`); Claude Code matches rules on the
    # command without them (its CHANGELOG, 1.0.123: "`Bash(python:*)` matches `python script.py >
    # output.txt`", https://github.com/anthropics/claude-code), so they go wherever they are.
    kept: list[str] = []
    i = 0
    while i < len(raw):
        if _REDIRECTION.fullmatch(raw[i]):
            i += 2
        elif _REDIRECTION_WITH_TARGET.fullmatch(raw[i]):
            i += 1
        else:
            kept.append(raw[i])
            i += 1
    while kept and kept[-1] in ("}", ")"):
        kept = kept[:-1]
    if not kept:
        return None
    return Command(text=" ".join(kept), words=tuple(unquote(w) for w in kept))


# Options of each wrapper that take a separate argument (`sudo -u root rm` -> `rm`).
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
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    # xargs runs its arguments as a command (Claude Code strips a bare xargs; with options it is as much a wrapper).
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                        "--max-procs", "--max-chars", "--process-slot-var"}),
}


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
    if name == "timeout" and rest:  # the duration comes before the command
        rest = rest[1:]
    return rest

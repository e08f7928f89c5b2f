"""Splitting a shell command line into the simple commands it would run (standard library only).

Deny rules are matched per simple command, the way Claude Code matches them: a rule such as
`Bash(rm -rf *)` must deny `echo hi && rm -rf x` even though the whole line starts with `echo`.
So a line is cut on the control operators `&&`, `||`, `;`, `;;`, `|`, `|&`, `&` and newlines,
outside quotes; `$(...)`, backticks (nested too), `<(...)` and `>(...)` are cut out and split on
their own; subshell parentheses and `{ ...; }` groups are taken apart; the bodies of `bash -c '...'`
(and sh, zsh, dash, ksh) and of `eval` are split again.

Each piece is then normalised (:func:`normalize`): leading `VAR=value` assignments, redirections,
the wrappers `sudo`, `env`, `command`, `builtin`, `exec`, `time`, `nohup`, `nice`, `timeout` and
the keywords `if then else elif do while until !` are dropped, and whitespace outside quotes is
collapsed to one space.

Limits, on purpose (this is a guard against accidents and sloppy agents, not a sandbox):
- heredoc bodies are split like commands, so text inside `cat <<EOF` can be denied (over-denies,
  never under-denies: `bash <<EOF` bodies *are* commands);
- `case ... in a) ...` patterns confuse the parenthesis matching inside `$(...)`;
- anything computed at run time (`$cmd`, `"r""m"` is handled but `$(printf rm)` is not resolved,
  aliases, functions defined earlier, scripts run from files) cannot be seen.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

MAX_DEPTH = 32
"""Nesting depth ($(...) inside bash -c inside ...) past which the rest is flattened (quotes and
substitution syntax dropped, then split once more) instead of parsed: it is still checked."""

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "(", "}", ")"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_REDIRECTION = re.compile(r"\d*(?:[<>]&?|&>>?|>>|<<<?)")
_REDIRECTION_WITH_TARGET = re.compile(r"\d*(?:[<>]&?|&>>?|>>|>\||<<<?).+")


@dataclass(frozen=True)
class Command:
    """One simple command after normalisation."""

    text: str
    """Words joined by one space, quotes kept: what a rule is shown against."""
    words: tuple[str, ...]
    """The words with shell quoting removed (`r"m"` -> `rm`)."""

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
    _collect(command, result, 0)
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
    """Scripts a command hands to another shell: `bash -c BODY`, `bash -lc BODY`, `eval ARGS`."""
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    if program == "eval":
        return [" ".join(words[1:])]
    if program in _SHELLS:
        for i, word in enumerate(words[1:], start=1):
            if not word.startswith("-") or word.startswith("--"):
                break  # the first operand is a script file; no -c after it counts
            if "c" in word[1:] and i + 1 < len(words):
                return [words[i + 1]]
    return []


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


def _inside(text: str, start: int, end: int, closer: str) -> str:
    """The body between an opener ending at `start` and its closer just before `end` (if any:
    an unclosed substitution runs to the end of the text and is still checked)."""
    return text[start:end - 1] if end > start and text[end - 1] == closer else text[start:end]


def _end_single(text: str, i: int) -> int:
    end = text.find("'", i)
    return len(text) if end < 0 else end + 1


def _end_ansi(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "'":
            return i + 1
        i += 1
    return n


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
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i + 1
        i += 1
    return n


def _unescape_backtick(body: str) -> str:
    # Inside backticks a nested backtick is written \` and a backslash \\.
    return re.sub(r"\\([`\\$])", r"\1", body)


def _end_paren(text: str, i: int) -> int:
    """Index just past the `)` closing a `(` opened before `i`; the end of text if unbalanced."""
    n, depth = len(text), 1
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
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


# --- normalising ---------------------------------------------------------------------------


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
        if c == "\\":
            end = i + 2
        elif c == "'":
            end = _end_single(piece, i + 1)
        elif c == "$" and piece.startswith("$'", i):
            end = _end_ansi(piece, i + 2)
        elif c == '"':
            end = _end_double(piece, i + 1, [])
        elif c == "`":
            end = _end_backtick(piece, i + 1)
        elif c == "$" and piece.startswith("(", i + 1):
            end = _end_paren(piece, i + 2)
        else:
            end = i + 1
        current.append(piece[i:end])
        i = end
    if current:
        words.append("".join(current))
    return words


def unquote(word: str) -> str:
    """The word the program receives: quotes removed, backslash escapes applied."""
    try:
        parts = shlex.split(word, comments=False, posix=True)
    except ValueError:  # unbalanced quote: strip what can be stripped
        return word.replace("'", "").replace('"', "").replace("\\", "")
    if word.startswith("$'"):
        return word[2:-1] if word.endswith("'") else word[2:]
    return " ".join(parts) if parts else ""


def normalize(piece: str) -> Command | None:
    """Drop assignments, redirections, wrappers and keywords at the start; None if nothing is left."""
    raw = words_of(piece)
    while raw:
        head = raw[0]
        if head in _KEYWORDS or _ASSIGNMENT.match(head) or _REDIRECTION_WITH_TARGET.fullmatch(head):
            raw = raw[1:]
        elif _REDIRECTION.fullmatch(head):
            raw = raw[2:]
        else:
            stripped = _strip_wrapper(raw)
            if stripped is None:
                break
            raw = stripped
    while raw and raw[-1] in ("}", ")"):
        raw = raw[:-1]
    if not raw:
        return None
    return Command(text=" ".join(raw), words=tuple(unquote(w) for w in raw))


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

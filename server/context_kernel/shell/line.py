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
once unquoted (`$'…'` decoded too) live in :mod:`context_kernel.shell.words`; the cutting in
:mod:`~context_kernel.shell.scanner`, the :class:`Command` itself in :mod:`~context_kernel.shell.command`,
redirections, wrappers and the scripts handed to another shell in
:mod:`~context_kernel.shell.redirections`, :mod:`~context_kernel.shell.wrappers` and
:mod:`~context_kernel.shell.scripts`.

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

from collections.abc import Iterator
from dataclasses import replace
from itertools import count

from .command import Command, Origin, Redirect, _within
from .redirections import _redirection, _without_redirections
from .scanner import _KEYWORDS, MAX_DEPTH, _flatten, _Piece, _split
from .scripts import _inner_scripts
from .words import unquote, words_of
from .wrappers import _ASSIGNMENT, _strip_wrapper

# unquote and words_of are part of this module's surface (re-exported from words).
__all__ = ["MAX_DEPTH", "Command", "Origin", "Redirect", "commands", "normalize", "split_commands", "unquote",
           "words_of"]


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


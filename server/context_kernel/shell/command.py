"""What a simple command is once cut from a line and normalised: :class:`Command`, its
:class:`Redirect` list and where it stands (:data:`Origin`). Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Origin = Literal["line", "script", "substitution", "heredoc"]
"""Where a command stands: on the line itself (subshells and groups included); in a script another
program runs (`bash -c`, `eval`, `find -exec`, `flock -c`); inside `$(...)`, backticks, `<(...)` or
`>(...)`, whose output the shell captures or hands over as a file; on a line of a heredoc body (text
fed to a program, split as commands only so that deny rules see it). The outermost of these wins in
this order, heredoc first: a substitution inside a script is a substitution."""

_RANK: dict[str, int] = {"line": 0, "script": 1, "substitution": 2, "heredoc": 3}


def _within(outer: Origin, inner: Origin) -> Origin:
    return inner if _RANK[inner] > _RANK[outer] else outer


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

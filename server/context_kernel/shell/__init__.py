"""One model of a bash command line, for the code that must know what a line would run.

Three readers ask it their questions: the deny rules (`security.deny`: does any simple command
match a rule?), the fetch routing of the hooks (`hooks.shell_fetch`: does a fetch print a page to
the terminal?) and the session memory (`hooks.shell_commands`: what did the line do to the checkout
and the environment?). Standard library only, importing nothing but the standard library and
itself: the hooks import it on every tool call of an agent.

The surface:
- :func:`commands` cuts a line into the simple commands it would run, nested ones included
  (`$(…)`, backticks, `<(…)`, `bash -c`, `eval`, `find -exec`, `flock -c`, and heredoc bodies
  unless `heredoc_lines=False`), each normalised into a :class:`Command`: its words without
  assignments, wrappers (`sudo`, `env`, `timeout`, `ionice`, `xargs`, …) and redirections; the
  wrapped forms (`outer`); its :class:`Redirect` list; its heredoc bodies; its pipeline and stage;
  where it stands (:data:`Origin`); the command running its script (`parent`); and whether a quote
  was left open (`unterminated`).
- :func:`split_commands` gives the raw pieces, :func:`normalize` one piece as a :class:`Command`.
- :func:`words_of` and :func:`unquote` read words the way bash quotes them (`$'…'` included).

It models what the text of a line says, not what bash would compute: variables, aliases,
functions, globbing and scripts read from files are out of sight. The details and the limits are
in :mod:`context_kernel.shell.line`; quoting and heredoc scanning in :mod:`context_kernel.shell.words`.
"""

from .line import MAX_DEPTH, Command, Origin, Redirect, commands, normalize, split_commands
from .words import unquote, words_of

__all__ = [
    "MAX_DEPTH", "Command", "Origin", "Redirect", "commands", "normalize", "split_commands", "unquote", "words_of",
]

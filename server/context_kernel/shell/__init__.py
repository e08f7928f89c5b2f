"""A model of a bash command line, for the code that must know what a line would run.

Standard library only (it imports nothing but the standard library and itself): the hooks import
it on every tool call of an agent. The deny rules (`security.deny`) read commands through it.

- :func:`commands` cuts a line into the simple commands it would run and normalises each one
  (:class:`Command`); :func:`split_commands` gives the raw pieces, :func:`normalize` one piece.
- :func:`words_of` and :func:`unquote` read words the way bash quotes them.

What is modelled and what is not is told in :mod:`context_kernel.shell.line`.
"""

from .line import MAX_DEPTH, Command, commands, normalize, split_commands
from .words import unquote, words_of

__all__ = ["MAX_DEPTH", "Command", "commands", "normalize", "split_commands", "unquote", "words_of"]

"""Scripts a command hands to another shell: `bash -c BODY`, a heredoc fed to a shell, `eval`,
`find -exec`, `flock -c` (standard library only)."""

from __future__ import annotations

import shlex

from .command import Command

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh"})


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
        return _shell_scripts(words, cmd.heredocs)
    return []


def _shell_scripts(words: tuple[str, ...], heredocs: tuple[str, ...]) -> list[str]:
    """The script a shell (`words[0]` one of :data:`_SHELLS`) runs: the body after -c, or its heredocs
    when it reads the script from stdin (`-s`, no operand, or `-`); none when it runs a script file."""
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
        return list(heredocs)
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


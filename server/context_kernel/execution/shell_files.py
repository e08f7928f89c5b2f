"""Which files a shell cell read and wrote, read from its command line (the shell model, `context_kernel.shell`):
`< file` and existing files named as arguments are read, `> file` and `>> file` written, relative paths resolved
from where the cell started (our bash kernel reports it) and followed through the cell's own `cd`.

What the line says, not what ran: a file a script opens, a glob (`cat *.csv`), a path built in a variable or
read from another file is out of sight, as are files in system folders (`/usr`, `/etc`, `/proc`, …) and hidden
ones; a `cd` inside a subshell counts as if it were not. docs/notebooks.md lists these limits with python's.
"""

from __future__ import annotations

import os

from ..shell import commands

MAX_FILES = 200
_SYSTEM = ("/proc/", "/sys/", "/dev/", "/usr/", "/lib/", "/lib64/", "/etc/", "/opt/", "/run/", "/snap/", "/bin/",
           "/sbin/", "/var/lib/", "/var/cache/")
_WRITES = (">", ">>", ">|", "&>", "&>>")


def shell_files(code: str, cwd: str) -> dict[str, str]:
    """{absolute path: "r" or "w"} the cell's command line names, in order."""
    here = cwd
    found: dict[str, str] = {}
    for command in commands(code, heredoc_lines=False):
        if command.origin == "heredoc" or not command.words:
            continue
        if command.program == "cd" and command.origin == "line":
            here = _cd(here, command.words[1:])
            continue
        for redirect in command.redirects:
            if redirect.op in _WRITES and not redirect.target.isdigit():
                _note(found, _absolute(here, redirect.target), "w")
            elif redirect.op == "<":
                _note(found, _absolute(here, redirect.target), "r")
        for word in command.words[1:]:
            if word.startswith("-") or "=" in word:
                continue  # an option; `--file=x` is out of sight
            path = _absolute(here, word)
            if os.path.isfile(path):
                _note(found, path, "r")
        if len(found) >= MAX_FILES:
            break
    return found


def _note(found: dict[str, str], path: str, mode: str) -> None:
    if path.startswith(_SYSTEM) or "/." in path or (path in found and found[path] == "w"):
        return
    found[path] = mode


def _absolute(here: str, word: str) -> str:
    return os.path.normpath(os.path.join(here, os.path.expanduser(word)))


def _cd(here: str, args: tuple[str, ...]) -> str:
    target = next((a for a in args if not a.startswith("-")), "~")
    moved = _absolute(here, target)
    return moved if os.path.isdir(moved) else here

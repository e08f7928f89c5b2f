"""Wrappers that run the rest of their words as a command (`sudo`, `env`, `timeout`, `xargs`, …),
and how a command is taken out of them (standard library only)."""

from __future__ import annotations

import re

from .words import unquote, words_of

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")


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
    rest, is_command = _after_options(name, takes_arg, raw[1:])
    if is_command:
        return rest
    rest = rest[_OPERANDS.get(name, 0):]
    if name == "chrt" and rest and unquote(rest[0]).isdigit():
        rest = rest[1:]
    if name == "flock" and rest and unquote(rest[0]) in ("-c", "--command"):
        return None  # `flock FILE -c 'script'`: the script is opened like a `bash -c` body
    return rest


def _after_options(name: str, takes_arg: frozenset[str], rest: list[str]) -> tuple[list[str], bool]:
    """The words after wrapper `name`'s options (those in `takes_arg` with their value, and env's
    assignments); True with them when they are already the command to run (`env -S STRING`)."""
    while rest:
        word = unquote(rest[0])
        if word == "--":
            return rest[1:], False
        if name == "env" and _ASSIGNMENT.match(word):
            rest = rest[1:]
        elif word.startswith("-") and len(word) > 1:
            if name == "env" and word in ("-S", "--split-string") and len(rest) > 1:
                # env -S 'rm -rf x' runs the split string: no operands or options of env's follow it
                return words_of(unquote(rest[1])) + rest[2:], True
            rest = rest[2:] if word in takes_arg else rest[1:]
        else:
            break
    return rest, False

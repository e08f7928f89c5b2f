"""Does a shell command print a fetched web page into the agent's context? (standard library only)

A question asked of the shell model (:mod:`context_kernel.shell`, the one the deny rules read): the
line's simple commands, past wrappers (`sudo`, `timeout`, `ionice`, `xargs`, …), assignments and
redirections, nested scripts (`bash -c`, `eval`, `find -exec`) included. A command PRINTS A PAGE
when it is a fetcher whose body goes to stdout:
  curl                 unless -o/--output FILE (any FILE but "-", /dev/null included), -O /
                       --remote-name(-all), or -I/--head (headers only)
  wget                 only with -O -/-O-/-qO-/--output-document=- or /dev/stdout (else it saves)
  http/https/xh (HTTPie) unless -d/--download, -o/--output FILE, -h/--headers, -q/--quiet, or a
                       --print/-p selection without "b" (body)
  python -c / node -e|-p / ruby -e / perl -e / php -r (or a heredoc fed to them) whose code makes
                       an HTTP request and prints something
and that stdout reaches the terminal: not redirected to a file (> f, >> f, &> f, > /dev/null;
2>... is stderr), every later stage of its pipe only passes the page on unchanged (cat, tee, less,
more, bat, jq / jq . , json_pp, python -m json.tool, html2text, pandoc; any other stage, head,
grep, wc, sed, jq '.field', sh, tar …, means the agent filters or executes the page), not inside
`$( … )` or backticks (the shell captures that output), not a line of a heredoc body (text), and,
for a command of a script, the command running the script reaches the terminal in the same way.
A command with an open quote is never redirected (bash would refuse the line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..shell import Command, commands
from .adapters.common import first_url


@dataclass(frozen=True)
class PrintingFetch:
    tool: str
    url: str | None


_CURL_VALUE_FLAGS = set("AbcCdDeEFHKmoPQrtTuUwxXyYz")
_WGET_VALUE_FLAGS = set("OoaeiBtTwPUlARDIXQ")
_HTTPIE_VALUE_FLAGS = set("aApo")
_PASS_THROUGH = {"cat", "tee", "less", "more", "bat", "batcat", "json_pp", "html2text", "pandoc"}
_MAYBE_FETCH = re.compile(r"curl|wget|http|xh|fetch|requests|urllib|urlopen|Net::|LWP|file_get")


@lru_cache(maxsize=1)
def _inline() -> dict[str, tuple[tuple[str, ...], re.Pattern[str], re.Pattern[str]]]:
    """interpreter → (flags that take inline code, an HTTP call, a printing call); compiled on first use."""
    return {
        "python": (("-c",), re.compile(r"\b(?:requests|httpx)\.(?:get|post|request|stream)\b|urllib\.request|"
                                       r"urlopen\s*\(|http\.client|aiohttp"),
                   re.compile(r"\bprint\s*\(|sys\.stdout\.write|pprint\s*\(")),
        "node": (("-e", "--eval", "-p", "--print"),
                 re.compile(r"\bfetch\s*\(|\bhttps?\.(?:get|request)\s*\(|axios"),
                 re.compile(r"console\.(?:log|dir|info)|process\.stdout\.write")),
        "ruby": (("-e",), re.compile(r"Net::HTTP|open-uri|URI\.open|HTTParty|Faraday"),
                 re.compile(r"\b(?:puts|print|pp|p)\b")),
        "perl": (("-e", "-E"), re.compile(r"LWP|HTTP::Tiny"), re.compile(r"\b(?:print|say)\b")),
        "php": (("-r",), re.compile(r"file_get_contents\s*\(\s*['\"]https?:|curl_exec"),
                re.compile(r"\b(?:echo|print|var_dump|print_r)\b")),
    }


def find_printing_fetch(command: str) -> PrintingFetch | None:
    """The first fetch in `command` that would print a page into the agent's context, if any."""
    if not command or not _MAYBE_FETCH.search(command):
        return None  # fast path: nothing that can fetch
    cmds = commands(command, heredoc_lines=False)
    for cmd in cmds:
        found = _fetch_to_stdout(cmd)
        if found is not None and _reaches_terminal(cmd, cmds):
            return found
    return None


def _reaches_terminal(cmd: Command, cmds: list[Command]) -> bool:
    """Whether what `cmd` writes to stdout ends on the terminal (the module docstring's rule)."""
    if cmd.origin not in ("line", "script") or cmd.unterminated or cmd.stdout_to_file():
        return False
    tail = [c for c in cmds if c.pipeline == cmd.pipeline and c.stage > cmd.stage]
    if not all(_passes_through(c) for c in tail) or (tail and tail[-1].stdout_to_file()):
        return False
    return cmd.parent is None or _reaches_terminal(cmd.parent, cmds)


def _fetch_to_stdout(cmd: Command) -> PrintingFetch | None:
    name, args = cmd.program, list(cmd.words[1:])
    url = next((a for a in args if a.startswith(("http://", "https://"))), None)
    if name == "curl":
        output, remote, head = _scan_flags(args, _CURL_VALUE_FLAGS, {"o": "output"}, {"O": "remote", "I": "head"},
                                           {"--output": "output"}, {"--remote-name": "remote",
                                                                   "--remote-name-all": "remote", "--head": "head"})
        if (output and output.get("output") not in ("-", "/dev/stdout")) or remote or head:
            return None
        return PrintingFetch("curl", url)
    if name == "wget":
        output, remote, _ = _scan_flags(args, _WGET_VALUE_FLAGS, {"O": "output"}, {},
                                        {"--output-document": "output"}, {"--spider": "remote"})
        if remote or not output or output.get("output") not in ("-", "/dev/stdout"):
            return None
        return PrintingFetch("wget", url)
    if name in ("http", "https", "xh", "xhs"):
        output, quiet, head = _scan_flags(args, _HTTPIE_VALUE_FLAGS, {"o": "output", "p": "print"},
                                          {"d": "quiet", "q": "quiet", "h": "head"},
                                          {"--output": "output", "--print": "print"},
                                          {"--download": "quiet", "--quiet": "quiet", "--headers": "head"})
        if quiet or head or (output and "output" in output) or (output and "b" not in output.get("print", "b")):
            return None
        return PrintingFetch(name, url)
    return _inline_fetch(cmd, name, args)


def _inline_fetch(cmd: Command, name: str, args: list[str]) -> PrintingFetch | None:
    """An interpreter given code inline (`python -c`, `node -e`, a heredoc) that makes an HTTP request and
    prints what it got."""
    interpreter = re.sub(r"[0-9.]+$", "", name).removesuffix("js")
    interpreter = {"pypy": "python", "bun": "node", "deno": "node"}.get(interpreter, interpreter)
    if interpreter not in ("python", "node", "ruby", "perl", "php"):
        return None
    flags, http_call, printing = _inline()[interpreter]
    code = "\n".join(cmd.heredocs)
    for i, arg in enumerate(args[:-1]):
        if arg in flags:
            code += "\n" + args[i + 1]
    if http_call.search(code) and (printing.search(code) or "-p" in args or "--print" in args):
        return PrintingFetch(f"{name} HTTP request", first_url(code))
    return None


def _scan_flags(args: list[str], value_flags: set[str], short_values: dict[str, str],
                short_switches: dict[str, str], long_values: dict[str, str],
                long_switches: dict[str, str]) -> tuple[dict[str, str], bool, bool]:
    """Read the options we care about, stepping over the values of options that take one.

    Returns (values seen, switch "remote"/"quiet" seen, switch "head" seen).
    """
    values: dict[str, str] = {}
    switches: set[str] = set()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        if arg.startswith("--"):
            opt, eq, val = arg.partition("=")
            if opt in long_values:
                if not eq:
                    i += 1
                    val = args[i] if i < len(args) else ""
                values[long_values[opt]] = val
            elif opt in long_switches:
                switches.add(long_switches[opt])
        elif arg.startswith("-") and len(arg) > 1:
            for j, ch in enumerate(arg[1:], start=1):
                if ch in short_switches:
                    switches.add(short_switches[ch])
                elif ch in value_flags:
                    val = arg[j + 1:]
                    if not val:
                        i += 1
                        val = args[i] if i < len(args) else ""
                    if ch in short_values:
                        values[short_values[ch]] = val
                    break
        i += 1
    remote = bool(switches & {"remote", "quiet"})
    return values, remote, "head" in switches


def _passes_through(stage: Command) -> bool:
    name, args = stage.program, list(stage.words[1:])
    if name in _PASS_THROUGH:
        return True
    if name in ("jq", "gojq"):
        filters = [a for a in args if not a.startswith("-")]
        return not filters or filters[0] == "."
    if re.fullmatch(r"python[0-9.]*", name):
        return args[:2] == ["-m", "json.tool"]
    return False

"""Does a shell command print a fetched web page into the agent's context? (standard library only)

The exact rule. The command is split into pipelines (on ; && || & ( ) and newlines; heredoc
bodies are set aside; `$( … )` substitutions are skipped because the shell captures their
output). A pipeline PRINTS A PAGE when it has a fetcher whose body goes to stdout:
  curl                 unless -o/--output FILE (any FILE but "-", /dev/null included), -O /
                       --remote-name(-all), or -I/--head (headers only)
  wget                 only with -O -/-O-/-qO-/--output-document=- or /dev/stdout (else it saves)
  http/https/xh (HTTPie) unless -d/--download, -o/--output FILE, -h/--headers, -q/--quiet, or a
                       --print/-p selection without "b" (body)
  python -c / node -e|-p / ruby -e / perl -e / php -r (or a heredoc fed to them) whose code makes
                       an HTTP request and prints something
and that stdout is not redirected to a file (> f, >> f, &> f, > /dev/null; 2>... is stderr) and
every later stage of the pipe only passes the page on unchanged: cat, tee, less, more, bat,
jq / jq . , json_pp, python -m json.tool, html2text, pandoc. Any other stage (head, grep, wc,
sed, jq '.field', sh, tar …) means the agent filters or executes the page: not redirected.
Commands the shell cannot parse (unbalanced quotes) are never redirected, nor is a logical line
longer than MAX_LINE characters (after heredoc bodies are set aside): that is a script or data, not a
page fetch, and shlex is quadratic on a long token (1.5 MB took ~25 s, past a client's hook timeout).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache

from .adapters.common import first_url


@dataclass(frozen=True)
class PrintingFetch:
    tool: str
    url: str | None


_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS = {"sudo", "time", "command", "exec", "nohup", "env", "nice", "stdbuf", "xargs", "timeout"}
_SEPARATORS = {";", "&&", "||", "&", "(", ")", ";;"}
_PIPES = {"|", "|&"}
_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<", "<<", "<<<", ">&", "<&", "<>"}
_CURL_VALUE_FLAGS = set("AbcCdDeEFHKmoPQrtTuUwxXyYz")
_WGET_VALUE_FLAGS = set("OoaeiBtTwPUlARDIXQ")
_HTTPIE_VALUE_FLAGS = set("aApo")
_PASS_THROUGH = {"cat", "tee", "less", "more", "bat", "batcat", "json_pp", "html2text", "pandoc"}
MAX_LINE = 32_768


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
    if not command or not re.search(r"curl|wget|http|xh|fetch|requests|urllib|urlopen|Net::|LWP|file_get", command):
        return None  # fast path: nothing that can fetch
    text, heredocs = _set_heredocs_aside(command)
    for line in _logical_lines(text):
        if len(line) > MAX_LINE:
            continue
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            tokens = list(lexer)
        except ValueError:
            return None
        for pipeline in _pipelines(tokens):
            found = _printing_fetch_in(pipeline, heredocs)
            if found is not None:
                return found
    return None


@dataclass
class _Stage:
    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str | None, str, str]] = field(default_factory=list)
    """(fd, operator, target)"""

    def stdout_to_file(self) -> bool:
        for fd, op, target in self.redirects:
            if op in ("&>", "&>>") or (op in (">", ">>", ">|") and fd in (None, "1")):
                return True
            if op == ">&" and fd in (None, "1") and not target.isdigit():
                return True
        return False


def _set_heredocs_aside(command: str) -> tuple[str, dict[str, str]]:
    """Replace each `<<EOF … EOF` by a placeholder word; the bodies are returned by placeholder."""
    lines = command.split("\n")
    out: list[str] = []
    bodies: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        pending: list[tuple[str, str, bool]] = []
        pieces: list[str] = []
        last = 0
        for m in _HEREDOC.finditer(line):
            key = f"__ck_heredoc_{len(bodies) + len(pending)}__"
            pending.append((key, m.group(3), m.group(1) == "-"))
            pieces += [line[last:m.start()], f" {key}"]
            last = m.end()
        out.append("".join(pieces) + line[last:])
        for key, delimiter, strip_tabs in pending:
            body: list[str] = []
            while i < len(lines):
                text = lines[i]
                i += 1
                if (text.lstrip("\t") if strip_tabs else text) == delimiter:
                    break
                body.append(text)
            bodies[key] = "\n".join(body)
    return "\n".join(out), bodies


def _logical_lines(text: str) -> list[str]:
    """Split on newlines that are not quoted and not escaped."""
    lines: list[str] = []
    current: list[str] = []
    quote: str | None = None
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
            if ch == "\n" and quote is None:
                current.pop()  # line continuation: drop the backslash
                continue
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote is None and ch in "'\"":
            quote = ch
        elif ch == quote:
            quote = None
        elif ch == "\n" and quote is None:
            lines.append("".join(current))
            current = []
            continue
        current.append(ch)
    lines.append("".join(current))
    return [line for line in lines if line.strip()]


def _pipelines(tokens: list[str]) -> list[list[_Stage]]:
    pipelines: list[list[_Stage]] = [[_Stage()]]
    depth = 0  # inside $( … ): the shell captures that output
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        stage = pipelines[-1][-1]
        if depth:
            depth += tok == "("
            depth -= tok == ")"
        elif tok == "(" and stage.words and stage.words[-1].endswith("$"):
            depth = 1
        elif tok in _SEPARATORS:
            pipelines.append([_Stage()])
        elif tok in _PIPES:
            pipelines[-1].append(_Stage())
        elif tok in _REDIRECTS:
            fd = stage.words.pop() if stage.words and stage.words[-1].isdigit() else None
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            stage.redirects.append((fd, tok, target))
            i += 1
        else:
            stage.words.append(tok)
        i += 1
    return [p for p in pipelines if any(s.words for s in p)]


def _command(words: list[str]) -> tuple[str, list[str]]:
    """(command name, its arguments), past assignments and wrappers like sudo/env/time."""
    i = 0
    while i < len(words):
        word = words[i]
        name = os.path.basename(word)
        if _ASSIGNMENT.match(word) or (word.startswith("-") and i > 0):
            i += 1
        elif name in _WRAPPERS:
            i += 1
            if name == "timeout" and i < len(words) and re.match(r"^\d", words[i]):
                i += 1
        else:
            return name, words[i + 1:]
    return "", []


def _printing_fetch_in(pipeline: list[_Stage], heredocs: dict[str, str]) -> PrintingFetch | None:
    for index, stage in enumerate(pipeline):
        name, args = _command(stage.words)
        found = _fetch_to_stdout(name, args, heredocs)
        if found is None:
            continue
        tail = pipeline[index + 1:]
        if stage.stdout_to_file() or not all(_passes_through(s) for s in tail):
            return None
        if tail and tail[-1].stdout_to_file():
            return None
        return found
    return None


def _fetch_to_stdout(name: str, args: list[str], heredocs: dict[str, str]) -> PrintingFetch | None:
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
    interpreter = re.sub(r"[0-9.]+$", "", name).removesuffix("js")
    interpreter = {"pypy": "python", "bun": "node", "deno": "node"}.get(interpreter, interpreter)
    if interpreter in ("python", "node", "ruby", "perl", "php"):
        flags, http_call, printing = _inline()[interpreter]
        code = "\n".join(heredocs[a] for a in args if a in heredocs)
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


def _passes_through(stage: _Stage) -> bool:
    name, args = _command(stage.words)
    if name in _PASS_THROUGH:
        return True
    if name in ("jq", "gojq"):
        filters = [a for a in args if not a.startswith("-")]
        return not filters or filters[0] == "."
    if re.fullmatch(r"python[0-9.]*", name):
        return args[:2] == ["-m", "json.tool"]
    return False

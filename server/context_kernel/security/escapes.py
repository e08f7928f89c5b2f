"""Shell commands that code in other languages would run, read from its string literals.

A deny rule such as `Bash(rm -rf *)` would be pointless if `os.system("rm -rf x")` in a python
cell went through, so each language's usual ways of starting a process are recognised and the
command they are given is rebuilt from the literals in the call:

- python: `os.system`, `os.popen`, `subprocess.run/call/check_call/check_output/Popen/getoutput`
  (string, or list joined into a command line), `pty.spawn`, `os.exec*`, `os.spawn*`,
  `os.posix_spawn[p]`, asyncio's
  `create_subprocess_shell/exec`, and IPython's `!cmd`, `x = !cmd`, `%sx`, `%system`, `%%bash`,
  `%%sh`, `%%script bash` (the python kernel is IPython);
- javascript/typescript: `exec/execSync/spawn/spawnSync/execFile/execFileSync` (any object or
  destructured), `execa`, `Bun.spawn`, `` $`...` `` (Bun shell, zx), `Deno.Command`, `Deno.run`;
- ruby: backticks, `%x{}`, `system`, `exec`, `spawn`, `IO.popen`, `Open3.*`;
- go: `exec.Command` / `exec.CommandContext` (arguments joined);
- php: `shell_exec`, `exec`, `system`, `passthru`, `popen`, `proc_open`, `pcntl_exec`, backticks;
- rust: `Command::new("rm").arg(..).args([..])`;
- perl: `system`, `exec`, backticks, `qx{}`, `readpipe`, pipe `open`;
- r: `system()`, `system2()`, `pipe()`, `processx::run()`;
- elixir: `System.cmd("rm", ["-rf"])`, `System.shell`, `:os.cmd('...')`, `Port.open({:spawn, ...})`;
- csharp: `Process.Start("cmd", "args")`, `new ProcessStartInfo("cmd", "args")`,
  `FileName = "..."` with `Arguments = "..."`.

Argument lists are joined with shell quoting (`["bash", "-c", "rm -rf x"]` becomes
`bash -c 'rm -rf x'`, which the shell check opens again). Interpolations (`f"{x}"`, `${x}`,
`#{x}`) stay as written; concatenated variables contribute nothing (`"rm -rf " + d` is checked as
`rm -rf`, which `Bash(rm -rf *)` still denies).

Limits: this reads literals with regular expressions and a small lexer per language
(`literals.py`; a call's arguments in `call_arguments.py`), it does not parse or run the code. A
command built at run time (from variables, files, `getattr(os, "sys" + "tem")`, `eval`, aliases
made in an earlier cell) cannot be seen.
Calls inside comments and string literals are not recognised (except IPython `!` lines, read from
the raw text), and an unusual object method with the same name as a process call
(`regex.exec("...")`) is read as one: that over-denies, never under-denies.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from context_kernel.security.call_arguments import (
    _Arg,
    _args,
    _argv_line,
    _as_words,
    _command_line,
    _plain_line,
    _positional,
)
from context_kernel.security.literals import mask_code, read_literal

_ALIASES = {
    "py": "python", "python3": "python", "ipython": "python",
    "js": "javascript", "node": "javascript", "nodejs": "javascript",
    "ts": "typescript", "rb": "ruby", "golang": "go", "rs": "rust", "pl": "perl",
    "ex": "elixir", "exs": "elixir", "c#": "csharp", "cs": "csharp",
    "bash": "shell", "sh": "shell", "zsh": "shell",
}


def canonical_language(language: str) -> str:
    lang = language.strip().lower()
    return _ALIASES.get(lang, lang)


@dataclass(frozen=True)
class ShellEscape:
    command: str
    """The command line the code would run, as well as it can be rebuilt."""
    via: str
    """The call that runs it, e.g. `os.system`."""


# --- per language ------------------------------------------------------------------------------

_Builder = Callable[[list[_Arg]], str | None]


@dataclass(frozen=True)
class _Call:
    pattern: re.Pattern[str]
    """Matches the callee; the match ends at `(`, or before the arguments when paren-less."""
    build: _Builder
    take: tuple[int | None, int | None] = (None, None)
    parenless: bool = False


def _calls(names: str, build: _Builder, take: tuple[int | None, int | None] = (None, None), *,
           prefix: str = r"(?<![\w$])", parenless: bool = False) -> _Call:
    if parenless:
        pattern = re.compile(prefix + r"(?:" + names + r")(?:\s*\(|[ \t]+(?=[\"'`%qA-Za-z\[]))")
    else:
        pattern = re.compile(prefix + r"(?:" + names + r")\s*\(")
    return _Call(pattern, build, take, parenless)


_FIRST, _ARGV = _command_line, _argv_line

_TABLE: dict[str, list[_Call]] = {
    "python": [
        _calls(r"(?:os\.)?system|(?:os\.)?popen|pty\.spawn|create_subprocess_shell|commands\.getoutput", _FIRST),
        _calls(r"(?:[A-Za-z_]\w*\.)?(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)",
               _FIRST, prefix=r"(?<![\w.])"),
        _calls(r"create_subprocess_exec", _ARGV),
        _calls(r"os\.exec[lv]p?e?", _ARGV, (1, None)),
        # os.spawn*(mode, path, args...) and os.posix_spawn[p](path, argv, env): argv after the path.
        _calls(r"(?:os\.)?spawn[lv]p?e?", _ARGV, (2, None)),
        _calls(r"(?:os\.)?posix_spawnp?", _ARGV, (1, 2)),
    ],
    "javascript": [
        _calls(r"execSync|exec|execaCommand|execaCommandSync", _FIRST),
        _calls(r"spawnSync|spawn|execFileSync|execFile|execa|execaSync", _ARGV, (0, 2)),
        _calls(r"Bun\.spawnSync|Bun\.spawn|Deno\.run", _FIRST),
        _calls(r"(?:new\s+)?Deno\.Command", _ARGV, (0, 2)),
    ],
    "ruby": [
        _calls(r"system|exec|spawn", _ARGV, parenless=True),
        _calls(r"IO\.popen", _FIRST),
        _calls(r"Open3\.\w+|Process\.spawn", _ARGV),
    ],
    "go": [_calls(r"exec\.CommandContext|exec\.Command", _ARGV)],
    "php": [
        _calls(r"shell_exec|exec|system|passthru|popen|proc_open", _FIRST, prefix=r"(?<![\w$>:])"),
        _calls(r"pcntl_exec", _ARGV, (0, 2)),
    ],
    "perl": [
        _calls(r"system|exec", _ARGV, prefix=r"(?<![\w$@%>:])", parenless=True),
        _calls(r"readpipe", _FIRST, parenless=True),
    ],
    "r": [
        _calls(r"system|pipe|shell", _FIRST, prefix=r"(?<![\w.])"),
        _calls(r"system2|processx::run", _ARGV, (0, 2), prefix=r"(?<![\w.])"),
    ],
    "elixir": [
        _calls(r"System\.cmd", _ARGV, (0, 2)),
        _calls(r"System\.shell|:os\.cmd", _FIRST),
    ],
    "rust": [],  # Command::new chains are read by _rust_chain
    "csharp": [_calls(r"Process\.Start|new\s+(?:System\.Diagnostics\.)?ProcessStartInfo", _plain_line, (0, 2))],
}
_TABLE["typescript"] = _TABLE["javascript"]

_IPYTHON_LINE = re.compile(
    r"^[ \t]*(?:[\w.,\[\] \t]+=[ \t]*)?!!?(?!=)(.+)$"  # `!cmd`, `x = !cmd`, `!!cmd`
    r"|^[ \t]*%(?:sx|system)[ \t]+(.+)$",  # `%sx cmd`, `%system cmd`
    re.MULTILINE,
)
_IPYTHON_CELL = re.compile(r"\A\s*%%(?:bash|sh|system|script[ \t]+(?:\S*/)?(?:ba|z|da)?sh)\b[^\n]*\n(.*)", re.DOTALL)
_BACKTICK_TAG = re.compile(r"(?<![\w$])(?:Bun\.)?\$(?=`)")
_RUST_COMMAND = re.compile(r"(?<!\w)(?:std::process::)?Command::new\s*\(")
_RUST_METHOD = re.compile(r"\s*\.\s*(\w+)\s*(?:::<[^>]*>)?\s*\(")
_PORT_SPAWN = re.compile(r"\{\s*:spawn(?:_executable)?\s*,\s*")
_CSHARP_FILENAME = re.compile(r"\bFileName\s*=\s*")
_CSHARP_ARGUMENTS = re.compile(r"\bArguments\s*=\s*")


def shell_escapes(language: str, code: str) -> list[ShellEscape]:
    """Every shell command `code` would run that can be read from its literals."""
    lang = canonical_language(language)
    if lang == "shell":
        return [ShellEscape(code, "the shell")]
    if lang not in _TABLE:
        return []
    unique: dict[str, ShellEscape] = {}
    for escape in _escapes(lang, code):
        unique.setdefault(escape.command, escape)
    return list(unique.values())


def _escapes(lang: str, code: str) -> Iterator[ShellEscape]:
    if lang == "python":
        cell = _IPYTHON_CELL.match(code)
        if cell:
            yield ShellEscape(cell.group(1), "an IPython %%bash cell")
            return
        for m in _IPYTHON_LINE.finditer(code):
            yield ShellEscape((m.group(1) or m.group(2)).strip(), "an IPython ! line")
    text, bare, literals = mask_code(code, lang)
    for lit in literals:
        if lit.kind == "shell":
            yield ShellEscape(lit.value, "backticks or %x/qx")
    for call in _TABLE[lang]:
        for m in call.pattern.finditer(bare):
            args, _ = _args(text, m.end(), lang, parenless=call.parenless and not m.group(0).rstrip().endswith("("))
            line = call.build(_positional(text, args, lang)[slice(*call.take)])
            if line and line.strip():
                yield ShellEscape(line, " ".join(m.group(0).rstrip("( \t").split()))
    yield from _special(lang, text, bare)


def _special(lang: str, text: str, bare: str) -> Iterator[ShellEscape]:
    """Forms that are not one call with arguments."""
    if lang in ("javascript", "typescript"):
        for m in _BACKTICK_TAG.finditer(bare):
            lit = read_literal(text, m.end(), lang)
            if lit is not None:
                yield ShellEscape(lit.value, "the $`...` shell")
    elif lang == "rust":
        for m in _RUST_COMMAND.finditer(bare):
            yield from _rust_chain(text, m.end())
    elif lang == "elixir":
        for m in _PORT_SPAWN.finditer(bare):
            lit = read_literal(text, m.end(), lang)
            if lit is not None:
                yield ShellEscape(lit.value, "Port.open")
    elif lang == "csharp":
        for m in _CSHARP_FILENAME.finditer(bare):
            program = read_literal(text, m.end(), lang)
            if program is None:
                continue
            following = _CSHARP_ARGUMENTS.search(bare, m.end())
            next_program = _CSHARP_FILENAME.search(bare, m.end())
            arguments = ""
            if following and (next_program is None or following.start() < next_program.start()):
                lit = read_literal(text, following.end(), lang)
                arguments = lit.value if lit else ""
            yield ShellEscape(f"{program.value} {arguments}".strip(), "ProcessStartInfo")


def _rust_chain(text: str, pos: int) -> Iterator[ShellEscape]:
    """`Command::new("rm").arg("-rf").args(["a", "b"])`: the program then each argument."""
    args, i = _args(text, pos, "rust")
    words = [w for a in args[:1] for w in _as_words(a)]
    if not words:
        return
    while True:
        m = _RUST_METHOD.match(text, i)
        if m is None:
            break
        method_args, i = _args(text, m.end(), "rust")
        if m.group(1) in ("arg", "args"):
            words.extend(w for a in method_args[:1] for w in _as_words(a))
    yield ShellEscape(shlex.join(words) if len(words) > 1 else words[0], "Command::new")

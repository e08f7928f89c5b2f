"""How each language served by the script kernel turns a cell into a program.

A cell is written to one source file in the kernel's scratch directory. Languages
that need an entry point get one (Go, Rust, C#), and when the caller attached a
file (cell metadata ``context_kernel.file_path``) its path and text are bound to
FILE_CONTENT_PATH / file_path / FILE_CONTENT in the language's own syntax
(lowercase ``file_content``/``file_content_path`` where uppercase names would be
constants or warn: Elixir, Rust). File text is read at run time, so only the path
is embedded in source and needs escaping.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Program:
    """What to run for one cell: ``compile`` (optional, cwd = scratch dir) then ``run``."""

    source: str
    path: str  # where ``source`` is written
    run: list[str]
    compile: list[str] | None = None  # relative names, so messages say "cell.rs:2:5"
    extra_files: dict[str, str] = field(default_factory=dict)  # path -> text, e.g. a prelude


@dataclass(frozen=True)
class Language:
    name: str  # --language value and language_info name
    display_name: str
    file_extension: str
    mimetype: str
    tools: tuple[tuple[str, str], ...]  # (executable, Debian package that provides it)
    build: Callable[[str, str | None, str], Program]  # (code, file_path or None, scratch dir)


def _quoted(text: str, escape_char: Callable[[str], str], specials: dict[str, str]) -> str:
    """A double-quoted literal: printable ASCII verbatim, the rest through ``escape_char``."""
    out = []
    for char in text:
        if char in specials:
            out.append(specials[char])
        elif " " <= char < "\x7f":
            out.append(char)
        else:
            out.append(escape_char(char))
    return '"' + "".join(out) + '"'


_BACKSLASH_QUOTE = {"\\": "\\\\", '"': '\\"'}


def _single_quoted(text: str) -> str:
    """Ruby/Perl/PHP single quotes: only backslash and quote are special; UTF-8 stays as is."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _go_literal(text: str) -> str:
    def raw_bytes(char: str) -> str:  # \xHH escapes give Go the path's exact bytes
        return "".join(f"\\x{b:02x}" for b in os.fsencode(char))

    return _quoted(text, raw_bytes, _BACKSLASH_QUOTE)


def _rust_literal(text: str) -> str:
    return _quoted(text, lambda c: f"\\u{{{ord(c):x}}}", _BACKSLASH_QUOTE)


def _elixir_literal(text: str) -> str:
    # '#' must be escaped or "#{...}" would interpolate
    return _quoted(text, lambda c: f"\\u{{{ord(c):x}}}", {**_BACKSLASH_QUOTE, "#": "\\#"})


def _csharp_literal(text: str) -> str:
    def utf16(char: str) -> str:
        units = char.encode("utf-16-be", "surrogatepass")
        return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))

    return _quoted(text, utf16, _BACKSLASH_QUOTE)


def _path(scratch: str, name: str) -> str:
    return os.path.join(scratch, name)


# --- interpreted languages: preludes never move the user's line numbers


def _ruby(code: str, file_path: str | None, scratch: str) -> Program:
    src = _path(scratch, "cell.rb")
    if file_path is None:
        return Program(code, src, ["ruby", src])
    # a separate file loaded with -r: the cell's first line stays line 1 (magic comments work);
    # file_path is a method so it is visible inside the cell's own methods too
    prelude = (
        f"FILE_CONTENT_PATH = {_single_quoted(file_path)}.freeze\n"
        "FILE_CONTENT = File.read(FILE_CONTENT_PATH, encoding: 'UTF-8')\n"
        "def file_path; FILE_CONTENT_PATH; end\n"
    )
    prelude_path = _path(scratch, "prelude.rb")
    return Program(
        code, src, ["ruby", "-r", prelude_path, src], extra_files={prelude_path: prelude}
    )


def _perl(code: str, file_path: str | None, scratch: str) -> Program:
    src = _path(scratch, "cell.pl")
    if file_path is not None:
        # raw bytes, like Perl's own string literals without `use utf8`, so printing is clean
        code = (
            f"our $FILE_CONTENT_PATH = {_single_quoted(file_path)}; "
            "our $file_path = $FILE_CONTENT_PATH; our $FILE_CONTENT = do { local $/; "
            "open(my $ck_fh, '<:raw', $FILE_CONTENT_PATH) "
            'or die "cannot read $FILE_CONTENT_PATH: $!"; <$ck_fh> };\n'
            "#line 1\n" + code
        )
    return Program(code, src, ["perl", src])


# the prelude must come after `<?php` and after any declare()/namespace statement
_PHP_HEAD = re.compile(
    r"\A\s*<\?php\b\s*(?:declare\s*\([^)]*\)\s*;\s*)?(?:namespace\s+[\w\\]+\s*;)?"
)


def _php(code: str, file_path: str | None, scratch: str) -> Program:
    src = _path(scratch, "cell.php")
    head = _PHP_HEAD.match(code)
    if head is None:
        head_text, gap, body = "<?php", "", code
    else:  # keep the whitespace after the head so user line numbers stay put
        head_text = code[: head.end()].rstrip()
        gap, body = code[len(head_text) : head.end()], code[head.end() :]
    prelude = ""
    if file_path is not None:
        prelude = (
            f"$FILE_CONTENT_PATH = {_single_quoted(file_path)}; $file_path = $FILE_CONTENT_PATH; "
            "$FILE_CONTENT = file_get_contents($FILE_CONTENT_PATH); "
        )
    # errors to stderr once, whatever php.ini says (Debian logs to stderr, others print to stdout)
    run = ["php", "-d", "display_errors=stderr", "-d", "log_errors=0", src]
    return Program(f"{head_text} {prelude}{gap}{body}", src, run)


def _elixir(code: str, file_path: str | None, scratch: str) -> Program:
    src = _path(scratch, "cell.exs")
    if file_path is not None:
        # the tuple marks the bindings as used so Elixir does not warn about them
        code = (
            f"file_content_path = {_elixir_literal(file_path)}; file_path = file_content_path; "
            "file_content = File.read!(file_content_path); "
            "_ = {file_content_path, file_path, file_content}; " + code
        )
    return Program(code, src, ["elixir", src])


# --- Go: wrap statements in main, import the std packages the code names


# identifier -> (import path, an exported name used in `var _ = ...` so the import is never unused)
GO_AUTO_IMPORTS: dict[str, tuple[str, str]] = {
    "fmt": ("fmt", "Sprint"),
    "os": ("os", "Exit"),
    "strings": ("strings", "Contains"),
    "strconv": ("strconv", "Itoa"),
    "math": ("math", "Abs"),
    "sort": ("sort", "Ints"),
    "time": ("time", "Now"),
    "bufio": ("bufio", "NewReader"),
    "bytes": ("bytes", "NewBuffer"),
    "io": ("io", "EOF"),
    "errors": ("errors", "New"),
    "regexp": ("regexp", "MustCompile"),
    "json": ("encoding/json", "Marshal"),
    "filepath": ("path/filepath", "Join"),
    "rand": ("math/rand", "Intn"),
    "sync": ("sync", "NewCond"),
    "unicode": ("unicode", "IsUpper"),
    "utf8": ("unicode/utf8", "RuneLen"),
    "http": ("net/http", "Get"),
    "url": ("net/url", "Parse"),
    "exec": ("os/exec", "Command"),
    "big": ("math/big", "NewInt"),
    "csv": ("encoding/csv", "NewReader"),
    "hex": ("encoding/hex", "EncodeToString"),
    "base64": ("encoding/base64", "StdEncoding"),
    "sha256": ("crypto/sha256", "Sum256"),
    "md5": ("crypto/md5", "Sum"),
    "atomic": ("sync/atomic", "AddInt64"),
    "context": ("context", "Background"),
    "reflect": ("reflect", "TypeOf"),
    "runtime": ("runtime", "GOOS"),
    "log": ("log", "Println"),
    "ioutil": ("io/ioutil", "ReadAll"),
    "heap": ("container/heap", "Init"),
    "list": ("container/list", "New"),
}
_GO_PACKAGE = re.compile(r"^[ \t]*package[ \t]+\w+", re.M)
_GO_MAIN = re.compile(r"^func[ \t]+main[ \t]*\(", re.M)
_GO_IMPORT = re.compile(r"^[ \t]*import[ \t]*(?:\([^)]*\)|[^\n]*)", re.M)


def _go_file_vars(file_path: str, os_name: str) -> str:
    # package level: no "declared and not used" errors, visible in every function
    return (
        f"\nvar FILE_CONTENT_PATH = {_go_literal(file_path)}\nvar file_path = FILE_CONTENT_PATH\n"
        "var FILE_CONTENT = func() string { b, err := "
        f"{os_name}.ReadFile(FILE_CONTENT_PATH); if err != nil {{ panic(err) }}; return string(b) }}()\n"
    )


def _go(code: str, file_path: str | None, scratch: str) -> Program:
    src, binary = _path(scratch, "cell.go"), _path(scratch, "cell")
    build = ["go", "build", "-o", "cell", "cell.go"]
    package = _GO_PACKAGE.search(code)
    if package is not None:  # a complete file: only add our hidden import and the file variables
        if file_path is not None:
            end = package.end()
            code = (
                code[:end] + '; import ck_os "os"' + code[end:] + _go_file_vars(file_path, "ck_os")
            )
        return Program(code, src, [binary], build)

    wrap = _GO_MAIN.search(code) is None
    user_imports: list[str] = []
    if wrap:  # imports cannot live inside main: hoist them, keeping the line count

        def hoist(match: re.Match[str]) -> str:
            user_imports.append(match.group(0).strip())
            return "\n" * match.group(0).count("\n")

        code = _GO_IMPORT.sub(hoist, code)
    imported = set(re.findall(r'"([^"]+)"', "\n".join(user_imports + _GO_IMPORT.findall(code))))
    needed = {
        ident: spec
        for ident, spec in GO_AUTO_IMPORTS.items()
        if spec[0] not in imported and re.search(rf"(?<![\w.]){ident}\.[A-Z]", code)
    }
    header = "package main\n" + "".join(f'import "{path}"\n' for path, _ in needed.values())
    header += "".join(line + "\n" for line in user_imports)
    tail = "".join(f"var _ = {ident}.{name}\n" for ident, (_, name) in needed.items())
    if file_path is not None:
        tail += _go_file_vars(file_path, "ck_os")
        header += 'import ck_os "os"\n'
    body = (
        f"func main() {{\n//line cell.go:1\n{code}\n}}\n" if wrap else f"//line cell.go:1\n{code}\n"
    )
    return Program(header + body + tail, src, [binary], build)


# --- Rust: wrap in fn main (items may nest inside a function body)

_RUST_MAIN = re.compile(r"\bfn\s+main\s*\(\s*\)[^{;]*\{")


def _rust(code: str, file_path: str | None, scratch: str) -> Program:
    src, binary = _path(scratch, "cell.rs"), _path(scratch, "cell")
    prelude = ""
    if file_path is not None:
        prelude = (
            f"let file_content_path: &str = {_rust_literal(file_path)}; "
            "let file_path: &str = file_content_path; "
            "let file_content: String = std::fs::read_to_string(file_content_path)"
            '.expect("cannot read FILE_CONTENT file"); '
            "let _ = (&file_content_path, &file_path, &file_content); "
        )
    main = _RUST_MAIN.search(code)
    if main is None:
        code = f"fn main() {{ {prelude}{code}\n}}\n"
    else:
        code = code[: main.end()] + " " + prelude + code[main.end() :]
    # no -O: compile time dominates a one-shot cell; warnings are noise for a script
    build = [
        "rustc",
        "--edition",
        "2021",
        "-A",
        "warnings",
        "-C",
        "debuginfo=0",
        "-o",
        "cell",
        "cell.rs",
    ]
    return Program(code, src, [binary], build)


# --- C# (Mono): wrap statements in a class with Main

_CS_MAIN = re.compile(
    r"\bstatic\s+(?:async\s+)?(?:void|int|Task(?:<int>)?)\s+Main\s*\([^)]*\)\s*\{"
)
_CS_USING = re.compile(
    r"^[ \t]*using[ \t]+(?:static[ \t]+)?[\w.]+(?:[ \t]*=[ \t]*[\w.<>, ]+)?[ \t]*;[ \t]*$", re.M
)
_CS_DEFAULT_USINGS = (
    "using System;",
    "using System.IO;",
    "using System.Linq;",
    "using System.Collections.Generic;",
)


def _csharp(code: str, file_path: str | None, scratch: str) -> Program:
    src, exe = _path(scratch, "cell.cs"), _path(scratch, "cell.exe")
    prelude = ""
    if file_path is not None:
        prelude = (
            f"string FILE_CONTENT_PATH = {_csharp_literal(file_path)}; "
            "string file_path = FILE_CONTENT_PATH; "
            "string FILE_CONTENT = System.IO.File.ReadAllText(FILE_CONTENT_PATH); "
        )
    main = _CS_MAIN.search(code)
    if main is not None:
        code = code[: main.end()] + " " + prelude + code[main.end() :]
    else:
        usings: list[str] = list(_CS_DEFAULT_USINGS)

        def hoist(match: re.Match[str]) -> str:
            line = " ".join(match.group(0).split())
            if line not in usings:
                usings.append(line)
            return ""

        code = _CS_USING.sub(hoist, code)
        code = (
            " ".join(usings)
            + "\npublic static class Program { public static void Main() { "
            + prelude
            + "\n#line 1\n"
            + code
            + "\n} }\n"
        )
    build = ["mcs", "-warn:0", "-r:System.Numerics.dll", "-out:cell.exe", "cell.cs"]
    return Program(code, src, ["mono", exe], build)


LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language("ruby", "Ruby", ".rb", "text/x-ruby", (("ruby", "ruby"),), _ruby),
        Language("perl", "Perl", ".pl", "text/x-perl", (("perl", "perl"),), _perl),
        Language("php", "PHP", ".php", "application/x-httpd-php", (("php", "php-cli"),), _php),
        Language("elixir", "Elixir", ".exs", "text/x-elixir", (("elixir", "elixir"),), _elixir),
        Language("go", "Go", ".go", "text/x-go", (("go", "golang-go"),), _go),
        Language("rust", "Rust", ".rs", "text/rust", (("rustc", "rustc"),), _rust),
        Language(
            "csharp",
            "C#",
            ".cs",
            "text/x-csharp",
            (("mcs", "mono-mcs"), ("mono", "mono-runtime")),
            _csharp,
        ),
    )
}

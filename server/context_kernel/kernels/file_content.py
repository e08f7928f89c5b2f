"""FILE_CONTENT for every language: the code that defines FILE_CONTENT, FILE_CONTENT_PATH and
file_path before a ctx_execute_file cell runs — the one home of these definitions.

Who runs which:
- python, r: the server sends the preamble as a silent cell before the agent's code (kernels we
  did not write cannot read our cell metadata); their Language entry says so (kernels/languages.py).
- shell: our bash kernel runs `shell_preamble(path, in_kernel=True)` in front of the cell.
- javascript, typescript: our node driver defines the same globals (`defineFileGlobals` in
  kernel_processes/node_driver.js); `node_preamble()` is that code for an exported cell.
- the script languages build it into the program they compile for the cell
  (kernel_processes/script_languages.py, one builder per language, which export reuses).
Exported notebooks put these in the cell's own source (notebooks/preambles.py), so they replay
without the server. Standard library only: kernel processes import it.

R: the prelude is ONE line ending in a newline, so R tracebacks of the agent's code ("# at line N
of file <text>") are off by exactly `R_PRELUDE_LINES`. It defines, in the global environment:
  FILE_CONTENT_PATH, file_path  the path, exactly as given
  FILE_CONTENT                  the file's text, decoded as UTF-8 (invalid bytes become U+FFFD),
                                newlines (including CRLF) kept, as one string
IRkernel stops a cell at the end of the *source line* that raised an error, so a failing read
(missing file, NUL byte) stops before any of the agent's code runs; the path assignments come
first because statements after a failing one on the same line still run.
"""

from __future__ import annotations

import json
import os
import shlex

R_PRELUDE_LINES = 1

_PLAIN = frozenset(range(0x20, 0x7F)) - {ord("\\"), ord('"')}


def r_string_literal(text: str) -> str:
    """Quote `text` as an R string literal holding exactly its file-system bytes.

    Everything but printable ASCII is written as \\xHH byte escapes of os.fsencode(text): R keeps
    such strings as native bytes, so the file opens whatever the kernel's locale is (a \\u escape
    would make a UTF-8-marked string that a C-locale R cannot translate back to a path), and
    undecodable file names (surrogate-escaped by Python) round-trip. Two hex digits per escape, so a
    following hex-looking character is never swallowed.
    """
    raw = os.fsencode(text)
    if b"\x00" in raw:
        raise ValueError("an R string cannot hold a NUL byte")
    return '"' + "".join(chr(b) if b in _PLAIN else f"\\x{b:02x}" for b in raw) + '"'


def r_file_prelude(path: str) -> str:
    """Return the R line that defines FILE_CONTENT_PATH, file_path and FILE_CONTENT for `path`.

    The server sends it before the agent's R code for ctx_execute_file.
    """
    literal = r_string_literal(path)
    # file() gives special meaning to some descriptions ("stdin", "clipboard", URLs, a leading
    # "~" is home-expanded), so a relative path is opened as "./<path>".
    opened = literal if path.startswith("/") else r_string_literal("./" + path)
    # Read in chunks until EOF rather than trusting file.size(): /proc files and pipes report 0.
    # base:: everywhere, so the agent's own `c`, `file`, ... in the global env cannot interfere.
    # file()'s "cannot open" warning becomes the error, instead of a warning plus a vaguer error.
    # U+FFFD is given as its UTF-8 bytes: a "\u" literal would be re-encoded for a C locale.
    read = (
        "(function(path) {con <- base::tryCatch(base::file(path, \"rb\"), warning = function(w) "
        "base::stop(base::conditionMessage(w), call. = FALSE)); base::on.exit(base::close(con)); "
        "parts <- base::list(base::raw(0)); repeat {b <- base::readBin(con, \"raw\", 1048576L); "
        "if (!base::length(b)) break; parts[[base::length(parts) + 1L]] <- b}; "
        "base::iconv(base::rawToChar(base::do.call(base::c, parts)), \"UTF-8\", \"UTF-8\", "
        "sub = \"\\xef\\xbf\\xbd\")}"
        f")({opened})"
    )
    return f"FILE_CONTENT_PATH <- {literal}; file_path <- FILE_CONTENT_PATH; FILE_CONTENT <- {read}\n"


def python_preamble(path: str) -> str:
    p = repr(path)
    return (
        f"FILE_CONTENT_PATH = file_path = {p}\n"
        f"with open({p}, encoding='utf-8', errors='replace') as _ck_fh:\n"
        "    FILE_CONTENT = _ck_fh.read()\n"
        "del _ck_fh\n"
    )


def shell_preamble(path: str, *, in_kernel: bool = False) -> str:
    """Bash that reads the file into FILE_CONTENT.

    `read -d ''` stops at the end of the file with status 1. In our kernel the line runs in front
    of the cell (errors of a missing file are the kernel's to report); in an exported cell `|| :`
    keeps that status from tripping a `set -e` the cell itself turns on later.
    """
    p = shlex.quote(path)
    if in_kernel:
        return (f"FILE_CONTENT_PATH={p} file_path={p} FILE_CONTENT=; "
                f"IFS= \\builtin read -r -d '' FILE_CONTENT 2>/dev/null <{p}; ")
    return f"FILE_CONTENT_PATH={p} file_path={p} FILE_CONTENT=; IFS= read -r -d '' FILE_CONTENT <{p} || :\n"


def node_preamble(path: str) -> str:
    """What `defineFileGlobals` in node_driver.js does, as code: globals, visible in later cells too.

    A JSON string is a valid JavaScript (and TypeScript) string literal.
    """
    return (
        f"globalThis.FILE_CONTENT_PATH = globalThis.file_path = {json.dumps(path, ensure_ascii=False)};\n"
        "globalThis.FILE_CONTENT = require('fs').readFileSync(globalThis.FILE_CONTENT_PATH, 'utf8');\n"
    )


# From the file's text instead of its path: for a kernel that cannot see the server's disk (on a kernel
# gateway), which gets the text inside the silent cell (execution/remote_files.py reads it).

def python_text_preamble(path: str, text: str) -> str:
    return f"FILE_CONTENT_PATH = file_path = {path!r}\nFILE_CONTENT = {text!r}\n"


def r_text_prelude(path: str, text: str) -> str:
    return (f"FILE_CONTENT_PATH <- {r_string_literal(path)}; file_path <- FILE_CONTENT_PATH; "
            f"FILE_CONTENT <- {r_string_literal(text)}; Encoding(FILE_CONTENT) <- \"UTF-8\"\n")


def shell_text_preamble(path: str, text: str) -> str:
    p = shlex.quote(path)
    return f"FILE_CONTENT_PATH={p} file_path={p} FILE_CONTENT={shlex.quote(text)}\n"


def node_text_preamble(path: str, text: str) -> str:
    return (f"globalThis.FILE_CONTENT_PATH = globalThis.file_path = {json.dumps(path)};\n"
            f"globalThis.FILE_CONTENT = {json.dumps(text)};\n")

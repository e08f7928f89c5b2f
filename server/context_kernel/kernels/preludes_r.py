"""R code that `ctx_execute_file` prepends to the agent's code: FILE_CONTENT and friends.

The prelude is ONE line ending in a newline, so R tracebacks of the agent's code ("# at line N
of file <text>") are off by exactly `R_PRELUDE_LINES`. It defines, in the global environment:
  FILE_CONTENT_PATH, file_path  the path, exactly as given
  FILE_CONTENT                  the file's text, decoded as UTF-8 (invalid bytes become U+FFFD),
                                newlines (including CRLF) kept, as one string
IRkernel stops a cell at the end of the *source line* that raised an error, so a failing read
(missing file, NUL byte) stops before any of the agent's code runs; the path assignments come
first because statements after a failing one on the same line still run.
"""

from __future__ import annotations

import os

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

    The execution layer prepends it to the agent's R code for ctx_execute_file.
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

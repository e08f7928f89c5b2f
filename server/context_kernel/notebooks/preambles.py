"""The source an exported `ctx_execute_file` cell carries, so it replays without the server.

At run time the server gives a file cell FILE_CONTENT, FILE_CONTENT_PATH and file_path in two
ways: kernels we did not write (ipykernel, IRkernel) get a silent preamble cell in their own
language (kernels/file_content.py); our own kernels (shell, JavaScript/TypeScript, the script
languages) define them from the cell metadata `context_kernel.file_path`. nbclient sends no cell
metadata with an execute request, so an exported cell has to define them in its own source:

- python, r: the same preamble the server runs, before the cell's code;
- shell, javascript, typescript: the lines our kernels would have run, before the cell's code;
- the script languages (each cell is a fresh program): the program our script kernel would have
  built for the cell with the file attached, which that kernel runs unchanged when no file is
  attached (Perl, Go and C# keep the cell's line numbers with a line directive).

The first line is a comment naming the file and its hash, except for PHP, where nothing may
come before `<?php` (the preamble stays on the `<?php` line instead).
"""

from __future__ import annotations

from collections.abc import Callable

from ..kernel_processes.script_languages import LANGUAGES as SCRIPT_LANGUAGES
from ..kernels.file_content import node_preamble, shell_preamble
from ..kernels.file_content import preamble as server_preamble


def with_file_preamble(language: str, code: str, path: str, digest: str | None) -> str | None:
    """The cell's source with FILE_CONTENT defined first, or None for a language we cannot do."""
    note = f"context-kernel: FILE_CONTENT from {path} ({digest or 'no hash'})"
    if language in ("python", "r"):
        head = server_preamble(language, path)
        return f"# {note}\n{head.rstrip()}\n{code}" if head else None
    own = _OWN_KERNELS.get(language)
    if own is not None:
        comment, make = own
        return f"{comment} {note}\n{make(path)}{code}"
    script = SCRIPT_LANGUAGES.get(language)
    if script is None:
        return None
    program = script.build(code, path, "")
    # Ruby loads its preamble from a second file (`ruby -r`); a notebook cell is one source.
    source = "".join(program.extra_files.values()) + program.source
    marker = _SCRIPT_COMMENTS.get(language)
    return f"{marker} {note}\n{source}" if marker else source


_OWN_KERNELS: dict[str, tuple[str, Callable[[str], str]]] = {
    "shell": ("#", shell_preamble),
    "javascript": ("//", node_preamble),
    "typescript": ("//", node_preamble),
}
_SCRIPT_COMMENTS = {"ruby": "#", "perl": "#", "elixir": "#", "go": "//", "rust": "//", "csharp": "//"}

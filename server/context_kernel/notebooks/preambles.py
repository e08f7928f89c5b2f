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

from ..kernel_processes.script_languages import LANGUAGES as SCRIPT_LANGUAGES
from ..kernels.languages import Language


def with_file_preamble(language: Language, code: str, path: str, digest: str | None) -> str | None:
    """The cell's source with FILE_CONTENT defined first, or None for a language we cannot do."""
    note = f"context-kernel: FILE_CONTENT from {path} ({digest or 'no hash'})"
    if language.file_code is not None:
        return f"{language.comment or '#'} {note}\n{language.file_code(path).rstrip()}\n{code}"
    script = SCRIPT_LANGUAGES.get(language.name)
    if script is None:
        return None
    program = script.build(code, path, "")
    # Ruby loads its preamble from a second file (`ruby -r`); a notebook cell is one source.
    source = "".join(program.extra_files.values()) + program.source
    return f"{language.comment} {note}\n{source}" if language.comment else source

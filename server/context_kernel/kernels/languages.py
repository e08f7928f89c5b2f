"""Which kernel runs which language, and what to install when it is missing.

The reference's twelve languages all map to a kernelspec name; any other installed kernelspec
can be used by name through `kernel=`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InvalidRequest
from .file_content import (
    node_preamble,
    node_text_preamble,
    python_preamble,
    python_text_preamble,
    r_file_prelude,
    r_text_prelude,
    shell_preamble,
    shell_text_preamble,
)
from .project_dir_code import node_chdir, python_chdir, r_chdir, shell_chdir


@dataclass(frozen=True)
class Language:
    """Everything the server knows about a language, in one entry: adding a language is adding one."""

    name: str
    kernel_name: str
    install: str
    """What to run when the kernel or its runtime is missing."""
    stateful: bool = True
    """False for our script kernel: every cell is a fresh process."""
    aliases: tuple[str, ...] = ()
    """Other names the agent may call it by (lower case)."""
    hello: str = ""
    """A line that prints `ok`: ctx_doctor starts the kernel and runs it ("" : not tried)."""
    comment: str | None = "#"
    """How a line comment starts, for the note an exported file cell opens with; None where nothing may
    come before the program (PHP's `<?php`)."""
    file_code: Callable[[str], str] | None = None
    """The code that defines FILE_CONTENT, FILE_CONTENT_PATH and file_path from a path, in this language:
    the silent cell the server sends first when `file_code_sent_first` (a kernel we did not write cannot
    read our cell metadata), and what an exported file cell opens with. None for the script languages,
    whose kernel builds it into the program (kernel_processes/script_languages.py; export asks it too)."""
    file_code_sent_first: bool = False
    file_text_code: Callable[[str, str], str] | None = None
    """The same from the file's path and text, for a kernel on a gateway that cannot see the server's files;
    None: ctx_execute_file cannot give such a kernel a file."""
    chdir: Callable[[str], str] | None = None
    """Code that moves the kernel into a folder (kernels/project_dir_code.py), the first cell of an exported
    notebook; None: the export has no such cell (a stateless language runs each cell as its own program)."""


_INSTALL = "context-kernel kernels install"
_SCRIPT_HINT = f"{_INSTALL} (as root: apt-get install {{package}}), or apt-get install {{package}} yourself"

_NODE = f"{_INSTALL} (as root for node and npm; then it adds the npm package typescript to this environment)"

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in [
        Language("python", "python3", "pip install ipykernel && python -m ipykernel install --sys-prefix",
                 hello="print('ok')", file_code=python_preamble, file_code_sent_first=True,
                 file_text_code=python_text_preamble, aliases=("py", "python3", "ipython"), chdir=python_chdir),
        Language("shell", "ck-bash", f"{_INSTALL} (registers the ck-bash kernelspec)", hello="echo ok",
                 file_code=shell_preamble, file_text_code=shell_text_preamble, aliases=("bash", "sh", "zsh"),
                 chdir=shell_chdir),
        Language("r", "ir", f"{_INSTALL} (as root: it installs r-cran-irkernel and registers the r kernel)",
                 hello="cat('ok\\n')", file_code=r_file_prelude, file_code_sent_first=True,
                 file_text_code=r_text_prelude, chdir=r_chdir),
        Language("javascript", "ck-javascript", _NODE, hello="console.log('ok')", comment="//",
                 file_code=node_preamble, file_text_code=node_text_preamble, aliases=("js", "node", "nodejs"),
                 chdir=node_chdir),
        Language("typescript", "ck-typescript", _NODE, hello="const s: string = 'ok'; console.log(s)",
                 comment="//", file_code=node_preamble, file_text_code=node_text_preamble, aliases=("ts",),
                 chdir=node_chdir),
        Language("ruby", "ck-ruby", _SCRIPT_HINT.format(package="ruby"), stateful=False, hello="puts 'ok'",
                 aliases=("rb",)),
        Language("go", "ck-go", _SCRIPT_HINT.format(package="golang-go"), stateful=False,
                 hello='fmt.Println("ok")', comment="//", aliases=("golang",)),
        Language("rust", "ck-rust", _SCRIPT_HINT.format(package="rustc"), stateful=False,
                 hello='println!("ok");', comment="//", aliases=("rs",)),
        Language("php", "ck-php", _SCRIPT_HINT.format(package="php-cli"), stateful=False,
                 hello='echo "ok\\n";', comment=None),
        Language("perl", "ck-perl", _SCRIPT_HINT.format(package="perl"), stateful=False,
                 hello='print "ok\\n";', aliases=("pl",)),
        Language("elixir", "ck-elixir", _SCRIPT_HINT.format(package="elixir"), stateful=False,
                 hello='IO.puts "ok"', aliases=("ex", "exs")),
        Language("csharp", "ck-csharp", _SCRIPT_HINT.format(package="mono-mcs"), stateful=False,
                 hello='Console.WriteLine("ok");', comment="//", aliases=("c#", "cs", "dotnet")),
    ]
}

SHELL_KERNEL = LANGUAGES["shell"].kernel_name

# A runtime that is installed but not ready to run says so in its own words; installing it again
# (the `install` advice) would change nothing. (What its message contains, what to do instead.)
NOT_READY: tuple[tuple[str, str], ...] = (
    # rustup's rustc proxy on PATH, with no default toolchain (rustup-init --default-toolchain none, or
    # a RUSTUP_HOME of another user): apt-get would say rustc is there already.
    ("rustup could not choose a version", "rustc is rustup's proxy and no toolchain is chosen: run `rustup "
     "default stable` as the user the server runs as"),
)


def fix_for(lang: Language, failure: str) -> str:
    """What to do about `failure` of `lang`'s kernel: a not-ready runtime's own fix, else how to install it."""
    return next((fix for sign, fix in NOT_READY if sign in failure), lang.install)

def resolve_language(name: str) -> Language:
    """Map a language name or alias to its Language, or explain what names exist."""
    key = name.strip().lower()
    lang = LANGUAGES.get(key) or next((lang for lang in LANGUAGES.values() if key in lang.aliases), None)
    if lang is None:
        raise InvalidRequest(
            f"unknown language {name!r}",
            hint="use one of: " + ", ".join(LANGUAGES) + "; or pass kernel=<kernelspec name> to use any installed "
            "Jupyter kernel (context-kernel doctor lists them)",
        )
    return lang


# The python kernel of a project's own environment (kernels/python_env.py names it).
PROJECT_PYTHON_PREFIX = "ck-python-"


def language_for_kernel(kernel_name: str) -> Language | None:
    if kernel_name.startswith(PROJECT_PYTHON_PREFIX):
        return LANGUAGES["python"]
    for lang in LANGUAGES.values():
        if lang.kernel_name == kernel_name:
            return lang
    return None

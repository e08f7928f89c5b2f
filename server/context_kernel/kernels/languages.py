"""Which kernel runs which language, and what to install when it is missing.

The reference's twelve languages all map to a kernelspec name; any other installed kernelspec
can be used by name through `kernel=`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidRequest


@dataclass(frozen=True)
class Language:
    name: str
    kernel_name: str
    install: str
    """What to run when the kernel or its runtime is missing."""
    stateful: bool = True
    """False for our script kernel: every cell is a fresh process."""


_INSTALL = "context-kernel kernels install"
_SCRIPT_HINT = f"{_INSTALL} (as root: apt-get install {{package}}), or apt-get install {{package}} yourself"

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in [
        Language("python", "python3", "pip install ipykernel && python -m ipykernel install --sys-prefix"),
        Language("shell", "ck-bash", f"{_INSTALL} (registers the ck-bash kernelspec)"),
        Language("r", "ir", f"{_INSTALL} (as root: it installs r-cran-irkernel and registers the r kernel)"),
        Language("javascript", "ck-javascript", f"{_INSTALL} (as root for node and npm; then it adds the npm "
                 "package typescript to this environment)"),
        Language("typescript", "ck-typescript", f"{_INSTALL} (as root for node and npm; then it adds the npm "
                 "package typescript to this environment)"),
        Language("ruby", "ck-ruby", _SCRIPT_HINT.format(package="ruby"), stateful=False),
        Language("go", "ck-go", _SCRIPT_HINT.format(package="golang-go"), stateful=False),
        Language("rust", "ck-rust", _SCRIPT_HINT.format(package="rustc"), stateful=False),
        Language("php", "ck-php", _SCRIPT_HINT.format(package="php-cli"), stateful=False),
        Language("perl", "ck-perl", _SCRIPT_HINT.format(package="perl"), stateful=False),
        Language("elixir", "ck-elixir", _SCRIPT_HINT.format(package="elixir"), stateful=False),
        Language("csharp", "ck-csharp", _SCRIPT_HINT.format(package="mono-mcs"), stateful=False),
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

ALIASES: dict[str, str] = {
    "py": "python", "python3": "python", "ipython": "python",
    "bash": "shell", "sh": "shell", "zsh": "shell",
    "js": "javascript", "node": "javascript", "nodejs": "javascript",
    "ts": "typescript",
    "rb": "ruby", "golang": "go", "rs": "rust", "pl": "perl", "ex": "elixir", "exs": "elixir",
    "c#": "csharp", "cs": "csharp", "dotnet": "csharp",
}


def resolve_language(name: str) -> Language:
    """Map a language name or alias to its Language, or explain what names exist."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    lang = LANGUAGES.get(key)
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

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


_SCRIPT_HINT = "bash kernels/install.sh (installs the runtime and the ck-{lang} kernelspec)"

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in [
        Language("python", "python3", "pip install ipykernel && python -m ipykernel install --sys-prefix"),
        Language("shell", "ck-bash", "pip install -e . (installs the ck-bash kernelspec shipped in kernels/)"),
        Language("r", "ir", "apt-get install r-cran-irkernel, then bash kernels/install.sh to register it"),
        Language("javascript", "ck-javascript", "bash kernels/install.sh (installs the JavaScript kernel)"),
        Language("typescript", "ck-typescript", "bash kernels/install.sh (installs the TypeScript kernel)"),
        Language("ruby", "ck-ruby", "apt-get install ruby; " + _SCRIPT_HINT.format(lang="ruby"), stateful=False),
        Language("go", "ck-go", "apt-get install golang-go; " + _SCRIPT_HINT.format(lang="go"), stateful=False),
        Language("rust", "ck-rust", "apt-get install rustc; " + _SCRIPT_HINT.format(lang="rust"), stateful=False),
        Language("php", "ck-php", "apt-get install php-cli; " + _SCRIPT_HINT.format(lang="php"), stateful=False),
        Language("perl", "ck-perl", "apt-get install perl; " + _SCRIPT_HINT.format(lang="perl"), stateful=False),
        Language("elixir", "ck-elixir", "apt-get install elixir; " + _SCRIPT_HINT.format(lang="elixir"),
                 stateful=False),
        Language("csharp", "ck-csharp", "apt-get install mono-mcs; " + _SCRIPT_HINT.format(lang="csharp"),
                 stateful=False),
    ]
}

SHELL_KERNEL = LANGUAGES["shell"].kernel_name

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

"""The one error setup raises on purpose: a config file it will not touch."""

from __future__ import annotations

from pathlib import Path

from ..errors import ContextKernelError


class ConfigFileError(ContextKernelError):
    """An existing client config file cannot be parsed, or has an unexpected shape.

    Setup never rewrites a file it cannot read: the user's content would be lost.
    """

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}",
                         hint="Nothing was changed. Fix that file (or move it aside), then run the command again.")
        self.path = path
        self.problem = problem

"""How the command line shows its help and version: the argparse pieces `cli.main` builds its parser with.

Apart from cli/__init__.py because argparse is imported only when a parser is built, and the hooks (one
process per tool call of the agent) never build one.
"""

from __future__ import annotations

import argparse
from typing import Any


class DefaultsShown(argparse.HelpFormatter):
    """Says each option's default, where it has one its help does not already name."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, False, [], argparse.SUPPRESS) or "default" in text:
            return text
        return f"{text} (default: %(default)s)"


class VersionAction(argparse.Action):
    """`--version`, read from the installed metadata only when asked (every command builds this parser)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=kwargs.get("help"))

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from importlib import metadata

        try:
            version = metadata.version("context-kernel")
        except metadata.PackageNotFoundError:
            version = "unknown (not installed as a package)"
        print(f"context-kernel {version}")
        parser.exit()

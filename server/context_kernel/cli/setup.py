"""`context-kernel setup|uninstall CLIENT`: wiring this install into an agent client, and out of it (the
parsers and the work are setup/cli.py's; this finds what only the command line knows)."""

from __future__ import annotations

import argparse
import os
import sys


def _console_script() -> str:
    """The installed `context-kernel` script the clients should start: next to this Python, else on PATH."""
    import shutil
    from pathlib import Path

    beside = Path(sys.executable).with_name("context-kernel")  # not resolved: the venv's bin, not /usr/bin
    if beside.is_file():
        return str(beside.absolute())
    return shutil.which("context-kernel") or str(beside.absolute())


def cmd_setup(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..locations import data_home, user_dirs, user_home
    from ..settings import HTTP_TOKEN_FILE
    from ..setup.cli import run
    from ..setup.installation import in_uv_cache, this_installation

    env = dict(os.environ)
    lasting = this_installation().lasting_install() if in_uv_cache(sys.prefix) else None
    return run(args, home_dir=user_home(env), cwd=Path.cwd(), executable=_console_script(),
               token_file=data_home(env) / HTTP_TOKEN_FILE, dirs=user_dirs(env), ephemeral=lasting)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`setup` and `uninstall` on the main parser's subcommands."""
    from ..setup.cli import add_parsers as add_setup_parsers

    add_setup_parsers(sub, cmd_setup)

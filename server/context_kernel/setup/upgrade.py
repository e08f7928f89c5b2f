"""ctx_upgrade: the command that upgrades context-kernel the way it was installed (nothing is run)."""

from __future__ import annotations

from .. import __version__
from .installation import this_installation


def render_upgrade() -> str:
    installed = this_installation()
    return (f"context-kernel {__version__}, installed with {installed.how}.\nUpgrade with:\n  {installed.upgrade()}\n"
            "Then restart the MCP server (your client restarts it when you reload it). "
            "The latest version is not looked up: this tool makes no network calls.")

"""ctx_upgrade: the command that upgrades context-kernel the way it was installed (nothing is run)."""

from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from . import __version__

PACKAGE = "context-kernel"


def _direct_url() -> dict[str, object] | None:
    try:
        raw = metadata.distribution(PACKAGE).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        return json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return None


def in_uv_cache(prefix: str) -> bool:
    """Whether `prefix` is one of the throwaway environments `uvx` makes in uv's cache (archive-v0/…).

    uv may remove it at any `uv cache clean` or prune: nothing lasting may point into it.
    """
    return re.fullmatch(r"archive-v\d+", Path(prefix).parent.name) is not None


def upgrade_command(prefix: str | None = None, executable: str | None = None,
                    direct_url: dict[str, object] | None = None) -> tuple[str, str]:
    """(how it was installed, the command to upgrade it)."""
    prefix = prefix if prefix is not None else sys.prefix
    executable = executable or sys.executable
    info = direct_url if direct_url is not None else (_direct_url() or {})
    url = str(info.get("url", ""))
    path = Path(unquote(urlparse(url).path)) if url.startswith("file:") else None
    dir_info = info.get("dir_info")
    if isinstance(dir_info, dict) and dir_info.get("editable"):
        where = f"cd {path} && " if path else ""
        return "editable install from a source checkout", f"{where}git pull && make setup"
    if in_uv_cache(prefix):
        # uvx reuses what its cache holds; --refresh (or @latest) makes it look again.
        source = str(path) if path else url if "vcs_info" in info else None
        if source:
            return "uvx (uv's cache)", f"uvx --refresh --from {source} {PACKAGE} serve"
        return "uvx (uv's cache)", f"uvx {PACKAGE}@latest serve"
    parts = Path(prefix).parts
    if "tools" in parts and "uv" in parts:
        return "uv tool", f"uv tool upgrade {PACKAGE}"
    if "pipx" in parts and "venvs" in parts:
        return "pipx", f"pipx upgrade {PACKAGE}"
    if "vcs_info" in info:
        return "pip from a git URL", f"{executable} -m pip install --upgrade --force-reinstall {url}"
    if path is not None:
        return "pip from a local path", f"{executable} -m pip install --upgrade --force-reinstall {path}"
    return "pip", f"{executable} -m pip install --upgrade {PACKAGE}"


def render_upgrade() -> str:
    how, command = upgrade_command()
    return (f"context-kernel {__version__}, installed with {how}.\nUpgrade with:\n  {command}\n"
            "Then restart the MCP server (your client restarts it when you reload it). "
            "The latest version is not looked up: this tool makes no network calls.")

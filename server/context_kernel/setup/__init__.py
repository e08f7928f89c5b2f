"""Wire context-kernel into agent clients: MCP server entry, hook entries, routing instructions.

`context-kernel setup <client>` / `uninstall <client>` (see `cli.py`); `hooks_status` and
`mcp_entry_present` tell `doctor` what is wired where.
"""

from __future__ import annotations

from .clients import CLIENTS, Client, Scope, get_client
from .errors import ConfigFileError
from .status import hooks_status, mcp_entry_present, mcp_entry_where

__all__ = ["CLIENTS", "Client", "ConfigFileError", "Scope", "get_client", "hooks_status", "mcp_entry_present",
           "mcp_entry_where"]

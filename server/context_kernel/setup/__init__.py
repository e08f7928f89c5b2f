"""Wire context-kernel into agent clients: MCP server entry, hook entries, routing instructions.

`context-kernel setup <client>` / `uninstall <client>` (see `cli/setup.py`); `hooks_status` and
`mcp_entry_present` tell `doctor` what is wired where.
"""

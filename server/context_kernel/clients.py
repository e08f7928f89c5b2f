"""The agent clients context-kernel supports, by the name used on the command line.

The one registry of names: `setup` keys each client's documented file layout by it
(`setup/clients.py`), `hook` its payload adapter (`hooks/adapters/`), and the CLI offers exactly
these. Standard library only: the hook path parses its command line with it on every tool call.
"""

from __future__ import annotations

CLIENT_NAMES = ("claude-code", "gemini", "codex", "cursor", "copilot")

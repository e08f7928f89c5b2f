"""One module per hook client, each translating that client's JSON into `HookCall` and back.

An adapter is a module with:
  NAME             the client name used on the command line (`context-kernel hook <NAME> <event>`)
  EVENTS           the client's own event names (as written in its hook config) → normalised events
  NEUTRAL_OUTPUT   what to print when there is nothing to say ("" or, for Cursor, "{}")
                   (both kept in `hooks/client_events.py`, which the hook reads before any adapter)
  parse(event_name, payload) -> HookCall      tool names normalised to Claude Code's
  render(call, answer) -> str                 the exact stdout, in the client's documented shape
  can_add_context(call) -> bool               whether text can reach the agent at this event
Each module's docstring cites the client's documentation and says which events it lacks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ...clients import CLIENT_NAMES
from . import claude_code, codex, copilot, cursor, gemini

if TYPE_CHECKING:  # creating a Protocol class costs ~2 ms, and every hook imports this package
    from ..model import HookAnswer, HookCall, HookEvent

    class Adapter(Protocol):
        NAME: str
        EVENTS: dict[str, HookEvent]
        NEUTRAL_OUTPUT: str

        def parse(self, event_name: str, payload: dict[str, Any]) -> HookCall: ...

        def render(self, call: HookCall, answer: HookAnswer) -> str: ...

        def can_add_context(self, call: HookCall) -> bool: ...


CLIENTS: dict[str, Adapter] = {adapter.NAME: adapter for adapter in (claude_code, gemini, codex, cursor, copilot)}
assert tuple(CLIENTS) == CLIENT_NAMES, "every client in clients.py has exactly one adapter"

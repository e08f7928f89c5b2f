"""The plain values that cross between the MCP layer and the execution service (no heavy imports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class ExecuteRequest:
    code: str
    language: str | None = None
    kernel: str | None = None
    timeout_ms: int | None = None
    intent: str | None = None
    background: bool = False
    fresh: bool = False
    path: str | None = None
    tool: str = "ctx_execute"


@dataclass(frozen=True)
class SessionRef:
    id: str
    client: str | None = None
    transport: str = "stdio"


CellStatus = Literal["ok", "error", "timeout", "died", "running", "interrupted"]
"""How a cell ended. running: a background cell still going; interrupted: the server stopped first."""


@dataclass(frozen=True)
class ExecuteReply:
    text: str
    is_error: bool
    status: CellStatus
    execution_id: int | None = None
    bytes_produced: int = 0
    bytes_returned: int = 0
    whole: bool = False
    """the reply carried the whole output (nothing kept out)"""


@dataclass(frozen=True)
class Command:
    """One ctx_batch_execute command."""

    label: str
    command: str

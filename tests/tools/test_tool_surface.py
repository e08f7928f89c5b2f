"""The public surface is pinned: tool names, schemas and descriptions, and the size of tools/list.

After an intended change, regenerate the golden file:
    CONTEXT_KERNEL_UPDATE_GOLDEN=1 python -m pytest tests/tools/test_tool_surface.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp.client.client import Client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "tools.json"
# The reference's tools/list is 35.5 KB and users complain; ours stays under 10 KB.
MAX_TOOLS_LIST_BYTES = 10 * 1024


async def test_tools_list_matches_the_golden_snapshot_and_stays_small(client: Client) -> None:
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await client.list_tools()).tools]
    wire = json.dumps(tools, separators=(",", ":"))
    assert len(wire.encode()) <= MAX_TOOLS_LIST_BYTES
    rendered = json.dumps(tools, indent=2, sort_keys=True) + "\n"
    if os.environ.get("CONTEXT_KERNEL_UPDATE_GOLDEN"):
        GOLDEN.write_text(rendered)
    assert rendered == GOLDEN.read_text(), "tool surface changed: review it, then regenerate the golden file"

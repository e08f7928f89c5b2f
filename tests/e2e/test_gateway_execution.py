"""ctx_execute through a real Jupyter Enterprise Gateway: the local pool's guarantees, kernel by kernel, there."""

from __future__ import annotations

import pytest
from mcp.client.client import Client
from tests.conftest import text_of
from tests.gateway_harness import RunningGateway

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


async def run(client: Client, code: str, language: str = "python", **extra: object) -> tuple[bool, str]:
    result = await client.call_tool("ctx_execute", {"language": language, "code": code, **extra})
    return bool(result.is_error), text_of(result)


async def test_python_keeps_state_across_calls_in_a_kernel_the_gateway_runs(
        gateway_client: Client, gateway: RunningGateway) -> None:
    before = gateway.kernel_ids()
    # The kernel is the gateway's child (its LocalProcessProxy), not ours.
    assert await run(gateway_client, "import os\nx = 41\nprint(os.getppid())") == (False, str(gateway.process.pid))
    assert await run(gateway_client, "print(x + 1)") == (False, "42")
    started = gateway.kernel_ids() - before
    assert len(started) == 1  # one warm kernel for the session, on the gateway

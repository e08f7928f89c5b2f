"""The e2e tests' shared Enterprise Gateway (tests/gateway_harness.py): one per test run, started on first use."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.gateway_harness import RunningGateway, start_gateway
from tests.helpers import make_settings

from context_kernel.settings import GatewaySettings, Settings
from context_kernel.tools.server import create_server


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    running = start_gateway(tmp_path_factory.mktemp("gateway"))
    try:
        yield running
    finally:
        running.stop()


def gateway_settings(tmp_path: Path, project: Path, gateway: RunningGateway, **overrides: object) -> Settings:
    remote = GatewaySettings(url=gateway.url, auth_header=gateway.auth_header, request_timeout_s=30.0)
    return make_settings(tmp_path, project, gateway=remote, **overrides)


@pytest.fixture
async def gateway_client(tmp_path: Path, project: Path, gateway: RunningGateway) -> AsyncIterator[Client]:
    """The real MCP client on a server whose every kernel runs on the test gateway."""
    async with Client(create_server(gateway_settings(tmp_path, project, gateway))) as c:
        yield c

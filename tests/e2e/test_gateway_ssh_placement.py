"""Remote placement: Enterprise Gateway's distributed (SSH) process proxy starts the kernel as another user on
another 'host' (127.0.0.2, over SSH), so it is no child of the gateway's process, and ctx_execute runs there."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.e2e.conftest import gateway_settings
from tests.gateway_harness import RunningGateway, start_gateway
from tests.helpers import text_of
from tests.ssh_host import REMOTE_USER, SshHost, start_ssh_host, unavailable

from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


@pytest.fixture(scope="module")
def ssh_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningGateway, SshHost]]:
    why = unavailable()
    if why:
        pytest.skip(f"SSH placement {why}")
    root = tmp_path_factory.mktemp("ssh")
    # The kernel's user reads the authorized keys and the launcher: pytest's own temp dirs are root's alone.
    shared = Path(tempfile.mkdtemp(prefix="ck-ssh-host-"))
    host = start_ssh_host(shared)
    try:
        running = start_gateway(root / "gateway", extra_specs={"python-ssh": host.kernelspec()},
                                env=host.gateway_env())
        try:
            yield running, host
        finally:
            running.stop()
    finally:
        host.stop()
        shutil.rmtree(shared, ignore_errors=True)


async def test_a_kernel_placed_over_ssh_runs_as_another_user_outside_the_gateway_s_process_tree(
        tmp_path: Path, project: Path, ssh_gateway: tuple[RunningGateway, SshHost]) -> None:
    gateway, _ = ssh_gateway
    before = gateway.kernel_ids()
    async with Client(create_server(gateway_settings(tmp_path, project, gateway))) as client:
        who = await client.call_tool("ctx_execute", {
            "language": "python", "kernel": "python-ssh",
            "code": "import os, pwd\nx = 5\nprint(pwd.getpwuid(os.getuid()).pw_name, os.getppid())"})
        assert not who.is_error, text_of(who)
        user, parent = text_of(who).split()
        assert not who.is_error and user == REMOTE_USER
        assert int(parent) != gateway.process.pid  # started by sshd's session, detached: not the gateway's child
        again = await client.call_tool("ctx_execute", {"language": "python", "kernel": "python-ssh",
                                                        "code": "print(x * 2)"})
        assert (again.is_error, text_of(again)) == (False, "10")
        assert len(gateway.kernel_ids() - before) == 1
    assert gateway.kernel_ids() == before  # ended over SSH when the client went away
    assert "Kernel launched on '127.0.0.2'" in gateway.log()

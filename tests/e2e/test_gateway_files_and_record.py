"""On a gateway: ctx_execute_file sends the file's content, the record names the gateway and remote kernel,
doctor lists the gateway, and an exported session replays there and locally."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client
from sqlalchemy import text
from tests.e2e.conftest import gateway_settings
from tests.gateway_harness import RunningGateway
from tests.helpers import text_of

from context_kernel.store.db import open_engine
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


async def test_execute_file_sends_the_content_to_a_kernel_that_cannot_see_the_server_s_disk(
        gateway_client: Client, project: Path) -> None:
    (project / "data.csv").write_text("a,b\n1,2\n3,4\n")
    result = await gateway_client.call_tool("ctx_execute_file", {
        "path": "data.csv", "language": "python",
        "code": "import os\nprint(len(FILE_CONTENT.splitlines()), os.path.basename(file_path))"})
    assert (result.is_error, text_of(result)) == (False, "3 data.csv")
    shell = await gateway_client.call_tool("ctx_execute_file", {
        "path": "data.csv", "language": "shell", "code": 'printf "%s" "$FILE_CONTENT" | wc -l'})
    assert (shell.is_error, text_of(shell).strip()) == (False, "3")


async def test_the_tool_descriptions_say_what_a_remote_kernel_sees(gateway_client: Client) -> None:
    tools = {t.name: t.description or "" for t in (await gateway_client.list_tools()).tools}
    assert "remote kernel gateway" in tools["ctx_execute_file"] and "sends the file's content" in tools[
        "ctx_execute_file"]
    assert "not on their disk" in tools["ctx_execute"]


async def test_the_record_names_the_gateway_and_the_remote_kernel_of_each_cell(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    settings = gateway_settings(tmp_path, project, gateway)
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
        remote = gateway.kernel_ids()
    with open_engine(settings.db_path).connect() as conn:
        instances = [r[0] for r in conn.execute(text("SELECT kernel_instance FROM executions"))]
    assert len(instances) == 1
    kernel_id, _, url = instances[0].partition("@")
    assert url == gateway.url and kernel_id in remote


async def test_doctor_lists_the_gateway_its_version_and_kernelspecs_and_starts_each(
        gateway_client: Client, gateway: RunningGateway) -> None:
    text = text_of(await gateway_client.call_tool("ctx_doctor", {}))
    assert f"[OK] gateway: {gateway.url}: Enterprise Gateway 3.3.0" in text
    gateway_line = next(line for line in text.splitlines() if line.startswith("[OK] gateway:"))
    assert "ck-bash" in gateway_line and "python3" in gateway_line
    assert "[OK] python     kernel python3 (gateway): starts and runs code" in text
    assert "[OK] shell      kernel ck-bash (gateway): starts and runs code" in text
    assert "interpreter" not in text  # the local Python is not what runs the cells


def test_an_exported_gateway_session_replays_on_the_gateway_and_locally(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home"), "CONTEXT_KERNEL_GATEWAY_TOKEN": gateway.token}
    settings = gateway_settings(tmp_path, project, gateway)

    async def session() -> None:
        async with Client(create_server(settings)) as client:
            await client.call_tool("ctx_execute", {"language": "python", "code": "x = 6 * 7\nprint(x)"})
            await client.call_tool("ctx_execute", {"language": "python", "code": "print(x + 1)"})

    import anyio

    anyio.run(session)
    cli = [sys.executable, "-m", "context_kernel"]
    out = tmp_path / "exports"
    exported = subprocess.run([*cli, "export", "-o", str(out), "--project", str(project)], env=env,
                              capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    notebook = next(out.glob("*.ipynb"))
    assert json.loads(notebook.read_text())["metadata"]["kernelspec"]["name"] == "python3"
    before = gateway.kernel_ids()
    remote = subprocess.run([*cli, "replay", str(notebook), "--gateway-url", gateway.url], env=env,
                            capture_output=True, text=True, timeout=120)
    assert remote.returncode == 0, remote.stdout + remote.stderr
    assert "2 of 2 cells match" in remote.stdout and "on the kernel gateway at" in remote.stdout
    assert gateway.kernel_ids() == before  # its kernel was ended
    local = subprocess.run([*cli, "replay", str(notebook)], env=env, capture_output=True, text=True, timeout=120)
    assert local.returncode == 0 and "2 of 2 cells match" in local.stdout, local.stdout + local.stderr

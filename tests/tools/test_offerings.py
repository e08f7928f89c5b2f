"""Resources and prompts: advertised because there are some — the exports, the insight page, the routing guide."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import nbformat
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, TextResourceContents
from tests.helpers import make_settings, server_command, session_cells

from context_kernel.hooks.guide import routing_guide
from context_kernel.settings import Settings
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_the_routing_guide_is_the_one_prompt_and_a_fresh_home_lists_no_resources(client: Client) -> None:
    capabilities = client.server_capabilities
    assert capabilities.prompts is not None and capabilities.resources is not None
    prompts = (await client.list_prompts()).prompts
    assert [p.name for p in prompts] == ["routing-guide"]
    got = await client.get_prompt("routing-guide")
    (message,) = got.messages
    assert message.role == "user" and getattr(message.content, "text", None) == routing_guide()
    assert (await client.list_resources()).resources == []


async def test_an_unknown_prompt_is_invalid_params_naming_the_prompts_there_are_and_logs_no_traceback(
        client: Client, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO), pytest.raises(MCPError) as raised:
        await client.get_prompt("routing")
    assert raised.value.error.code == INVALID_PARAMS  # -32602, as the spec says for an unknown prompt name
    assert raised.value.error.message == "no prompt named 'routing'; prompts/list names them: routing-guide"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


async def test_over_stdio_an_unknown_prompt_is_invalid_params_and_the_server_logs_no_traceback(
        tmp_path: Path, project: Path) -> None:
    command = server_command("--project", str(project))
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home")})
    log = tmp_path / "server-stderr.log"
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            with pytest.raises(MCPError) as raised:
                await client.get_prompt("routing")
            assert (await client.get_prompt("routing-guide")).messages  # and the server goes on
    assert raised.value.error.code == INVALID_PARAMS
    assert "Traceback" not in log.read_text() and " ERROR " not in log.read_text()


@pytest.mark.kernels
async def test_exported_notebooks_and_the_insight_page_are_listed_and_read(settings: Settings) -> None:
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_execute", {"language": "python", "code": "print('hello')"})
        await client.call_tool("ctx_export", {})
        await client.call_tool("ctx_export", {"format": "html"})
        await client.call_tool("ctx_insight", {})
        listed = {r.name: r for r in (await client.list_resources()).resources}
        notebook = next(name for name in listed if name.endswith(".ipynb"))
        assert sorted(listed) == sorted(["insight", notebook, notebook.removesuffix(".ipynb") + ".html"])
        assert listed[notebook].mime_type == "application/x-ipynb+json"
        assert listed["insight"].mime_type == "text/html"
        (content,) = (await client.read_resource(str(listed[notebook].uri))).contents
        assert isinstance(content, TextResourceContents)
        nb = nbformat.reads(content.text, as_version=4)
        assert [c.source for c in session_cells(nb)] == ["print('hello')"]
        assert json.loads(content.text) == json.loads((settings.export_dir / notebook).read_text())
        (page,) = (await client.read_resource("context-kernel://insight")).contents
        assert isinstance(page, TextResourceContents) and "<html" in page.text and notebook in page.text


async def test_a_resource_that_is_not_listed_is_not_read(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project)
    (settings.home / "exports").mkdir(parents=True)
    (settings.home / "http-token").write_text("secret\n")
    async with Client(create_server(settings)) as client:
        for uri in ("context-kernel://exports/../http-token", "context-kernel://exports/missing.ipynb",
                    "context-kernel://insight"):
            with pytest.raises(MCPError, match="no resource"):
                await client.read_resource(uri)

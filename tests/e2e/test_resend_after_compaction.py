"""A section sent by ctx_search is only named when asked again, until the client compacts its
context (a hook reports it) or the resend period passes: then it is sent again."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of
from tests.hooks.hookrun import Hooks

from context_kernel.tools.server import create_server

pytestmark = pytest.mark.anyio

TEXT = "# Tides\nSpring tides happen at new and full moon, when the sun and moon align.\n"
ANSWER = "Spring tides happen at new and full moon"


async def ask(client: Client) -> str:
    return text_of(await client.call_tool("ctx_search", {"queries": ["spring tides moon"]}))


@pytest.mark.parametrize("event", ["PreCompact", "SessionStart"])
async def test_a_compaction_reported_by_a_hook_makes_earlier_sends_count_as_forgotten(
        tmp_path: Path, event: str) -> None:
    hooks = Hooks(tmp_path)
    settings = make_settings(tmp_path, hooks.project, home=hooks.home)
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_index", {"content": TEXT, "source": "tides"})
        assert ANSWER in await ask(client)
        again = await ask(client)
        assert ANSWER not in again and "already sent" in again
        payload = {"session_id": "client-session", "hook_event_name": event, "cwd": str(hooks.project),
                   "trigger": "auto", "source": "compact"}
        run = hooks.run("claude-code", event, payload)
        assert run.returncode == 0, run.stderr
        assert ANSWER in await ask(client)
        # Sent again after the compaction, it is remembered again.
        assert ANSWER not in await ask(client)


async def test_after_the_resend_period_a_section_is_sent_again(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project, resend_after_s=0.0)
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_index", {"content": TEXT, "source": "tides"})
        assert ANSWER in await ask(client)
        assert ANSWER in await ask(client)


async def test_text_sent_under_one_label_is_named_not_resent_under_another(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    notes = hooks.project / "tides.md"
    notes.write_text(TEXT)
    settings = make_settings(tmp_path, hooks.project, home=hooks.home)
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_index", {"path": "tides.md", "source": "copyA"})
        assert ANSWER in await ask(client)
        await client.call_tool("ctx_index", {"path": "tides.md", "source": "copyB"})
        again = text_of(await client.call_tool("ctx_search", {"queries": ["spring tides moon"], "source": "copyB"}))
        assert ANSWER not in again and "(same text as copyA, sent in search call 1; not repeated)" in again, again
        run = hooks.run("claude-code", "PreCompact", {"session_id": "c", "hook_event_name": "PreCompact",
                                                      "cwd": str(hooks.project), "trigger": "auto"})
        assert run.returncode == 0, run.stderr
        # after a compaction the agent has forgotten both: the text is sent again
        assert ANSWER in text_of(await client.call_tool("ctx_search", {"queries": ["spring tides moon"],
                                                                      "source": "copyB"}))

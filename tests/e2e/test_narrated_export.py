"""The export interleaves the user's prompts and the agent's own words with the cells they led to, read from the
client's transcript whose path a hook reported; without one, the export is as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

from context_kernel.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
CLI = Path(sys.executable).parent / "context-kernel"


class Transcript:
    """A Claude Code transcript being written as the conversation goes (one JSON line per entry)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, kind: str, content: Any, **extra: Any) -> None:
        line = {"type": kind, "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"), "sessionId": "c1",
                "isSidechain": False, "message": {"role": kind, "content": content}, **extra}
        with self.path.open("a") as f:
            f.write(json.dumps(line) + "\n")


def prompt_hook(settings: Settings, transcript: Path, prompt: str) -> None:
    """Claude Code's UserPromptSubmit hook, as the client runs it, in the server's data dir."""
    payload = {"session_id": "c1", "transcript_path": str(transcript), "cwd": str(settings.project_dir),
               "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(settings.home), "CONTEXT_KERNEL_HOOK_DEFER_AFTER_S": "inf"}
    done = subprocess.run([str(CLI), "hook", "claude-code", "UserPromptSubmit"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, cwd=settings.project_dir, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


async def export(client: Client) -> Any:
    done = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    return nbformat.read(Path(done.split(" to ", 1)[1].split(";")[0]), as_version=4)


async def test_the_prompt_and_the_agents_words_sit_before_the_cells_they_led_to(
        client: Client, settings: Settings, tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "claude" / "c1.jsonl")
    transcript.path.parent.mkdir()
    question = "Which penguin species is heaviest?"
    transcript.add("user", question)
    await anyio.to_thread.run_sync(prompt_hook, settings, transcript.path, question)
    transcript.add("assistant", [{"type": "thinking", "thinking": "private plan", "signature": "s"}])
    transcript.add("assistant", [{"type": "text", "text": "I'll compute it in the kernel."}])
    transcript.add("assistant", [{"type": "tool_use", "id": "t1", "name": "mcp__context-kernel__ctx_execute",
                                  "input": {"language": "python", "code": "print(6300)"}}])
    reply = await client.call_tool("ctx_execute", {"language": "python", "code": "print(6300)"})
    cited = reply.content[0].text.rsplit("\n", 1)[-1]  # type: ignore[union-attr]
    transcript.add("user", [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text",
                                                                                      "text": f"6300\n{cited}"}]}])
    transcript.add("assistant", [{"type": "text", "text": f"Gentoo: 6,300 g {cited}."}])
    nb = await export(client)
    nbformat.validate(nb)
    cells = session_cells(nb)
    told = [(c.cell_type, c.metadata.get("context_kernel", {}).get("said_by")) for c in cells]
    assert told == [("markdown", "user"), ("markdown", "agent"), ("code", None), ("markdown", "agent")], told
    assert question in cells[0].source and "I'll compute it" in cells[1].source
    assert "private plan" not in json.dumps(nb) and "mcp__context-kernel" not in json.dumps(nb)
    assert f"Gentoo: 6,300 g {cited}." in cells[3].source


async def test_without_a_transcript_the_export_has_no_narration(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
    nb = await export(client)
    assert [c.cell_type for c in session_cells(nb)] == ["code"]

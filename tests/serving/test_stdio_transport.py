"""The loop-native stdio transport (serving/stdio.py): the wire contract of the SDK's `stdio_server` kept.

A small MCPServer served by `serve_stdio` in a real subprocess, driven by the SDK's stdio client or by
raw pipes; and the real `context-kernel serve` when stdout is a file (the SDK's transport then)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import server_command, text_of

from context_kernel.serving.stdio import _Lines

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SERVER = """
import os, subprocess, sys
import anyio
from mcp.server.mcpserver import MCPServer
from context_kernel.serving.stdio import serve_stdio

server = MCPServer("probe")

@server.tool()
def echo_length(text: str) -> str:
    return f"{len(text)}:{text[-3:]}"

@server.tool()
def big(n: int) -> str:
    return "é" * n

@server.tool()
def stray() -> str:
    # What a careless handler or an inherited child does: write to fd 1, read fd 0.
    print("stray print", flush=True)
    os.write(1, b"stray write\\n")
    subprocess.run(["sh", "-c", "echo child output"], check=True)
    return repr(os.read(0, 10))

async def main() -> None:
    async with serve_stdio() as (read, write):
        await server._lowlevel_server.run(read, write, server._lowlevel_server.create_initialization_options())

anyio.run(main)
os.write(1, b"fd 1 restored\\n")
"""


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    script = tmp_path / "probe_server.py"
    script.write_text(SERVER)
    return script


def params(script: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(script)], env=dict(os.environ))


async def test_messages_longer_than_a_pipe_read_arrive_whole_both_ways(probe: Path) -> None:
    text = "x" * 300_000 + "end"  # several 64 KiB reads, and a reply in several pipe writes
    async with Client(params(probe)) as client:
        assert text_of(await client.call_tool("echo_length", {"text": text})) == "300003:end"
        reply = text_of(await client.call_tool("big", {"n": 200_000}))
    assert reply == "é" * 200_000


async def test_stray_output_and_stdin_reads_of_handlers_and_children_miss_the_wire(probe: Path) -> None:
    async with Client(params(probe)) as client:
        result = await client.call_tool("stray", {})
        after = await client.call_tool("echo_length", {"text": "abc"})
    assert text_of(result) == "b''"  # fd 0 is the null device while serving
    assert text_of(after) == "3:abc"


def test_stray_output_goes_to_stderr_and_fd_1_is_restored_at_exit(probe: Path) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "stray", "arguments": {}}},
    ]
    with subprocess.Popen([sys.executable, str(probe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        proc.stdin.close()  # end of input: the server stops, restores fd 1 and writes to it
        rest, err = proc.stdout.read().decode(), proc.stderr.read().decode()
        assert proc.wait(timeout=30) == 0
    assert [r.get("id") for r in replies] == [1, 2]
    assert replies[1]["result"]["content"][0]["text"] == "b''", replies[1]
    assert rest == "fd 1 restored\n"
    assert {"stray print", "stray write", "child output"} <= set(err.splitlines())


@pytest.mark.kernels
def test_the_server_still_answers_when_stdout_is_a_file(tmp_path: Path, project: Path) -> None:
    """A redirect is not a pipe: the SDK's own transport serves it."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    requests_file = tmp_path / "requests.jsonl"
    requests_file.write_text("".join(json.dumps(r) + "\n" for r in requests))
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home"), "CONTEXT_KERNEL_PREWARM": "0"}
    with requests_file.open("rb") as stdin, out.open("wb") as stdout:
        subprocess.run(server_command("--project", str(project)), stdin=stdin, stdout=stdout,
                       stderr=subprocess.DEVNULL, env=env, timeout=60, check=True)
    replies = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert "ctx_execute" in {t["name"] for t in replies[2]["result"]["tools"]}


@pytest.mark.kernels
@pytest.mark.parametrize("stdout_kind", ["file", "pipe"])
def test_requests_in_flight_when_stdin_closes_are_still_answered(tmp_path: Path, project: Path,
                                                                  stdout_kind: str) -> None:
    """A client that writes its requests and closes stdin (`server < requests > replies`) gets every
    reply: the last one took a second and was lost when the server stopped at stdin's end."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "ctx_execute", "arguments": {"language": "shell", "code": "sleep 1; echo slow-done"}}},
    ]
    payload = "".join(json.dumps(r) + "\n" for r in requests).encode()
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home"), "CONTEXT_KERNEL_PREWARM": "0"}
    if stdout_kind == "file":
        (tmp_path / "requests.jsonl").write_bytes(payload)
        with (tmp_path / "requests.jsonl").open("rb") as stdin, (tmp_path / "out.jsonl").open("wb") as stdout:
            subprocess.run(server_command("--project", str(project)), stdin=stdin, stdout=stdout,
                           stderr=subprocess.DEVNULL, env=env, timeout=90, check=True)
        out = (tmp_path / "out.jsonl").read_text()
    else:
        done = subprocess.run(server_command("--project", str(project)), input=payload, capture_output=True,
                              env=env, timeout=90, check=True)
        out = done.stdout.decode()
    replies = {r["id"]: r for r in map(json.loads, out.splitlines())}
    assert 2 in replies, out
    assert "slow-done" in json.dumps(replies[2]["result"])


async def _lines_of(*chunks: bytes) -> list[str]:
    reader = asyncio.StreamReader()
    for chunk in chunks:
        reader.feed_data(chunk)
    reader.feed_eof()
    return [line async for line in _Lines(reader)]


async def test_a_character_split_between_two_reads_is_decoded_whole() -> None:
    e_acute = "é".encode()
    assert await _lines_of(b'{"a": "' + e_acute[:1], e_acute[1:] + b'"}\n{"b": 1}\n') == ['{"a": "é"}\n', '{"b": 1}\n']


async def test_bytes_that_are_not_utf8_become_replacement_characters_as_with_the_sdk() -> None:
    assert await _lines_of(b'{"a": "\xff"}\n') == ['{"a": "\ufffd"}\n']


async def test_a_last_line_without_its_newline_is_still_a_line() -> None:
    assert await _lines_of(b'{"a": 1}\n{"b"', b': 2}') == ['{"a": 1}\n', '{"b": 2}']


async def test_an_empty_input_ends_the_lines_at_once() -> None:
    assert await _lines_of() == []

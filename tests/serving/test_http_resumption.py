"""A dropped HTTP stream does not lose a long call's reply: 2025-protocol clients resume it.

A real `serve --transport http` behind a TCP proxy that cuts the response stream of a running
`ctx_execute` right after the server's priming event; the SDK's client reconnects with
`Last-Event-ID` by itself and gets the reply, sent while it was away.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import anyio
import httpx2
import nbformat
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.streamable_http import EventMessage
from mcp_types import JSONRPCResponse
from starlette.types import Message, Receive, Scope, Send
from tests.helpers import session_cells, text_of, uncited
from tests.serving.http_harness import HTTP_TIMEOUT, HttpServer, http_server, tools_call
from tests.serving.stream_dropper import stream_dropper

from context_kernel.serving.resumption import SessionBinding, SessionEventStore

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

# The cell waits (bounded) for the test to release it, so the drop happens while it runs.
WAIT_FOR_RELEASE = (
    "import os, time\n"
    "for _ in range(1200):\n"
    "    if os.path.exists('release'):\n"
    "        break\n"
    "    time.sleep(0.05)\n"
    "print('released' if os.path.exists('release') else 'never released')"
)


@pytest.fixture
def server(tmp_path: Path, project: Path) -> Iterator[HttpServer]:
    with http_server(tmp_path / "home", project) as running:
        yield running


@pytest.mark.kernels
async def test_a_2025_client_whose_stream_drops_during_a_long_call_resumes_and_gets_the_reply(
        server: HttpServer, project: Path) -> None:
    async with (stream_dropper(server.url) as proxy, server.http_client() as http,
                Client(streamable_http_client(proxy.url, http_client=http), mode="legacy") as client):
        assert client.protocol_version == "2025-11-25"
        proxy.armed_for = b"tools/call"
        reply: list[str] = []

        async def call() -> None:
            result = await client.call_tool("ctx_execute", {"language": "python", "code": WAIT_FOR_RELEASE})
            reply.append(("error: " if result.is_error else "") + text_of(result))

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                with anyio.fail_after(60):
                    await proxy.dropped.wait()  # no priming event, no resumption: this would time out
                await anyio.Path(project / "release").write_text("")
    assert reply == ["released"]
    resumed = [head for head in proxy.requests if head.startswith(b"GET ") and b"last-event-id" in head.lower()]
    assert resumed, "the client did not reconnect with Last-Event-ID"


async def test_the_event_store_replays_a_stream_only_to_the_session_it_belongs_to() -> None:
    """Every client numbers its requests from the same small ids: two sessions' stream "1" stay apart,
    and another session's event id replays nothing."""
    store = SessionEventStore()
    reply = {"a": JSONRPCResponse(jsonrpc="2.0", id=1, result={"text": "a's secret"}),
             "b": JSONRPCResponse(jsonrpc="2.0", id=1, result={"text": "b's reply"})}
    primed: dict[str, str] = {}
    replayed: dict[tuple[str, str], list[object]] = {}

    def exchange(session: str, action: Callable[[], Awaitable[None]]) -> Callable[..., Awaitable[None]]:
        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            await action()
        return lambda: SessionBinding(app)({"type": "http", "headers": [(b"mcp-session-id", session.encode())]},
                                           _no_receive, _no_send)

    async def _no_receive() -> Message:
        return {"type": "http.disconnect"}

    async def _no_send(message: Message) -> None:
        return None

    for session in ("a", "b"):
        async def prime_and_reply(session: str = session) -> None:
            primed[session] = await store.store_event("1", None)
            await store.store_event("1", reply[session])
        await exchange(session, prime_and_reply)()
    for session, event_of in (("a", "a"), ("b", "b"), ("b", "a")):
        got: list[object] = []

        async def resume(event_of: str = event_of, got: list[object] = got) -> None:
            async def collect(event: EventMessage) -> None:
                got.append(event.message)
            await store.replay_events_after(primed[event_of], collect)
        await exchange(session, resume)()
        replayed[(session, event_of)] = got
    assert replayed[("a", "a")] == [reply["a"]] and replayed[("b", "b")] == [reply["b"]]
    assert replayed[("b", "a")] == []


@pytest.mark.kernels
async def test_on_the_stateless_protocol_a_closed_stream_cancels_the_call_and_frees_the_kernel(
        server: HttpServer, project: Path) -> None:
    """2026-07-28 has nothing to resume: closing the stream is the protocol's cancel. The cell is
    interrupted (not left holding the kernel until it ends by itself), and what it printed is kept."""
    # The cell says it runs through a FIFO: its write waits for the test's read, so no polling.
    started = project / "started"
    os.mkfifo(started)
    cell = ("import os, time\nprint('waiting', flush=True)\nopen('started', 'w').write('running')\n"
            "for _ in range(1200):\n    time.sleep(0.05)\nopen('finished', 'w').close()")
    named = {**server.auth(), "x-context-kernel-session": "drop-test"}
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        headers, body = tools_call("ctx_execute", {"language": "python", "code": cell})
        try:
            with anyio.fail_after(60):
                async with http.stream("POST", server.url, headers={**headers, **named}, content=body) as response:
                    said = await anyio.to_thread.run_sync(started.read_text, abandon_on_cancel=True)
                    assert said == "running" and response.status_code == 200
        finally:
            _unblock(started)
        # The stream is closed; the next call of the session gets the kernel at once, not after a minute.
        with anyio.fail_after(40):
            headers, body = tools_call("ctx_execute", {"language": "python",
                                                        "code": "print(os.path.exists('finished'))"})
            after = await http.post(server.url, headers={**headers, **named}, content=body)
            headers, body = tools_call("ctx_export", {})
            exported = await http.post(server.url, headers={**headers, **named}, content=body)
    assert _text(after) == "False"
    notebook = anyio.Path(_text(exported).split(" to ", 1)[1].split(";")[0])
    first = session_cells(nbformat.reads(await notebook.read_text(), as_version=4))[0]
    assert first["metadata"]["context_kernel"]["status"] == "interrupted"
    texts = [o.get("text", "") for o in first["outputs"]]
    assert texts[0] == "waiting\n" and "cancelled while it ran" in texts[-1]


def _unblock(fifo: Path) -> None:
    """Open the FIFO's other end, so a reader the cell never answered does not block a thread forever."""
    with contextlib.suppress(OSError):  # no reader waiting (ENXIO): nothing to unblock
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def _text(response: httpx2.Response) -> str:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    return uncited("".join(block.get("text", "") for block in result["content"]), result.get("_meta"))

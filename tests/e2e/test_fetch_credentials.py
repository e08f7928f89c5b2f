"""Credentials in a fetched URL (`http://user:pw@host/…`, `https://<token>@host/…`) are used for
the request and kept nowhere: not in the source label, the rewritten links, the stored origin, nor
any reply."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import text_of

from context_kernel.settings import Settings, database_path

pytestmark = pytest.mark.anyio
PASSWORD = "pw-Zq7Rk2Lm9"
TOKEN = "8f3a9c2e7b1d4f6a0e5c9b8d7a6f5e4d3c2b1a09"
PAGE = """<!doctype html><html><head><title>Private docs</title></head><body><main>
<h1>Private docs</h1><p>See <a href="/next.html">the next page</a> and <a href="setup.html">setup</a>.</p>
<p>The deploy runs nightly and retries three times before it pages anyone.</p>
</main></body></html>"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def site(tmp_path: Path) -> Iterator[int]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "docs.html").write_text(PAGE)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.parametrize("userinfo", [f"bob:{PASSWORD}", TOKEN])
async def test_userinfo_of_a_fetched_url_is_kept_nowhere(client: Client, settings: Settings, site: int,
                                                         userinfo: str) -> None:
    secret = userinfo.split(":")[-1]
    result = await client.call_tool("ctx_fetch_and_index", {"url": f"http://{userinfo}@127.0.0.1:{site}/docs.html"})
    replies = text_of(result)
    assert not result.is_error, replies
    assert f'"http://127.0.0.1:{site}/docs.html"' in replies  # the label, without the userinfo
    found = text_of(await client.call_tool("ctx_search", {"queries": ["next page setup", "deploy nightly"]}))
    # links within the site keep their text only (their URLs would have been rewritten against the bare address)
    assert "the next page" in found and "next.html" not in found
    replies += found
    assert secret not in replies and "bob:" not in replies
    with sqlite3.connect(database_path(settings.home)) as db:
        stored = "\n".join(db.iterdump())
    assert secret not in stored and "bob:" not in stored

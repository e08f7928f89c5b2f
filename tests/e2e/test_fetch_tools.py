"""ctx_fetch_and_index through the MCP client, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import text_of

pytestmark = pytest.mark.anyio

DOC_PAGE = """<!doctype html><html><head><title>Widget API</title></head><body>
<nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<main>
<h1>Widget API</h1>
<p>The widget library connects to a widget server.</p>
<h2>Connecting</h2>
<p>Open a connection with a timeout.</p>
<pre><code class="language-python">import widget
conn = widget.connect("tcp://localhost:7000", timeout=2.5)
conn.send(b"hello")</code></pre>
<h2>Closing</h2>
<p>Always close the connection when done.</p>
<pre><code class="language-javascript">conn.close();</code></pre>
</main>
<footer>Copyright Widget Corp</footer>
</body></html>"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "widget.html").write_text(DOC_PAGE)
    for i in range(10):
        (root / f"page{i}.txt").write_text(f"Page number {i} talks about topic{i}.\n")
    (root / "data.json").write_text('{"services": [{"name": "alpha", "port": 8001}, {"name": "beta", "port": 8002}]}')
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


async def test_a_fetched_doc_page_is_searchable_down_to_its_exact_code_block(client: Client, site: str) -> None:
    result = await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/widget.html"})
    text = text_of(result)
    assert not result.is_error, text
    assert f'as "{site}/widget.html"' in text and "--- preview ---" in text
    assert len(text.encode()) < 4096
    found = text_of(await client.call_tool("ctx_search", {"queries": ["connect with a timeout"]}))
    assert 'conn = widget.connect("tcp://localhost:7000", timeout=2.5)' in found
    assert "```python" in found
    assert "Copyright Widget Corp" not in found


async def test_a_second_fetch_answers_from_the_cache_and_force_refetches(client: Client, site: str) -> None:
    first = text_of(await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/page1.txt", "source": "p1"}))
    assert first.startswith("Fetched")
    second = text_of(await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/page1.txt", "source": "p1"}))
    assert second.startswith('Cached: "p1" was fetched') and "force=true" in second
    third = text_of(await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/page1.txt", "source": "p1",
                                                                    "force": True}))
    assert third.startswith("Fetched")
    zero_ttl = text_of(await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/page1.txt", "source": "p1",
                                                                       "ttl": 0}))
    assert zero_ttl.startswith("Fetched")


async def test_json_is_indexed_by_key_path(client: Client, site: str) -> None:
    await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/data.json", "source": "svc"})
    found = text_of(await client.call_tool("ctx_search", {"queries": ["beta port"], "source": "svc"}))
    assert '"port": 8002' in found


async def test_a_batch_keeps_order_and_reports_each_url(client: Client, site: str) -> None:
    urls = [f"{site}/page{i}.txt" for i in range(9)] + [f"{site}/missing.txt"]
    result = await client.call_tool("ctx_fetch_and_index", {"requests": [{"url": u} for u in urls],
                                                            "concurrency": 4})
    text = text_of(result)
    assert not result.is_error
    lines = text.splitlines()
    for i in range(9):
        assert lines[i].startswith(f"{i + 1}. {site}/page{i}.txt — new:")
    assert lines[9].startswith(f"10. {site}/missing.txt — error:") and "404" in lines[9]
    assert lines[10].startswith("9 of 10 indexed")


async def test_a_batch_where_every_url_fails_is_an_error(client: Client, site: str) -> None:
    result = await client.call_tool("ctx_fetch_and_index", {"requests": [{"url": f"{site}/nope1"},
                                                                         {"url": "gopher://example.org/"}]})
    assert result.is_error
    assert "gopher" in text_of(result)


async def test_a_metadata_address_is_refused_naming_the_rule(client: Client) -> None:
    result = await client.call_tool("ctx_fetch_and_index", {"url": "http://169.254.169.254/latest/meta-data/"})
    assert result.is_error
    assert "169.254.169.254" in text_of(result) and "link-local" in text_of(result)


@pytest.mark.parametrize("path", ["/page1.txt", ""])
async def test_a_url_without_a_scheme_is_answered_add_http(client: Client, site: str, path: str) -> None:
    bare = site.removeprefix("http://") + path  # "127.0.0.1:PORT/page1.txt"
    result = await client.call_tool("ctx_fetch_and_index", {"url": bare})
    text = text_of(result)
    assert result.is_error
    # Was: "refused on purpose, do not retry it" — but http:// in front is all it lacks.
    assert "do not retry" not in text and "refused on purpose" not in text, text
    assert "add http://" in text and f"http://{bare}" in text, text
    for name in ("localhost:8701/x", "docs.example.org/guide"):
        other = text_of(await client.call_tool("ctx_fetch_and_index", {"url": name}))
        assert f"http://{name}" in other and "do not retry" not in other, other


async def test_a_second_url_under_an_existing_source_label_says_it_replaced_the_first(client: Client,
                                                                                      site: str) -> None:
    first = text_of(await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/page1.txt", "source": "docs"}))
    assert "replaced" not in first
    second = text_of(await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/page2.txt", "source": "docs"}))
    # Was silent: the first page was gone from the index and the reply did not say so.
    assert f'replaced the page previously indexed as "docs" ({site}/page1.txt)' in second, second
    again = text_of(await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/page2.txt", "source": "docs",
                                                                   "force": True}))
    assert "replaced the page previously" not in again  # the same URL refetched is not a replacement
    batch = text_of(await client.call_tool("ctx_fetch_and_index", {"requests": [
        {"url": f"{site}/page3.txt", "source": "docs"}]}))
    assert f"replaced {site}/page2.txt" in batch, batch

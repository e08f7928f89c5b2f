"""SafeFetcher over HTTP/2: a real h2 server over TLS on 127.0.0.1, reached through the pinned transport.

The server (hypercorn, see local_h2.py) records the protocol each request arrived over, so "HTTP/2"
here means the server parsed an HTTP/2 request after ALPN chose "h2" on a connection that the
pinned backend opened to the vetted IP and the TLS layer verified for the host name.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import anyio
import pytest
import trustme
from local_h2 import H2Server, Streamed
from local_http import PAGE

from context_kernel.web.client import SafeFetcher
from context_kernel.web.errors import FetchHTTPError, FetchTooLarge

pytestmark = pytest.mark.anyio

MB = 1024 * 1024
NAMES = ("site.test", "other.test")


async def resolve_to_loopback(host: str, port: int) -> Sequence[str]:
    """DNS for the test names: every one is 127.0.0.1, where the server listens."""
    if host not in NAMES:
        raise OSError(f"unknown test name {host}")
    return ["127.0.0.1"]


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


@pytest.fixture
def server(ca: trustme.CA, tmp_path: Path) -> Iterator[H2Server]:
    with H2Server(ca, NAMES, tmp_path / "h2") as s:
        yield s
    assert s.errors == []  # hypercorn logged nothing at WARNING or above


def fetcher_for(ca: trustme.CA, *, max_body_bytes: int = 50 * MB, read_timeout_s: float = 10.0) -> SafeFetcher:
    return SafeFetcher(resolver=resolve_to_loopback, ssl_context=trusting(ca), max_body_bytes=max_body_bytes,
                       read_timeout_s=read_timeout_s, connect_timeout_s=5.0)


@pytest.fixture
async def fetcher(ca: trustme.CA, server: H2Server) -> AsyncIterator[SafeFetcher]:
    # Depends on `server` so it closes (and drops its connections) before the server stops.
    async with fetcher_for(ca) as f:
        yield f


async def stream_end(server: H2Server, timeout: float = 10.0) -> Streamed | None:
    """The next /stream outcome the server reports, waiting off the event loop at most `timeout` s."""
    return await anyio.to_thread.run_sync(server.wait_stream_end, timeout)


async def test_a_page_is_fetched_over_http2_by_name_with_sni_and_the_pinned_address(
        fetcher: SafeFetcher, server: H2Server) -> None:
    assert fetcher.http2  # h2 is installed, so the client offers it
    url = server.url("/page")
    first = await fetcher.fetch(url)
    second = await fetcher.fetch(url)
    assert (first.status, first.body, first.address) == (200, PAGE, "127.0.0.1")
    assert second.body == PAGE
    assert [s.http_version for s in server.seen] == ["2", "2"]
    assert server.seen[0].host == f"site.test:{server.port}"  # :authority names the host, not the IP
    assert server.sni == ["site.test"]  # one TLS connection, verified for the name ...
    assert server.seen[0].client_port == server.seen[1].client_port  # ... carrying both requests


async def test_a_gzip_encoded_page_over_http2_is_decoded(fetcher: SafeFetcher, server: H2Server) -> None:
    result = await fetcher.fetch(server.url("/gzip"))
    assert result.body == PAGE * 50
    assert result.headers["content-encoding"] == "gzip"
    assert server.seen[-1].http_version == "2"
    assert "gzip" in server.seen[-1].headers["accept-encoding"]


async def test_a_redirect_chain_is_followed_over_one_http2_connection(fetcher: SafeFetcher, server: H2Server) -> None:
    result = await fetcher.fetch(server.url("/redirect?n=4"))
    assert result.body == PAGE
    assert len(result.redirects) == 4
    assert result.final_url == server.url("/redirect?n=0")
    assert [s.http_version for s in server.seen] == ["2"] * 5
    # The redirect bodies were read, so every hop rode the first connection.
    assert len({s.client_port for s in server.seen}) == 1
    assert server.sni == ["site.test"]


async def test_a_redirect_to_another_name_on_the_same_address_gets_its_own_connection_and_certificate_check(
        fetcher: SafeFetcher, server: H2Server) -> None:
    target = server.url("/page", host="other.test")
    result = await fetcher.fetch(server.url(f"/to?location={target}"))
    assert (result.body, result.final_url) == (PAGE, target)
    assert [s.http_version for s in server.seen] == ["2", "2"]
    assert server.seen[1].host == f"other.test:{server.port}"
    # An HTTP/2 connection verified for site.test is not reused for other.test, though both
    # names pin to the same IP: the second name gets its own TLS handshake and SNI.
    assert server.sni == ["site.test", "other.test"]
    assert server.seen[0].client_port != server.seen[1].client_port


@pytest.mark.parametrize(("alpn", "version"), [(("h2", "http/1.1"), "2"), (("http/1.1",), "1.1")],
                         ids=["http2", "http1.1-only"])
@pytest.mark.parametrize("declared", [False, True], ids=["streamed", "content-length"])
async def test_the_body_cap_stops_the_download_while_the_fetcher_stays_open(
        ca: trustme.CA, tmp_path: Path, alpn: tuple[str, ...], version: str, declared: bool) -> None:
    # More than httpcore's 16 MiB HTTP/2 stream window (and than TCP buffers hold for HTTP/1.1),
    # so the response cannot finish unread: only the client stopping it can end it.
    total = 32 * MB
    with H2Server(ca, NAMES, tmp_path / "h2", alpn=alpn) as server:
        async with fetcher_for(ca, max_body_bytes=1 * MB) as fetcher:
            with pytest.raises(FetchTooLarge) as info:
                await fetcher.fetch(server.url(f"/stream?n={total}&length={int(declared)}"))
            # The server sees the response end while our client (and its pool) is still open:
            # the fetcher stopped the download, it did not just stop reading it.
            ended = await stream_end(server)
    assert server.errors == []
    assert server.seen[0].http_version == version
    if declared:
        assert (info.value.declared, info.value.received) == (total, 0)  # refused before reading
    else:
        assert 1 * MB < info.value.received <= 1 * MB + 128 * 1024  # stopped within one network read
    assert ended is not None, "the server was still sending after the fetch gave up"
    assert not ended.completed and ended.sent < total


async def test_capped_http2_downloads_leave_later_fetches_to_the_host_working(
        ca: trustme.CA, server: H2Server) -> None:
    # Before the transport retired such connections, the pooled connection kept the abandoned
    # streams open and their unread bytes used up its flow-control window, so the page fetch
    # after them hung until its read timeout: the server could send no more data on it.
    async with fetcher_for(ca, max_body_bytes=1 * MB, read_timeout_s=5.0) as fetcher:
        for _ in range(3):
            started = time.monotonic()
            with pytest.raises(FetchTooLarge):
                await fetcher.fetch(server.url(f"/stream?n={32 * MB}"))
            assert time.monotonic() - started < 3
        result = await fetcher.fetch(server.url("/page"))
        ended = [await stream_end(server) for _ in range(3)]
    assert result.body == PAGE
    assert all(e is not None and not e.completed for e in ended)
    assert [s.http_version for s in server.seen] == ["2"] * 4
    assert len({s.client_port for s in server.seen}) == 4  # each capped download cost its connection


async def test_a_download_stopped_at_the_cap_does_not_break_another_fetch_sharing_its_connection(
        ca: trustme.CA, server: H2Server) -> None:
    async with fetcher_for(ca, max_body_bytes=1 * MB) as fetcher:
        held: list[bytes] = []

        async def fetch_held_page() -> None:
            held.append((await fetcher.fetch(server.url("/gate"))).body)

        async with anyio.create_task_group() as tg:
            tg.start_soon(fetch_held_page)
            assert await anyio.to_thread.run_sync(server.gate_reached.wait, 10.0)
            # Multiplexed onto the connection that is carrying the held page. The capped response
            # never ends on its own (hold=1), so only its connection closing can end it.
            with pytest.raises(FetchTooLarge):
                await fetcher.fetch(server.url(f"/stream?n={4 * MB}&hold=1"))
            server.open_gate()
        # The held page finished on the connection the abandoned stream had retired ...
        assert held == [PAGE]
        # ... and once that connection was idle the pool closed it, ending the abandoned stream.
        ended = await stream_end(server)
        after = await fetcher.fetch(server.url("/page"))
    assert ended is not None and not ended.completed
    assert after.body == PAGE
    gate, capped, page = server.seen
    assert [s.http_version for s in server.seen] == ["2", "2", "2"]
    assert gate.client_port == capped.client_port != page.client_port


@pytest.mark.parametrize(("size", "kept"), [(100, True), (200_000, False)], ids=["small", "large"])
async def test_an_http2_error_page_keeps_its_connection_when_its_body_is_small(
        fetcher: SafeFetcher, server: H2Server, size: int, kept: bool) -> None:
    with pytest.raises(FetchHTTPError) as info:
        await fetcher.fetch(server.url(f"/status?code=404&n={size}"))
    assert info.value.status == 404
    assert (await fetcher.fetch(server.url("/page"))).body == PAGE
    error, page = server.seen
    assert (error.http_version, page.http_version) == ("2", "2")
    # A small body is read and the connection reused; a large one is left unread, which
    # retires the connection so nothing more of it is downloaded.
    assert (error.client_port == page.client_port) is kept


async def test_a_server_offering_only_http11_is_fetched_over_http11(ca: trustme.CA, tmp_path: Path) -> None:
    with H2Server(ca, NAMES, tmp_path / "h1", alpn=("http/1.1",)) as server:
        async with fetcher_for(ca) as fetcher:
            page = await fetcher.fetch(server.url("/page"))
            encoded = await fetcher.fetch(server.url("/gzip"))
            redirected = await fetcher.fetch(server.url("/redirect?n=2"))
    assert (page.body, encoded.body, redirected.body) == (PAGE, PAGE * 50, PAGE)
    assert page.address == "127.0.0.1"
    assert [s.http_version for s in server.seen] == ["1.1"] * 5
    assert server.sni == ["site.test"]  # one kept-alive HTTP/1.1 connection for all five
    assert server.errors == []

"""SafeFetcher against a real HTTP server on 127.0.0.1; DNS is a staged resolver, never the network."""

from __future__ import annotations

import json
import socket
import ssl
import time
from collections.abc import AsyncIterator, Iterator, Sequence

import anyio
import pytest
import trustme
from local_http import PAGE, LocalServer, bomb

from context_kernel.web.client import FetchResult, SafeFetcher
from context_kernel.web.errors import (
    FetchBlocked,
    FetchError,
    FetchHTTPError,
    FetchTimeout,
    FetchTooLarge,
    FetchTooManyRedirects,
    FetchUnreachable,
)

pytestmark = pytest.mark.anyio

MB = 1024 * 1024


class StagedResolver:
    """DNS as a script: each name answers its staged lists in turn, the last one repeating."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        staged = self.answers.get(host)
        if not staged:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return staged.pop(0) if len(staged) > 1 else staged[0]


def site_resolver(**extra: list[list[str]]) -> StagedResolver:
    return StagedResolver({"site.test": [["127.0.0.1"]], "meta.test": [["169.254.169.254"]], **extra})


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as s:
        yield s


@pytest.fixture
async def fetcher(server: LocalServer) -> AsyncIterator[SafeFetcher]:
    # Depends on `server` so it closes (and drops keep-alive connections) before the server stops.
    async with SafeFetcher(resolver=site_resolver(), read_timeout_s=10.0, connect_timeout_s=5.0) as f:
        yield f


async def test_a_plain_page_is_fetched_by_name_with_status_headers_body_and_address(
        fetcher: SafeFetcher, server: LocalServer) -> None:
    url = server.url("/page", host="site.test")
    result = await fetcher.fetch(url)
    assert isinstance(result, FetchResult)
    assert (result.url, result.final_url, result.status, result.redirects) == (url, url, 200, [])
    assert result.body == PAGE
    assert result.content_type == "text/html; charset=utf-8"
    assert (result.media_type, result.charset) == ("text/html", "utf-8")
    assert result.headers["content-length"] == str(len(PAGE))
    assert result.address == "127.0.0.1"
    assert 0 < result.elapsed_s < 10
    # The connection went to the pinned IP, but the request still names the host.
    assert server.seen[-1].headers["host"] == f"site.test:{server.port}"
    assert server.seen[-1].headers["user-agent"].startswith("context-kernel/")


async def test_loopback_is_allowed_by_default(fetcher: SafeFetcher, server: LocalServer) -> None:
    assert (await fetcher.fetch(server.url("/page"))).body == PAGE


@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate", "raw-deflate"])
async def test_compressed_responses_are_decoded(fetcher: SafeFetcher, server: LocalServer, encoding: str) -> None:
    result = await fetcher.fetch(server.url(f"/encoded?as={encoding}"))
    assert result.body == PAGE * 50
    assert "br" in server.seen[-1].headers["accept-encoding"]


@pytest.mark.parametrize("encoding", ["gzip", "br"])
async def test_a_decompression_bomb_is_stopped_at_the_cap(server: LocalServer, encoding: str) -> None:
    assert len(bomb(encoding)) < 20_000  # 10 MB of zeros on the wire is tiny
    async with SafeFetcher(max_body_bytes=1 * MB) as fetcher:
        with pytest.raises(FetchTooLarge) as info:
            await fetcher.fetch(server.url(f"/bomb?as={encoding}"))
    # Decoding asked for at most cap + 1 bytes: the bomb never inflated past the cap in memory.
    assert info.value.received == 1 * MB + 1
    assert info.value.limit == 1 * MB


async def test_a_body_over_the_cap_with_content_length_is_refused_before_reading(server: LocalServer) -> None:
    async with SafeFetcher(max_body_bytes=1 * MB) as fetcher:
        with pytest.raises(FetchTooLarge) as info:
            await fetcher.fetch(server.url(f"/big?n={2 * MB}"))
    assert (info.value.declared, info.value.received) == (2 * MB, 0)


async def test_a_body_over_the_cap_without_content_length_stops_reading_at_the_cap(server: LocalServer) -> None:
    async with SafeFetcher(max_body_bytes=1 * MB) as fetcher:
        with pytest.raises(FetchTooLarge) as info:
            await fetcher.fetch(server.url(f"/big?n={8 * MB}&length=0"))
    assert info.value.declared is None
    assert 1 * MB < info.value.received <= 1 * MB + 128 * 1024  # stopped within one network read


async def test_a_body_exactly_at_the_cap_is_accepted(server: LocalServer) -> None:
    async with SafeFetcher(max_body_bytes=100_000) as fetcher:
        for length in ("1", "0"):
            result = await fetcher.fetch(server.url(f"/big?n=100000&length={length}"))
            assert len(result.body) == 100_000


async def test_a_chain_of_five_redirects_is_followed(fetcher: SafeFetcher, server: LocalServer) -> None:
    result = await fetcher.fetch(server.url("/redirect?n=5", host="site.test"))
    assert result.body == PAGE
    assert len(result.redirects) == 5
    assert result.final_url == server.url("/redirect?n=0", host="site.test")
    assert result.redirects[-1] == result.final_url


async def test_a_chain_of_six_redirects_is_refused_naming_the_limit(fetcher: SafeFetcher, server: LocalServer) -> None:
    with pytest.raises(FetchTooManyRedirects, match="more than 5 redirects") as info:
        await fetcher.fetch(server.url("/redirect?n=6"))
    assert info.value.limit == 5
    assert len(info.value.redirects) == 5


@pytest.mark.parametrize(("location", "rule"), [
    ("http://169.254.169.254/latest/meta-data/", "link-local/metadata address 169.254.169.254"),
    ("http://meta.test/latest/meta-data/", "link-local/metadata address 169.254.169.254"),
    ("http://[::ffff:169.254.169.254]/", "link-local/metadata address 169.254.169.254 (as IPv4-mapped"),
    ("file:///etc/passwd", "scheme file"),
])
async def test_a_redirect_to_a_refused_target_is_blocked_naming_the_rule(
        fetcher: SafeFetcher, server: LocalServer, location: str, rule: str) -> None:
    with pytest.raises(FetchBlocked) as info:
        await fetcher.fetch(server.url(f"/to?location={location}"))
    assert info.value.rule.startswith(rule)
    scheme, _, rest = location.partition("://")
    assert info.value.url.startswith(scheme) and rest.split("/")[0] in info.value.url  # the refused hop
    assert rule.split(" (")[0] in str(info.value)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://127.0.0.1:70/1", "ftp://127.0.0.1/",
                                 "data:text/plain,hello"])
async def test_non_http_schemes_are_refused(fetcher: SafeFetcher, url: str) -> None:
    with pytest.raises(FetchBlocked) as info:
        await fetcher.fetch(url)
    assert info.value.rule == f"scheme {url.split(':')[0]}"


async def test_strict_mode_refuses_loopback_and_private_addresses(server: LocalServer) -> None:
    resolver = site_resolver(**{"intranet.test": [["10.0.0.5"]]})
    async with SafeFetcher(strict=True, resolver=resolver, connect_timeout_s=2.0) as fetcher:
        with pytest.raises(FetchBlocked) as literal:
            await fetcher.fetch(server.url("/page"))
        with pytest.raises(FetchBlocked) as named:
            await fetcher.fetch(server.url("/page", host="site.test"))
        with pytest.raises(FetchBlocked) as private:
            await fetcher.fetch("http://intranet.test/")
    assert literal.value.rule == "loopback address 127.0.0.1 (strict mode)"
    assert named.value.rule == "loopback address 127.0.0.1 (strict mode)"
    assert private.value.rule == "private address 10.0.0.5 (strict mode)"
    assert (private.value.address, private.value.url) == ("10.0.0.5", "http://intranet.test/")
    assert server.seen == []


async def test_dns_rebinding_cannot_move_a_connection_to_an_unvetted_address(server: LocalServer) -> None:
    # A rebinding DNS server: a harmless answer when checked, the metadata address afterwards.
    resolver = StagedResolver({"rebind.test": [["127.0.0.1"], ["169.254.169.254"]]})
    async with SafeFetcher(resolver=resolver, connect_timeout_s=2.0) as fetcher:
        first = await fetcher.fetch(server.url("/close", host="rebind.test"))
        # Resolved exactly once, and connected to that vetted answer: no second lookup to swap
        # (the system resolver does not know "rebind.test", so success also shows nothing else
        # resolved the name).
        assert resolver.calls == ["rebind.test"]
        assert first.address == "127.0.0.1"
        # The server closed that connection, so the next fetch resolves again, gets the
        # metadata address, and is refused before any connection is made.
        with pytest.raises(FetchBlocked) as info:
            await fetcher.fetch(server.url("/close", host="rebind.test"))
    assert info.value.rule == "link-local/metadata address 169.254.169.254"
    assert info.value.address == "169.254.169.254"
    assert resolver.calls == ["rebind.test", "rebind.test"]
    assert len(server.seen) == 1


async def test_when_one_vetted_address_refuses_the_next_one_is_tried(server: LocalServer) -> None:
    # The server listens on 127.0.0.1 only, so 127.0.0.2 refuses the connection.
    resolver = StagedResolver({"two.test": [["127.0.0.2", "127.0.0.1"]]})
    async with SafeFetcher(resolver=resolver, connect_timeout_s=5.0) as fetcher:
        result = await fetcher.fetch(server.url("/page", host="two.test"))
    assert (result.body, result.address) == (PAGE, "127.0.0.1")


async def test_a_name_with_any_refused_address_is_refused_whole(server: LocalServer) -> None:
    resolver = StagedResolver({"mixed.test": [["127.0.0.1", "169.254.169.254"]]})
    async with SafeFetcher(resolver=resolver) as fetcher:
        with pytest.raises(FetchBlocked, match=r"169\.254\.169\.254"):
            await fetcher.fetch(server.url("/page", host="mixed.test"))
    assert server.seen == []


async def test_a_stalled_body_hits_the_read_timeout(server: LocalServer) -> None:
    async with SafeFetcher(read_timeout_s=0.3) as fetcher:
        started = time.monotonic()
        with pytest.raises(FetchTimeout) as info:
            await fetcher.fetch(server.url("/stall"))
    assert (info.value.phase, info.value.timeout_s) == ("read", 0.3)
    assert time.monotonic() - started < 5


async def test_a_dripping_body_hits_the_total_timeout(server: LocalServer) -> None:
    async with SafeFetcher(read_timeout_s=5.0, total_timeout_s=0.5) as fetcher:
        started = time.monotonic()
        with pytest.raises(FetchTimeout) as info:
            await fetcher.fetch(server.url("/drip"))
    assert info.value.phase == "total"
    assert time.monotonic() - started < 5


async def test_a_resolver_that_never_answers_hits_the_connect_timeout() -> None:
    never = anyio.Event()

    async def hanging(host: str, port: int) -> Sequence[str]:
        await never.wait()
        return []

    async with SafeFetcher(resolver=hanging, connect_timeout_s=0.2) as fetcher:
        with pytest.raises(FetchTimeout) as info:
            await fetcher.fetch("http://slow-dns.test/")
    assert info.value.phase == "connect"


async def test_an_unknown_name_and_a_closed_port_are_unreachable(fetcher: SafeFetcher) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    with pytest.raises(FetchUnreachable) as dns:
        await fetcher.fetch("http://no-such-host.test/")
    with pytest.raises(FetchUnreachable) as refused:
        await fetcher.fetch(f"http://127.0.0.1:{closed_port}/")
    assert (dns.value.reason, dns.value.host) == ("dns", "no-such-host.test")
    assert refused.value.reason == "refused"


@pytest.mark.parametrize("status", [404, 500])
async def test_error_statuses_raise_with_the_status(fetcher: SafeFetcher, server: LocalServer, status: int) -> None:
    with pytest.raises(FetchHTTPError) as info:
        await fetcher.fetch(server.url(f"/status?code={status}"))
    assert info.value.status == status
    assert info.value.hint


async def test_proxy_environment_variables_are_ignored(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:1")
    async with SafeFetcher(resolver=site_resolver()) as fetcher:
        result = await fetcher.fetch(server.url("/page", host="site.test"))
    assert result.body == PAGE
    assert server.seen[-1].requestline == "GET /page HTTP/1.1"  # origin-form: sent direct, not to a proxy


async def test_an_explicit_proxy_is_used_and_targets_are_still_vetted(server: LocalServer) -> None:
    with LocalServer() as proxy:
        async with SafeFetcher(resolver=site_resolver(), proxy=f"http://127.0.0.1:{proxy.port}") as fetcher:
            result = await fetcher.fetch(server.url("/page", host="site.test"))
            with pytest.raises(FetchBlocked):
                await fetcher.fetch("http://meta.test/latest/")
    assert result.body == PAGE
    assert [s.requestline for s in proxy.seen] == [f"GET http://site.test:{server.port}/page HTTP/1.1"]
    assert server.seen == []


async def test_cookies_are_not_carried_between_fetches(fetcher: SafeFetcher, server: LocalServer) -> None:
    await fetcher.fetch(server.url("/set-cookie"))
    echoed = json.loads((await fetcher.fetch(server.url("/echo"))).body)
    assert "cookie" not in echoed


@pytest.mark.parametrize("url", ["not a url", "http://", "http://exa mple.com/"])
async def test_an_invalid_url_is_a_fetch_error(fetcher: SafeFetcher, url: str) -> None:
    with pytest.raises(FetchError):
        await fetcher.fetch(url)


# TLS: the connection is pinned to the vetted IP, yet SNI and certificate checks use the name.

@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def tls_server(ca: trustme.CA, name: str) -> LocalServer:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(name).configure_cert(context)
    return LocalServer(tls=context)


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


async def test_https_to_a_pinned_address_sends_sni_and_verifies_the_host_name(ca: trustme.CA) -> None:
    resolver = StagedResolver({"secure.test": [["127.0.0.1"]]})
    with tls_server(ca, "secure.test") as server:
        async with SafeFetcher(resolver=resolver, ssl_context=trusting(ca)) as fetcher:
            result = await fetcher.fetch(server.url("/page", host="secure.test"))
    assert (result.body, result.address) == (PAGE, "127.0.0.1")
    assert server.sni == ["secure.test"]
    assert server.seen[0].headers["host"] == f"secure.test:{server.port}"


async def test_https_with_a_certificate_for_another_name_is_refused(ca: trustme.CA) -> None:
    resolver = StagedResolver({"secure.test": [["127.0.0.1"]]})
    with tls_server(ca, "other.test") as server:
        async with SafeFetcher(resolver=resolver, ssl_context=trusting(ca)) as fetcher:
            with pytest.raises(FetchUnreachable) as info:
                await fetcher.fetch(server.url("/page", host="secure.test"))
    assert info.value.reason == "tls"
    assert server.seen == []


# The default resolver, on names the hosts file and libc answer without any DNS traffic.

async def test_the_system_resolver_is_used_by_default_and_its_answers_are_vetted(server: LocalServer) -> None:
    async with SafeFetcher(connect_timeout_s=5.0) as fetcher:
        result = await fetcher.fetch(server.url("/page", host="localhost"))
    assert (result.body, result.address) == (PAGE, "127.0.0.1")
    async with SafeFetcher(strict=True, connect_timeout_s=5.0) as strict:
        with pytest.raises(FetchBlocked) as named:
            await strict.fetch(server.url("/page", host="localhost"))
        with pytest.raises(FetchBlocked) as decimal:  # libc reads 2130706433 as 127.0.0.1
            await strict.fetch(server.url("/page", host="2130706433"))
    assert "loopback address" in named.value.rule
    assert decimal.value.rule == "loopback address 127.0.0.1 (strict mode)"

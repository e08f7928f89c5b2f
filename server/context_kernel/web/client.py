"""SafeFetcher: one GET of a web page under the fetch safety rules (spec section 4).

One `httpx.AsyncClient` per server, built over `PinnedTransport` (see `transport.py` for how
connections are pinned to vetted addresses). This module owns the rules above the socket:
the scheme and literal-IP check of every hop, following redirects by hand so each hop is
checked (at most `max_redirects`), the body cap enforced while streaming on *decoded* bytes,
and mapping httpx's errors to ours.
"""

from __future__ import annotations

import importlib.util
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Self

import httpcore
import httpx

from .. import __version__
from ..activity import printed
from .address_rules import check_address, check_scheme, parse_ip
from .decoding import BodyTooLarge, BoundedDecoder, DecodeFailed, UnsupportedEncoding, accept_encoding
from .errors import FetchError, FetchHTTPError, FetchTimeout, FetchTooLarge, FetchTooManyRedirects, FetchUnreachable
from .transport import NameNotResolved, PinnedTransport, Resolver, system_resolver

MB = 1024 * 1024
DEFAULT_USER_AGENT = f"context-kernel/{__version__}"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
DISCARD_BODY_BYTES = 64 * 1024  # unwanted bodies up to this (declared) size are read so the connection is kept


@dataclass(frozen=True)
class FetchResult:
    """A fetched page. `body` is decoded (no Content-Encoding left); `redirects` lists each hop's URL."""

    url: str
    final_url: str
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    content_type: str  # the Content-Type header as sent ("text/html; charset=utf-8"), "" if none
    body: bytes
    redirects: list[str] = field(default_factory=list)
    address: str = ""  # the IP the final response came from (the proxy's, when one is configured)
    elapsed_s: float = 0.0

    @property
    def media_type(self) -> str:
        """"text/html" from "text/html; charset=utf-8"."""
        return self.content_type.split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for param in self.content_type.split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"').lower()
        return None


@dataclass(frozen=True)
class _Page:
    status: int
    headers: dict[str, str]
    body: bytes
    address: str


class SafeFetcher:
    """Fetches pages; built once by the composition root and closed with the server."""

    def __init__(self, *, strict: bool = False, max_body_bytes: int = 50 * MB, max_redirects: int = 5,
                 connect_timeout_s: float = 10.0, read_timeout_s: float = 30.0, write_timeout_s: float = 10.0,
                 pool_timeout_s: float = 10.0, total_timeout_s: float = 120.0,
                 max_connections: int = 20, max_keepalive_connections: int = 10,
                 resolver: Resolver | None = None, user_agent: str = DEFAULT_USER_AGENT,
                 proxy: str | None = None, ssl_context: ssl.SSLContext | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        """`transport` replaces the pinned transport (tests only: it bypasses address pinning).

        `proxy` is the only way a proxy is used: proxy environment variables are ignored.
        `ssl_context` replaces the default (certifi) one, e.g. to trust a private CA.
        """
        self.strict = strict
        self.max_body_bytes = max_body_bytes
        self.max_redirects = max_redirects
        self.total_timeout_s = total_timeout_s
        self.http2 = importlib.util.find_spec("h2") is not None
        self._timeout = httpx.Timeout(connect=connect_timeout_s, read=read_timeout_s,
                                      write=write_timeout_s, pool=pool_timeout_s)
        self._pinned: PinnedTransport | None = None
        if transport is None:
            self._pinned = PinnedTransport(
                strict=strict, resolver=resolver or system_resolver, ssl_context=ssl_context, http2=self.http2,
                limits=httpx.Limits(max_connections=max_connections,
                                    max_keepalive_connections=max_keepalive_connections),
                proxy=proxy)
            transport = self._pinned
        self._proxied = proxy is not None
        self._client = httpx.AsyncClient(
            transport=transport, timeout=self._timeout, follow_redirects=False,
            trust_env=False,  # no HTTP(S)_PROXY, NO_PROXY, SSL_CERT_FILE or .netrc from the environment
            cookies=_no_cookies(),
            headers={"User-Agent": user_agent, "Accept-Encoding": accept_encoding(),
                     "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8"})

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """The server lifespan calls this once at shutdown: closes pooled connections."""
        await self._client.aclose()

    async def fetch(self, url: str, check_url: Callable[[str], None] | None = None) -> FetchResult:
        """GET `url`, following up to `max_redirects` redirects, each hop checked.

        `check_url` (the user's WebFetch deny rules) is called with every hop's URL before it is
        requested and raises to stop the fetch, so a redirect cannot lead around a rule.

        Raises FetchBlocked (with `.rule`), FetchTooLarge, FetchTimeout, FetchHTTPError (4xx/5xx),
        FetchTooManyRedirects, FetchUnreachable, or FetchError for anything else.
        """
        started = time.monotonic()
        current = _parse(url)
        redirects: list[str] = []
        while True:
            if check_url is not None:
                check_url(str(current))
            try:
                outcome = await self._hop(current, started)
            except FetchError as exc:
                exc.url = str(current)  # errors from the backend know only the host
                raise
            if isinstance(outcome, _Page):
                return FetchResult(
                    url=url, final_url=str(current), status=outcome.status, headers=outcome.headers,
                    content_type=outcome.headers.get("content-type", ""), body=outcome.body,
                    redirects=redirects, address=outcome.address, elapsed_s=time.monotonic() - started)
            if len(redirects) >= self.max_redirects:
                raise FetchTooManyRedirects(
                    f"Stopped at {current}: more than {self.max_redirects} redirects (the limit is "
                    f"{self.max_redirects})", url=str(current), limit=self.max_redirects, redirects=redirects)
            redirects.append(str(outcome))
            current = outcome

    async def _hop(self, url: httpx.URL, started: float) -> httpx.URL | _Page:
        """One request: the redirect target to follow next, or the page."""
        self._vet_url(url)
        self._check_deadline(url, started)
        if self._proxied and self._pinned is not None:
            await self._vet_behind_proxy(url)
        with _mapped_errors(url, self._timeout):
            async with self._client.stream("GET", url) as response:
                location = response.headers.get("location")
                if response.status_code in REDIRECT_STATUSES and location is not None:
                    await _discard_body(response)
                    return _join(url, location)
                if response.status_code >= 400:
                    await _discard_body(response)
                    raise FetchHTTPError(
                        f"{url} answered {response.status_code} {response.reason_phrase}".rstrip(),
                        url=str(url), status=response.status_code, reason=response.reason_phrase)
                address = _peer(response)  # before reading: a closed socket no longer knows its peer
                body = await self._read_capped(response, url, started)
                return _Page(response.status_code, dict(response.headers.items()), body, address)

    def _vet_url(self, url: httpx.URL) -> None:
        check_scheme(url.scheme, url=str(url))
        if not url.host:
            raise FetchError(f"{url} has no host", url=str(url), hint="Pass a full http(s) URL.")
        ip = parse_ip(url.host)
        if ip is not None:  # names are vetted where they are resolved, in the backend
            check_address(ip, strict=self.strict, url=str(url))

    async def _vet_behind_proxy(self, url: httpx.URL) -> None:
        # The proxy resolves the target itself; this is the best we can do: refuse names that
        # resolve to refused addresses now (see the limitation in transport.py).
        assert self._pinned is not None
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            await self._pinned.backend.vetted_addresses(url.raw_host.decode("ascii"), port,
                                                        timeout=self._timeout.connect)
        except httpcore.ConnectTimeout as exc:
            raise FetchTimeout(f"Resolving {url.host} timed out", url=str(url), phase="connect",
                               timeout_s=self._timeout.connect) from exc
        except httpcore.ConnectError as exc:
            raise FetchUnreachable(f"Could not fetch {url}: {exc}", url=str(url), host=url.host,
                                   reason=_connect_reason(exc)) from exc

    async def _read_capped(self, response: httpx.Response, url: httpx.URL, started: float) -> bytes:
        """The decoded body, refused as soon as it is known to pass the cap.

        A Content-Length over the cap is refused before reading; otherwise raw and decoded byte
        counts are checked per network chunk, so at most one chunk past the cap is ever read.
        """
        cap = self.max_body_bytes
        declared = _content_length(response)
        if declared is not None and declared > cap:
            raise FetchTooLarge(f"{url} is {declared} bytes (Content-Length), over the {cap}-byte limit",
                                url=str(url), limit=cap, declared=declared)
        try:
            decoder = BoundedDecoder(response.headers.get("content-encoding", ""), limit=cap)
        except UnsupportedEncoding as exc:
            raise FetchError(f"{url} sent Content-Encoding {exc}, which we did not ask for",
                             url=str(url)) from exc
        parts: list[bytes] = []
        received = 0
        async for chunk in response.aiter_raw():
            received += len(chunk)
            printed(f"{received / 1024:,.0f} KB received")
            if received > cap:
                raise FetchTooLarge(f"{url} sent more than the {cap}-byte limit", url=str(url), limit=cap,
                                    received=received)
            try:
                parts.append(decoder.decode(chunk))
            except BodyTooLarge as exc:
                raise FetchTooLarge(f"{url} decompresses to more than the {cap}-byte limit", url=str(url),
                                    limit=cap, received=exc.produced) from exc
            except DecodeFailed as exc:
                raise FetchError(f"{url} sent a corrupt compressed body: {exc}", url=str(url)) from exc
            # Each read is bounded by the read timeout; this bounds a server that drips bytes.
            self._check_deadline(url, started)
        return b"".join(parts)

    def _check_deadline(self, url: httpx.URL, started: float) -> None:
        if time.monotonic() - started > self.total_timeout_s:
            raise FetchTimeout(f"Fetching {url} took longer than {self.total_timeout_s}s in total", url=str(url),
                               phase="total", timeout_s=self.total_timeout_s)


# "127.0.0.1:8701/x", "localhost:8701", "docs.example.org/guide": a host (and port) with the scheme
# left out. httpx reads "localhost:8701" as scheme "localhost"; the agent only forgot "http://".
_NO_SCHEME = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[\w-]+(?:\.[\w-]+)*)(?::\d{1,5})?(?:[/?#].*)?", re.DOTALL)


def _parse(url: str) -> httpx.URL:
    if "://" not in url and _NO_SCHEME.fullmatch(url.strip()) and ("." in url or ":" in url or "[" in url):
        raise FetchError(f"{url} has no scheme: add http:// (or https://) in front of it", url=url,
                         hint=f"Fetch http://{url.strip()} (or https://{url.strip()}) instead.")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchError(f"Not a valid URL: {url!r} ({exc})", url=str(url), hint="Pass a full http(s) URL.") from exc
    check_scheme(parsed.scheme, url=url)
    return parsed


def _join(url: httpx.URL, location: str) -> httpx.URL:
    try:
        return url.join(location)
    except httpx.InvalidURL as exc:
        raise FetchError(f"{url} redirects to an invalid URL {location!r}", url=str(url)) from exc


async def _discard_body(response: httpx.Response) -> None:
    """Reads a small unwanted body (a redirect's, an error page's) so its connection can be reused.

    A body left unread costs the connection: httpcore closes an HTTP/1.1 one, and the pinned
    transport retires an HTTP/2 one (see transport.py). Bodies of unknown or larger size are
    left unread; so is one whose read fails, which costs only the connection.
    """
    declared = _content_length(response)
    if declared is None or declared > DISCARD_BODY_BYTES:
        return
    try:
        async for _ in response.aiter_raw():
            pass
    except httpx.HTTPError:
        pass


def _content_length(response: httpx.Response) -> int | None:
    try:
        return int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None


def _peer(response: httpx.Response) -> str:
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    return str(peer[0]) if peer else ""


def _no_cookies() -> CookieJar:
    # One client serves every fetch: a cookie one site sets must not ride along on later
    # fetches, so the jar refuses to store any.
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


_TIMEOUT_PHASES: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ConnectTimeout, "connect"), (httpx.ReadTimeout, "read"),
    (httpx.WriteTimeout, "write"), (httpx.PoolTimeout, "pool"),
)


@contextmanager
def _mapped_errors(url: httpx.URL, timeout: httpx.Timeout) -> Iterator[None]:
    """httpx's errors as ours, each with the URL and what went wrong."""
    try:
        yield
    except httpx.TimeoutException as exc:
        phase = next((name for kind, name in _TIMEOUT_PHASES if isinstance(exc, kind)), "read")
        seconds = getattr(timeout, phase)
        raise FetchTimeout(f"Fetching {url}: no {phase} progress within {seconds}s", url=str(url),
                           phase=phase, timeout_s=seconds) from exc
    except httpx.ConnectError as exc:
        reason = _connect_reason(exc)
        raise FetchUnreachable(f"Could not connect to {url.host} ({reason}): {exc}", url=str(url),
                               host=url.host, reason=reason) from exc
    except httpx.HTTPError as exc:
        raise FetchError(f"Fetching {url} failed: {type(exc).__name__}: {exc}", url=str(url)) from exc


def _connect_reason(exc: BaseException) -> str:
    """"dns", "tls", "refused" or "network", read from the chain of causes."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return "tls"
        if isinstance(seen, ConnectionRefusedError):
            return "refused"
        if isinstance(seen, NameNotResolved | socket.gaierror):
            return "dns"
        seen = seen.__cause__ or seen.__context__
    return "network"

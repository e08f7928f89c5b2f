"""An httpx transport that connects only to addresses the fetch rules have vetted.

How the IP pinning works (the DNS-rebinding defence):

httpcore opens every TCP connection through a *network backend*
(`httpcore.AsyncNetworkBackend.connect_tcp(host, port, ...)`), and it passes the URL's host
name there, not an address. `PinnedBackend` is that backend: it resolves the name itself with
the injected resolver, vets every address the name resolves to (`guard.refusal`), then connects
to a vetted IP literal, so the operating system never resolves the name a second time. There is
no window between "checked" and "connected" in which a rebinding DNS server could swap the
answer. After connecting it vets the socket's peer address once more.

Everything above the socket still sees the host name: httpcore keys its pool by
(scheme, host, port), sends `Host: <name>` (`:authority` in HTTP/2), and starts TLS with
`server_hostname=<name>`, so SNI and certificate verification are against the name, exactly as
without pinning. The alternative (rewrite the URL to the IP and pass the `sni_hostname`
extension) would key the pool by IP and let a TLS connection verified for one name be reused
for another name on the same IP; this way has no such corner.

httpx has no argument for a network backend, so `PinnedTransport` is a small
`httpx.AsyncBaseTransport` over an `httpcore.AsyncConnectionPool` (or `AsyncHTTPProxy`) built
with the backend; it mirrors httpx's own `AsyncHTTPTransport`, public APIs only.

With an explicit proxy the backend connects only to the proxy (which is trusted configuration)
and the proxy resolves the target itself; the client vets the target's addresses before each
request, but the proxy's own lookup is outside our control.

HTTP/2 bodies we stop reading (the body cap, an unread redirect or error body): httpcore does not
reset the stream when such a response is closed (https://github.com/encode/httpcore/issues/943,
closed as wontfix), so the server goes on sending into the stream window httpcore granted
(16 MiB), and the connection-level window those unread bytes use up is never given back: after a
capped download or two the pooled connection can carry no more data and the next fetch to that
host hangs until its read timeout. HTTP/1.1 has no such problem because httpcore closes a
connection whose body was not read to the end. So every pool connection is wrapped in
`_RetiringConnection`: an HTTP/2 response closed before its end *retires* its connection. It
takes no new requests, the streams already on it finish normally (concurrent fetches to the same
host share one HTTP/2 connection, so closing it at once would break them), and once it is idle it
reports itself expired and the pool closes it, which stops the abandoned download. Limit: while
other streams are still running on a retired connection, the abandoned stream's data keeps
arriving and can use up the shared window, so when more than ~16 MiB of an abandoned body is
still unsent, those other streams can stall until their read timeout.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import anyio
import httpcore
import httpx

from .address_rules import IPAddress, check_address, parse_ip

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""async (host, port) -> IP address strings. Injected so tests can stage any DNS answer."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The default resolver: the event loop's getaddrinfo (via anyio), addresses in its order."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class NameNotResolved(httpcore.ConnectError):
    """The host name has no usable address; a ConnectError so httpcore treats it as one."""


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Resolves, vets, and connects to the vetted IP. `trusted` endpoints (a proxy) skip vetting."""

    def __init__(self, *, strict: bool, resolver: Resolver,
                 trusted: Iterable[tuple[str, int]] = ()) -> None:
        self._strict = strict
        self._resolver = resolver
        self._trusted = frozenset(trusted)
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        if (host, port) in self._trusted:
            return await self._inner.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                                 socket_options=socket_options)
        # One deadline covers resolving and every connect attempt: `timeout` is httpx's connect timeout.
        deadline = None if timeout is None else anyio.current_time() + timeout
        addresses = await self.vetted_addresses(host, port, timeout=timeout)
        failure: Exception | None = None
        for ip in addresses:
            remaining = None if deadline is None else deadline - anyio.current_time()
            if remaining is not None and remaining <= 0:
                raise httpcore.ConnectTimeout(f"connecting to {host} took longer than {timeout}s")
            try:
                stream = await self._inner.connect_tcp(str(ip), port, timeout=remaining,
                                                       local_address=local_address, socket_options=socket_options)
            except httpcore.ConnectError as exc:
                failure = exc  # refused or unreachable: try the next vetted address
                continue
            await self._check_peer(stream, host)
            return stream
        assert failure is not None
        raise failure

    async def vetted_addresses(self, host: str, port: int, *, timeout: float | None) -> list[IPAddress]:
        """Every address `host` resolves to, all vetted; FetchBlocked if any one is refused.

        A name with one refused address is refused whole, so a DNS answer mixing a public and
        a metadata address cannot steer us by its ordering or by a failing first connect.
        """
        literal = parse_ip(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                with anyio.fail_after(timeout):
                    answer = await self._resolver(host, port)
            except TimeoutError as exc:
                raise httpcore.ConnectTimeout(f"resolving {host} took longer than {timeout}s") from exc
            except OSError as exc:
                raise NameNotResolved(f"could not resolve {host}: {exc}") from exc
            addresses = []
            for raw in answer:
                ip = parse_ip(raw)
                if ip is None:
                    raise NameNotResolved(f"the resolver answered {raw!r} for {host}, not an IP address")
                addresses.append(ip)
            if not addresses:
                raise NameNotResolved(f"could not resolve {host}: no addresses")
        for ip in addresses:
            check_address(ip, strict=self._strict, url=host)
        return addresses

    async def _check_peer(self, stream: httpcore.AsyncNetworkStream, host: str) -> None:
        # The address actually connected, as the socket reports it: the last word on where we are.
        peer = stream.get_extra_info("server_addr")
        ip = parse_ip(str(peer[0])) if peer else None
        try:
            if ip is None:
                raise httpcore.ConnectError(f"cannot tell which address {host} connected to")
            check_address(ip, strict=self._strict, url=host)
        except BaseException:
            await stream.aclose()
            raise

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("fetches never use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


class PinnedTransport(httpx.AsyncBaseTransport):
    """httpx transport over an httpcore pool whose connections go through `PinnedBackend`."""

    def __init__(self, *, strict: bool, resolver: Resolver, ssl_context: ssl.SSLContext | None = None,
                 http2: bool = False, limits: httpx.Limits | None = None,
                 proxy: str | None = None) -> None:
        ssl_context = ssl_context or httpx.create_ssl_context(trust_env=False)
        limits = limits or httpx.Limits()
        common = {
            "ssl_context": ssl_context,
            "max_connections": limits.max_connections,
            "max_keepalive_connections": limits.max_keepalive_connections,
            "keepalive_expiry": limits.keepalive_expiry,
            "http1": True,
            "http2": http2,
        }
        self._pool: httpcore.AsyncConnectionPool
        if proxy is None:
            self.backend = PinnedBackend(strict=strict, resolver=resolver)
            # httpcore types each keyword on its own; `common` is one dict of them, checked here
            self._pool = _Pool(network_backend=self.backend, **common)  # type: ignore[arg-type]  # checked above
            return
        url = httpx.URL(proxy)
        if url.scheme not in ("http", "https"):
            raise ValueError(f"proxy must be an http:// or https:// URL, not {proxy!r}")
        port = url.port or (443 if url.scheme == "https" else 80)
        self.backend = PinnedBackend(strict=strict, resolver=resolver,
                                     trusted=[(url.raw_host.decode("ascii"), port)])
        self._pool = _ProxyPool(
            proxy_url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=port, target=url.raw_path),
            network_backend=self.backend, **common)  # type: ignore[arg-type]  # as above

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors(request):
            response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(status_code=response.status, headers=response.headers,
                              stream=_ResponseStream(response.stream, request), extensions=response.extensions)

    async def aclose(self) -> None:
        await self._pool.aclose()


class _RetiringConnection(httpcore.AsyncConnectionInterface):
    """A pool connection that retires once an HTTP/2 response on it is closed before its end.

    Retired: not available for new requests, and expired as soon as it is idle, so the pool
    closes it (`AsyncConnectionInterface.has_expired`: "the connection is in a state where it
    should be closed"). Everything else is the wrapped connection's.
    """

    def __init__(self, inner: httpcore.AsyncConnectionInterface) -> None:
        self._inner = inner
        self.retired = False

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        response = await self._inner.handle_async_request(request)
        if response.extensions.get("http_version") != b"HTTP/2":
            return response  # httpcore closes an HTTP/1.1 connection whose body was left unread
        assert isinstance(response.stream, AsyncIterable)
        return httpcore.Response(status=response.status, headers=response.headers,
                                 content=_WatchedBody(response.stream, self), extensions=response.extensions)

    def retire(self) -> None:
        self.retired = True

    async def aclose(self) -> None:
        await self._inner.aclose()

    def info(self) -> str:
        return self._inner.info() + (", retired" if self.retired else "")

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return self._inner.can_handle_request(origin)

    def is_available(self) -> bool:
        return not self.retired and self._inner.is_available()

    def has_expired(self) -> bool:
        return (self.retired and self._inner.is_idle()) or self._inner.has_expired()

    def is_idle(self) -> bool:
        return self._inner.is_idle()

    def is_closed(self) -> bool:
        return self._inner.is_closed()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._inner!r}{' retired' if self.retired else ''}>"


class _WatchedBody:
    """An HTTP/2 response body that retires its connection if it is closed before the end."""

    def __init__(self, stream: AsyncIterable[bytes], connection: _RetiringConnection) -> None:
        self._stream = stream
        self._connection = connection
        self._ended = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part
        self._ended = True

    async def aclose(self) -> None:
        if not self._ended:
            self._connection.retire()  # before the pool looks at its connections on this close
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            await aclose()


class _Pool(httpcore.AsyncConnectionPool):
    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        return _RetiringConnection(super().create_connection(origin))


class _ProxyPool(httpcore.AsyncHTTPProxy):
    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        return _RetiringConnection(super().create_connection(origin))


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes], request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors(self._request):
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            with _as_httpx_errors(self._request):
                await aclose()


# httpcore's exceptions and the httpx ones callers of an httpx transport expect; most specific first.
_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _as_httpx_errors(request: httpx.Request) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core_type, httpx_type in _HTTPX_ERRORS:
            if isinstance(exc, core_type):
                raise httpx_type(str(exc), request=request) from exc
        raise  # our own FetchBlocked, and anything unexpected, pass through unchanged

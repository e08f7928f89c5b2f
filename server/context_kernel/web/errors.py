"""The errors of fetching a URL. Each one says which rule or limit stopped the fetch.

The HTTP machinery's own errors (httpx, httpcore, zlib, brotli) are mapped to these in
`client.py` with `raise ... from exc`, so callers never catch library exceptions.
"""

from __future__ import annotations

from ..errors import ContextKernelError


class FetchError(ContextKernelError):
    """A URL could not be fetched. `url` is the URL of the hop that failed."""

    hint = "Check the URL, or fetch another page."

    def __init__(self, message: str, *, url: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        # Set after construction by the fetcher when the error is raised below the request
        # (in the connection backend), where only the host is known.
        self.url = url


class FetchBlocked(FetchError):
    """The fetch safety rules refuse the URL or an address it resolves to.

    `rule` names the rule ("scheme gopher", "link-local/metadata address 169.254.169.254");
    `address` is the refused IP, or None when the scheme or URL shape was refused.
    """

    hint = "Only public http(s) pages can be fetched; this target is refused on purpose, do not retry it."

    def __init__(self, message: str, *, rule: str, url: str = "", address: str | None = None,
                 hint: str = "") -> None:
        super().__init__(message, url=url, hint=hint)
        self.rule = rule
        self.address = address


class FetchTooLarge(FetchError):
    """The body (after decompression) is larger than the cap.

    `declared` is the Content-Length when the server sent one that was already over the cap;
    `received` is how many bytes were read before reading stopped.
    """

    hint = "The page is larger than the fetch size limit; fetch a smaller or more specific page."

    def __init__(self, message: str, *, url: str = "", limit: int, received: int = 0,
                 declared: int | None = None) -> None:
        super().__init__(message, url=url)
        self.limit = limit
        self.received = received
        self.declared = declared


class FetchTimeout(FetchError):
    """A phase of the fetch took longer than its timeout.

    `phase` is "connect" (DNS included), "read", "write", "pool" or "total".
    """

    hint = "The server is slow or not answering; try again later or fetch another page."

    def __init__(self, message: str, *, url: str = "", phase: str, timeout_s: float | None) -> None:
        super().__init__(message, url=url)
        self.phase = phase
        self.timeout_s = timeout_s


class FetchUnreachable(FetchError):
    """No connection could be made: the name does not resolve, the port refuses, TLS fails.

    `reason` is "dns", "refused", "tls" or "network".
    """

    hint = "Check the host name in the URL; the site may be down."

    def __init__(self, message: str, *, url: str = "", host: str = "", reason: str = "network") -> None:
        super().__init__(message, url=url)
        self.host = host
        self.reason = reason


class FetchHTTPError(FetchError):
    """The server answered with a 4xx or 5xx status. The body is not read."""

    def __init__(self, message: str, *, url: str = "", status: int, reason: str = "") -> None:
        super().__init__(message, url=url, hint=_status_hint(status))
        self.status = status
        self.reason = reason


class FetchTooManyRedirects(FetchError):
    """The redirect chain is longer than the limit. `redirects` lists the hops followed."""

    hint = "The URL redirects too many times (possibly a loop); fetch the final page directly."

    def __init__(self, message: str, *, url: str = "", limit: int, redirects: list[str]) -> None:
        super().__init__(message, url=url)
        self.limit = limit
        self.redirects = redirects


def _status_hint(status: int) -> str:
    # The caller (an agent) acts differently on "wrong URL", "needs login" and "try later".
    if status in (401, 403):
        return "The page needs a login or refuses automated clients; it cannot be fetched."
    if status in (404, 410):
        return "The page does not exist; check the URL."
    if status == 429 or status >= 500:
        return "The server is overloaded or failing; try again later."
    return "The server refused the request; check the URL."


class UnsupportedContent(FetchError):
    """The body is binary (image, PDF, archive, ...): nothing in it can be indexed as text."""

    hint = "Look for an HTML or text version of it, or download the file and read it with code in a kernel."

    def __init__(self, content_type: str, detected: str | None = None) -> None:
        what = f"{detected} (served as {content_type})" if detected else f"{content_type} content"
        super().__init__(f"cannot index {what}: only text, HTML, JSON and markdown are indexed")
        self.content_type = content_type
        self.detected = detected

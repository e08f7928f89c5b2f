"""The REST side of a kernel gateway: `/api`, `/api/kernelspecs` and `/api/kernels` over our httpx.

Jupyter Enterprise Gateway, Jupyter Kernel Gateway and Jupyter Server all speak this API (the
kernel's messages go over `/api/kernels/{id}/channels`, kernels/gateway_kernel.py). jupyter_server's
own gateway client is not used: it is configured as a process-wide traitlets singleton, pulls in
the whole of jupyter_server and tornado, and drives its kernels from tornado's loop, not our pool's.

One `Gateway` per server: one connection pool for all its kernels, closed with the app.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import anyio
import httpx

from ..errors import KernelError, KernelStartFailed, KernelUnavailable
from ..settings import GatewaySettings
from ..setup.installation import add_extra_command
from .gateway_reaper import Reaper


def missing_client() -> str | None:
    """Why this installation cannot drive a gateway's kernels (the `gateway` extra is absent), naming the
    command that adds it; None when it can. Asked at start: a kernel start would fail on the import."""
    if importlib.util.find_spec("websockets") is not None:
        return None
    return (f"--gateway-url needs the `gateway` extra (websockets), which is not installed here: "
            f"{add_extra_command('gateway')} — then start it again")


class GatewayError(KernelError):
    """The gateway could not be reached, or answered a kernel request with an error."""


class Gateway:
    def __init__(self, config: GatewaySettings) -> None:
        self.config = config
        self.url = config.url.rstrip("/")
        self._client: httpx.AsyncClient | None = None
        self._specs: dict[str, dict[str, Any]] | None = None
        self.reaper = Reaper(self.url, self.headers, config.request_timeout_s)

    @property
    def headers(self) -> dict[str, str]:
        """Sent with every REST request and with the WebSocket upgrade."""
        header = self.config.auth_header
        return {header[0]: header[1]} if header else {}

    def _http(self) -> httpx.AsyncClient:
        # Made on first use, not in __init__: nothing opens a socket before a kernel is asked for.
        if self._client is None:
            timeout = httpx.Timeout(self.config.request_timeout_s, connect=self.config.connect_timeout_s)
            self._client = httpx.AsyncClient(base_url=self.url, headers=self.headers, timeout=timeout,
                                             limits=httpx.Limits(max_connections=32, max_keepalive_connections=8))
        return self._client

    async def _request(self, method: str, path: str, *, timeout: float | None = None,
                       body: dict[str, Any] | None = None) -> httpx.Response:
        try:
            kwargs: dict[str, Any] = {"json": body} if body is not None else {}
            if timeout is not None:
                kwargs["timeout"] = httpx.Timeout(timeout, connect=self.config.connect_timeout_s)
            return await self._http().request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise GatewayError(f"the kernel gateway at {self.url} did not answer {method} {path}: "
                               f"{exc or type(exc).__name__}",
                               hint="check --gateway-url and that the gateway runs") from exc

    def _check(self, response: httpx.Response, what: str) -> None:
        if response.is_success:
            return
        hint = ("check --gateway-token / --gateway-auth-header" if response.status_code in (401, 403)
                else "the gateway's own log says more")
        raise GatewayError(f"the kernel gateway at {self.url} refused to {what}: HTTP {response.status_code} "
                           f"{_message(response)}", hint=hint)

    async def info(self) -> dict[str, Any]:
        """`GET /api`: the server's version, and Enterprise Gateway's `gateway_version` when it is one."""
        response = await self._request("GET", "/api")
        self._check(response, "say its version")
        data: dict[str, Any] = response.json()
        return data

    async def kernelspecs(self, *, refresh: bool = False) -> dict[str, dict[str, Any]]:
        """name → kernelspec (`spec`: argv, language, display_name), as the gateway offers them."""
        if self._specs is None or refresh:
            response = await self._request("GET", "/api/kernelspecs")
            self._check(response, "list its kernelspecs")
            specs = response.json().get("kernelspecs", {})
            self._specs = {name: entry.get("spec", {}) for name, entry in specs.items()}
        return self._specs

    async def spec(self, kernel_name: str, language: str) -> dict[str, Any]:
        """The gateway's kernelspec for `kernel_name`; a clear error naming the gateway when it has none."""
        specs = await self.kernelspecs()
        if kernel_name not in specs:
            specs = await self.kernelspecs(refresh=True)  # kernelspecs may be added while we run
        if kernel_name not in specs:
            offered = ", ".join(sorted(specs)) or "none"
            raise KernelUnavailable(
                f"the kernel gateway at {self.url} has no kernel named {kernel_name!r} (it offers: {offered})",
                language=language,
                install=f"install the {kernel_name!r} kernelspec on the gateway, or pass kernel: one of {offered}",
            )
        return specs[kernel_name]

    async def start_kernel(self, kernel_name: str, env: dict[str, str], timeout: float) -> str:
        """`POST /api/kernels`; the gateway answers once the kernel process (or pod) is up. Returns its id."""
        response = await self._request("POST", "/api/kernels", timeout=timeout,
                                       body={"name": kernel_name, "env": env})
        if not response.is_success:
            reason = _message(response)
            raise KernelStartFailed(f"the kernel gateway at {self.url} did not start kernel {kernel_name!r}: "
                                    f"HTTP {response.status_code} {reason}",
                                    kernel_name=kernel_name, log_tail=reason, hint=_start_hint(response, reason))
        return str(response.json()["id"])

    async def kernel(self, kernel_id: str) -> dict[str, Any] | None:
        """`GET /api/kernels/{id}`: the kernel's model, or None when the gateway no longer has it."""
        response = await self._request("GET", f"/api/kernels/{quote(kernel_id)}")
        if response.status_code == 404:
            return None
        self._check(response, f"describe kernel {kernel_id}")
        data: dict[str, Any] = response.json()
        return data

    async def kernels(self) -> list[dict[str, Any]]:
        """`GET /api/kernels`: every kernel the gateway runs (Enterprise Gateway: needs `list_kernels`)."""
        response = await self._request("GET", "/api/kernels")
        self._check(response, "list its kernels")
        data: list[dict[str, Any]] = response.json()
        return data

    async def interrupt(self, kernel_id: str) -> None:
        response = await self._request("POST", f"/api/kernels/{quote(kernel_id)}/interrupt")
        self._check(response, f"interrupt kernel {kernel_id}")

    async def restart(self, kernel_id: str, timeout: float) -> None:
        response = await self._request("POST", f"/api/kernels/{quote(kernel_id)}/restart", timeout=timeout)
        self._check(response, f"restart kernel {kernel_id}")

    async def delete(self, kernel_id: str, timeout: float) -> bool:
        """`DELETE /api/kernels/{id}`; True when it is gone (404 counts: someone else ended it)."""
        response = await self._request("DELETE", f"/api/kernels/{quote(kernel_id)}", timeout=timeout)
        return response.is_success or response.status_code == 404

    def channels_url(self, kernel_id: str, session_id: str) -> str:
        """The kernel's WebSocket; the session id lets the server buffer messages across a reconnect."""
        parts = urlsplit(self.url)
        scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
        return urlunsplit((scheme, parts.netloc, f"{parts.path}/api/kernels/{quote(kernel_id)}/channels",
                           f"session_id={quote(session_id)}", ""))

    async def aclose(self) -> None:
        """App exit, after the pool shut every kernel down: the reaper ends whatever that missed."""
        with anyio.CancelScope(shield=True):
            if self._client is not None:
                client, self._client = self._client, None
                await client.aclose()
            await anyio.to_thread.run_sync(self.reaper.close)


def _start_hint(response: httpx.Response, reason: str) -> str:
    """What to do about a refused kernel start, in terms of our flags (the gateway's reason names its own)."""
    if response.status_code == 403 and "KERNEL_USERNAME" in reason:
        # Enterprise Gateway with authorized_users (or unauthorized_users): the kernel's user is taken from
        # KERNEL_USERNAME in the start request's env, else the gateway's own user.
        return ("the gateway starts kernels only for the users it authorizes: restart context-kernel with "
                "--gateway-kernel-env KERNEL_USERNAME=<your user on the gateway> (a setting of the server: whoever "
                "started it adds the flag)")
    if response.status_code in (401, 403):
        return "check --gateway-token / --gateway-auth-header"
    return "the gateway's own log says more"


def _message(response: httpx.Response) -> str:
    """The gateway's own reason (Jupyter servers answer errors as JSON with `message` or `reason`)."""
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.text[:500]
    if isinstance(data, dict):
        return str(data.get("message") or data.get("reason") or data)[:500]
    return str(data)[:500]

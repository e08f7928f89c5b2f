"""`ctx_doctor` / `context-kernel doctor` with `--gateway-url`: the gateway, its version and kernelspecs, each
started on it and given a line of code, as the server would start it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from ..kernels.factory import KernelFactory
from ..kernels.languages import LANGUAGES
from .checks import KERNEL_CHECK_CONCURRENCY, Check, run_hello

if TYPE_CHECKING:
    from ..kernels.gateway_client import Gateway
    from ..settings import Settings


async def check_gateway(settings: Settings, gateway: Gateway, start: bool, kernels: KernelFactory) -> list[Check]:
    from ..errors import ContextKernelError

    try:
        info = await gateway.info()
        specs = await gateway.kernelspecs(refresh=True)
    except ContextKernelError as exc:
        return [Check("FAIL", "gateway", f"{gateway.url}: {exc.message} — {exc.hint}")]
    version = (f"Enterprise Gateway {info['gateway_version']} (server {info.get('version', '?')})"
               if "gateway_version" in info else f"Jupyter server {info.get('version', '?')}")
    checks = [Check("OK", "gateway", f"{gateway.url}: {version}; kernelspecs: {', '.join(sorted(specs)) or 'none'}"
                    " — every kernel runs there")]
    by_kernel = {lang.kernel_name: lang.name for lang in LANGUAGES.values()}
    results: dict[str, Check] = {}
    limiter = anyio.Semaphore(KERNEL_CHECK_CONCURRENCY)

    async def one(name: str, spec: dict[str, Any]) -> None:
        language = by_kernel.get(name) or str(spec.get("language", "")).lower()
        subject = f"{language or '?':<10} kernel {name} (gateway)"
        hello = LANGUAGES[language].hello if language in LANGUAGES else ""
        if not start or not hello:
            why = "not started: --no-start" if not start else "no test line for this language"
            results[name] = Check("OK", subject, f"offered by the gateway ({why})")
            return
        async with limiter:
            results[name] = await _run_hello(settings, kernels, name, subject, hello)

    async with anyio.create_task_group() as tg:
        for name, spec in specs.items():
            tg.start_soon(one, name, spec)
    return checks + [results[name] for name in sorted(results)]


async def _run_hello(settings: Settings, kernels: KernelFactory, name: str, subject: str, hello: str) -> Check:
    from ..errors import ContextKernelError

    try:
        failed, seconds = await run_hello(kernels(name), settings.kernel_start_timeout_s, hello)
    except ContextKernelError as exc:
        return Check("FAIL", subject, exc.message[:300] + (f" — {exc.hint}" if exc.hint else ""))
    if failed is None:
        return Check("OK", subject, f"starts and runs code in {seconds:.1f} s")
    return Check("FAIL", subject, f"started but the test cell failed: {failed[:300]}")

"""The Settings of a command, built from the environment it was started with and from its flags. The
defaults are Settings' own (settings.py); cli/__init__.py hands each command `dict(os.environ)`."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's constant: the hook path imports nothing it does not need
if TYPE_CHECKING:
    import argparse

    from ..settings import GatewaySettings, Settings

PYTHON_VAR = "CONTEXT_KERNEL_PYTHON"


def _env_int(env: dict[str, str], name: str, default: int) -> int:
    try:
        return int(env.get(name, default))
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {env[name]!r}") from None


def _env_float(env: dict[str, str], name: str, default: float) -> float:
    try:
        return float(env.get(name, default))
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {env[name]!r}") from None


def _fetch_proxy(env: dict[str, str]) -> str | None:
    # Proxy variables are ignored unless explicitly enabled: a proxy sees every fetched URL.
    if env.get("CONTEXT_KERNEL_FETCH_USE_PROXY", "") in ("", "0"):
        return None
    return env.get("HTTPS_PROXY") or env.get("https_proxy") or env.get("HTTP_PROXY") or env.get("http_proxy")


def _python_choice(args: argparse.Namespace, env: dict[str, str]) -> tuple[str | None, str]:
    """The explicit interpreter (`--python` wins over CONTEXT_KERNEL_PYTHON), a path made absolute here."""
    from pathlib import Path

    value, source = getattr(args, "python", None), "--python"
    if not value:
        value, source = env.get(PYTHON_VAR) or None, PYTHON_VAR
    if value and (os.sep in value or value.startswith((".", "~"))):
        value = str(Path(value).expanduser().absolute())
    return value, source


def _gateway(args: argparse.Namespace, env: dict[str, str]) -> GatewaySettings | None:
    """`--gateway-url` and its auth and timeouts; the flags win over the variables (as jupyter_server names them)."""
    from ..settings import GatewaySettings

    url = getattr(args, "gateway_url", None) or env.get("CONTEXT_KERNEL_GATEWAY_URL") or env.get("JUPYTER_GATEWAY_URL")
    if not url:
        return None
    if not url.startswith(("http://", "https://")):
        raise SystemExit(f"--gateway-url must start with http:// or https://, got {url!r}")
    header: tuple[str, str] | None = None
    raw = getattr(args, "gateway_auth_header", None) or env.get("CONTEXT_KERNEL_GATEWAY_AUTH_HEADER")
    token = (getattr(args, "gateway_token", None) or env.get("CONTEXT_KERNEL_GATEWAY_TOKEN")
             or env.get("JUPYTER_GATEWAY_AUTH_TOKEN"))
    if raw:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise SystemExit(f"--gateway-auth-header must be 'Name: value', got {raw!r}")
        header = (name.strip(), value.strip())
    elif token:
        header = ("Authorization", f"token {token}")  # the scheme Jupyter servers accept
    request = getattr(args, "gateway_request_timeout", None) or _env_float(
        env, "CONTEXT_KERNEL_GATEWAY_REQUEST_TIMEOUT_S", 60.0)
    connect = _env_float(env, "CONTEXT_KERNEL_GATEWAY_CONNECT_TIMEOUT_S", 10.0)
    kernel_env: dict[str, str] = {}
    for item in getattr(args, "gateway_kernel_env", None) or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"--gateway-kernel-env must be NAME=VALUE, got {item!r}")
        kernel_env[name] = value
    return GatewaySettings(url=url, auth_header=header, connect_timeout_s=connect, request_timeout_s=request,
                           kernel_env=kernel_env)


def build_settings(args: argparse.Namespace, env: dict[str, str]) -> Settings:
    from pathlib import Path

    from ..locations import claude_user_settings, data_home, project_dir, user_dirs, user_home
    from ..settings import (
        DEFAULT_FETCH_MAX_BODY,
        DEFAULT_HARD_CAP,
        DEFAULT_IDLE_CULL_S,
        DEFAULT_MAX_DB_MB,
        DEFAULT_MAX_KERNEL_LOGS,
        DEFAULT_MAX_KERNELS,
        DEFAULT_PREWARM,
        DEFAULT_PROGRESS_S,
        DEFAULT_RESEND_AFTER_S,
        DEFAULT_RETENTION_DAYS,
        DEFAULT_RETURN_BUDGET,
        DEFAULT_TIMEOUT_MS,
        MAX_TIMEOUT_MS,
        Settings,
    )

    python, python_from = _python_choice(args, env)
    return Settings(
        home=data_home(env),
        project_dir=project_dir(env, explicit=getattr(args, "project", None)),
        return_budget=_env_int(env, "CONTEXT_KERNEL_RETURN_BUDGET", DEFAULT_RETURN_BUDGET),
        hard_output_cap=_env_int(env, "CONTEXT_KERNEL_OUTPUT_CAP", DEFAULT_HARD_CAP),
        default_timeout_ms=_env_int(env, "CONTEXT_KERNEL_TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
        max_timeout_ms=_env_int(env, "CONTEXT_KERNEL_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS),
        kernel_idle_cull_s=float(_env_int(env, "CONTEXT_KERNEL_IDLE_CULL_S", int(DEFAULT_IDLE_CULL_S))),
        max_kernels=getattr(args, "max_kernels", None)
        or _env_int(env, "CONTEXT_KERNEL_MAX_KERNELS", DEFAULT_MAX_KERNELS),
        prewarm_kernels=_env_int(env, "CONTEXT_KERNEL_PREWARM", DEFAULT_PREWARM),
        progress_interval_s=_env_float(env, "CONTEXT_KERNEL_PROGRESS_S", DEFAULT_PROGRESS_S),
        fetch_strict=env.get("CTX_FETCH_STRICT", "") not in ("", "0"),
        fetch_max_body=_env_int(env, "CONTEXT_KERNEL_FETCH_MAX_BYTES", DEFAULT_FETCH_MAX_BODY),
        fetch_proxy=_fetch_proxy(env),
        base_env=dict(env),
        user_home=user_home(env),
        claude_settings=claude_user_settings(env),
        client_dirs=user_dirs(env),
        retention_days=_env_float(env, "CONTEXT_KERNEL_RETENTION_DAYS", DEFAULT_RETENTION_DAYS),
        resend_after_s=_env_float(env, "CONTEXT_KERNEL_RESEND_AFTER_S", DEFAULT_RESEND_AFTER_S),
        max_db_mb=_env_int(env, "CONTEXT_KERNEL_MAX_DB_MB", DEFAULT_MAX_DB_MB),
        max_kernel_logs=_env_int(env, "CONTEXT_KERNEL_MAX_KERNEL_LOGS", DEFAULT_MAX_KERNEL_LOGS),
        python=python,
        python_from=python_from,
        semantic=env.get("CONTEXT_KERNEL_SEMANTIC", "1").strip().lower() not in ("0", "off", "false", "no"),
        semantic_model=Path(env["CONTEXT_KERNEL_SEMANTIC_MODEL"]).expanduser()
        if env.get("CONTEXT_KERNEL_SEMANTIC_MODEL") else None,
        semantic_nice=min(19, max(0, _env_int(env, "CONTEXT_KERNEL_SEMANTIC_NICE", 19))),
        gateway=_gateway(args, env),
    )

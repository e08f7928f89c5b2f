"""The Settings of a command, built from the environment it was started with and from its flags.

`ENV_TABLE` is the one list of the variables the command line reads: each with the Settings field it
sets, its default (Settings' own, or the constant Settings takes it from) and what it means. The readers
below take names and defaults from it (a name not in it is a KeyError), and
tests/architecture/test_readme_env_table.py holds docs/configuration.md's table to it. cli/__init__.py
hands each command `dict(os.environ)`.

Imported only by the commands that build Settings, never on a hook's path: the table's defaults import
settings.py (pathlib, dataclasses), which a hook's first step must not pay for.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from ..datadir import DATA_DIR_VAR
from ..hooks.deferral import DEFER_AFTER_S, DEFERRED_NICENESS
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
    GatewaySettings,
    Settings,
)

PYTHON_VAR = "CONTEXT_KERNEL_PYTHON"
NO_DEFAULT = "—"  # how docs/configuration.md says a variable has no default value


def _field_default(cls: type[Settings] | type[GatewaySettings], name: str) -> int | float | bool:
    """The default of a field that has no module constant of its own (`semantic_nice = 19`)."""
    default = next(f.default for f in fields(cls) if f.name == name)
    if not isinstance(default, (int, float)):  # bool is an int
        raise TypeError(f"{cls.__name__}.{name} has no plain default")
    return default


@dataclass(frozen=True)
class EnvVar:
    """One variable the command line reads: a row of docs/configuration.md's table."""

    name: str
    field: str | None
    """The Settings field it sets (`gateway.…`: GatewaySettings'); None: the hooks', read from the `env` the
    CLI hands them (hooks/hook_cli.py)."""
    default: int | float | bool | None
    """What the field gets when the variable is unset; None: no value of its own (found otherwise, or none)."""
    meaning: str
    shown: str | None = None
    """The default as docs/configuration.md words it, where that is not the number `default`."""

    @property
    def documented_default(self) -> str:
        """The default as the docs' table must say it (`1800.0` is written `1800`)."""
        if self.shown is not None:
            return self.shown
        if isinstance(self.default, float) and self.default.is_integer():
            return str(int(self.default))
        return str(self.default)


ENV_TABLE: tuple[EnvVar, ...] = (
    EnvVar(DATA_DIR_VAR, "home", None, "the data directory (datadir.data_dir reads it, for the hooks too)",
           shown="$XDG_DATA_HOME/context-kernel"),
    EnvVar(PYTHON_VAR, "python", None, "the python kernel's interpreter (`--python` wins)", shown="found"),
    EnvVar("CONTEXT_KERNEL_RETURN_BUDGET", "return_budget", DEFAULT_RETURN_BUDGET,
           "bytes of output a reply carries before it is trimmed to head + tail"),
    EnvVar("CONTEXT_KERNEL_OUTPUT_CAP", "hard_output_cap", DEFAULT_HARD_CAP,
           "bytes a cell may print before it is interrupted"),
    EnvVar("CONTEXT_KERNEL_TIMEOUT_MS", "default_timeout_ms", DEFAULT_TIMEOUT_MS,
           "a cell's timeout when the call gives none"),
    EnvVar("CONTEXT_KERNEL_MAX_TIMEOUT_MS", "max_timeout_ms", MAX_TIMEOUT_MS, "longer timeouts are clamped to this"),
    # Whole seconds: the variable has always been read as an integer, though the field is a float.
    EnvVar("CONTEXT_KERNEL_IDLE_CULL_S", "kernel_idle_cull_s", int(DEFAULT_IDLE_CULL_S),
           "an idle kernel is shut down after this many seconds"),
    EnvVar("CONTEXT_KERNEL_MAX_KERNELS", "max_kernels", DEFAULT_MAX_KERNELS,
           "live kernels at most (`--max-kernels` wins)"),
    # The CLI's default, not Settings' (0 there: a test starts no kernel it did not ask for).
    EnvVar("CONTEXT_KERNEL_PREWARM", "prewarm_kernels", DEFAULT_PREWARM,
           "kernels started once a client connects, before its first call; 0: none"),
    EnvVar("CONTEXT_KERNEL_PROGRESS_S", "progress_interval_s", DEFAULT_PROGRESS_S,
           "seconds between progress notifications while a cell runs"),
    EnvVar("CONTEXT_KERNEL_RETENTION_DAYS", "retention_days", DEFAULT_RETENTION_DAYS,
           "records of sessions idle longer than this go, and old logs; 0 keeps everything"),
    EnvVar("CONTEXT_KERNEL_RESEND_AFTER_S", "resend_after_s", DEFAULT_RESEND_AFTER_S,
           "a section ctx_search sent longer ago than this is sent again instead of only named"),
    EnvVar("CONTEXT_KERNEL_MAX_DB_MB", "max_db_mb", DEFAULT_MAX_DB_MB,
           "a bigger database loses its least recently active sessions too; 0: no cap"),
    EnvVar("CONTEXT_KERNEL_MAX_KERNEL_LOGS", "max_kernel_logs", DEFAULT_MAX_KERNEL_LOGS,
           "kernel log files kept, newest first; 0: no cap"),
    EnvVar("CONTEXT_KERNEL_SEMANTIC", "semantic", _field_default(Settings, "semantic"),
           "0/off/false/no: ctx_search by words only, even with the extra installed", shown="on when installed"),
    EnvVar("CONTEXT_KERNEL_LIVE_NOTEBOOKS", "live_notebooks", _field_default(Settings, "live_notebooks"),
           "0/off: no live notebook; a directory: where each session's live notebook is written",
           shown="on, in $CONTEXT_KERNEL_HOME/exports/live"),
    EnvVar("CONTEXT_KERNEL_SEMANTIC_MODEL", "semantic_model", None,
           "a transformer's directory instead of the static table", shown="WordLlama's static table"),
    EnvVar("CONTEXT_KERNEL_SEMANTIC_NICE", "semantic_nice", _field_default(Settings, "semantic_nice"),
           "the embedder's priority, 0-19 (19: only on a core nothing else wants)"),
    EnvVar("CONTEXT_KERNEL_GATEWAY_URL", "gateway.url", None,
           "run every kernel on this kernel gateway (`--gateway-url` wins)", shown="local kernels"),
    EnvVar("JUPYTER_GATEWAY_URL", "gateway.url", None, "jupyter_server's name for it, read after ours",
           shown="local kernels"),
    EnvVar("CONTEXT_KERNEL_GATEWAY_TOKEN", "gateway.auth_header", None,
           "the gateway's token, sent as `Authorization: token …` (`--gateway-token` wins)", shown=NO_DEFAULT),
    EnvVar("JUPYTER_GATEWAY_AUTH_TOKEN", "gateway.auth_header", None, "jupyter_server's name for it, read after ours",
           shown=NO_DEFAULT),
    EnvVar("CONTEXT_KERNEL_GATEWAY_AUTH_HEADER", "gateway.auth_header", None,
           "`Name: value`, sent instead of the token (`--gateway-auth-header` wins)", shown=NO_DEFAULT),
    EnvVar("CONTEXT_KERNEL_GATEWAY_REQUEST_TIMEOUT_S", "gateway.request_timeout_s",
           _field_default(GatewaySettings, "request_timeout_s"),
           "limit of one REST call to the gateway (`--gateway-request-timeout` wins)"),
    EnvVar("CONTEXT_KERNEL_GATEWAY_CONNECT_TIMEOUT_S", "gateway.connect_timeout_s",
           _field_default(GatewaySettings, "connect_timeout_s"),
           "limit of connecting to the gateway"),
    EnvVar("CTX_FETCH_STRICT", "fetch_strict", _field_default(Settings, "fetch_strict"),
           "1: fetches also refuse loopback and private addresses", shown="off"),
    EnvVar("CONTEXT_KERNEL_FETCH_MAX_BYTES", "fetch_max_body", DEFAULT_FETCH_MAX_BODY,
           "a fetched body's cap, on decoded bytes"),
    EnvVar("CONTEXT_KERNEL_FETCH_USE_PROXY", "fetch_proxy", False,
           "1: fetches use the proxy variables; otherwise they are ignored", shown="off"),
    # The proxy, first set wins (in this order): a proxy sees every fetched URL, so only when asked for.
    EnvVar("HTTPS_PROXY", "fetch_proxy", None, "the fetch proxy, with CONTEXT_KERNEL_FETCH_USE_PROXY=1",
           shown=NO_DEFAULT),
    EnvVar("https_proxy", "fetch_proxy", None, "the same, lower case", shown=NO_DEFAULT),
    EnvVar("HTTP_PROXY", "fetch_proxy", None, "the same, read after the HTTPS ones", shown=NO_DEFAULT),
    EnvVar("http_proxy", "fetch_proxy", None, "the same, lower case", shown=NO_DEFAULT),
    EnvVar("CONTEXT_KERNEL_HOOK_LOG", None, False, "1: every hook logs its duration to logs/hooks.log",
           shown="off"),
    EnvVar("CONTEXT_KERNEL_HOOK_DEFER_AFTER_S", None, DEFER_AFTER_S,
           "a hook this many seconds old when it could answer defers its recording to a child"),
    EnvVar("CONTEXT_KERNEL_HOOK_DEFER_NICE", None, DEFERRED_NICENESS, "that deferred recording's nice value, 0-19"),
)
VARIABLES: dict[str, EnvVar] = {row.name: row for row in ENV_TABLE}
_OFF = ("0", "off", "false", "no")


def _int(env: Mapping[str, str], name: str) -> int:
    default = VARIABLES[name].default  # KeyError: only a variable of the table is read
    if not isinstance(default, int):
        raise TypeError(f"ENV_TABLE gives {name} no integer default")  # a bug of the table, not the user's
    try:
        return int(env.get(name, default))
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {env[name]!r}") from None


def _float(env: Mapping[str, str], name: str) -> float:
    default = VARIABLES[name].default
    if not isinstance(default, (int, float)):
        raise TypeError(f"ENV_TABLE gives {name} no number for a default")
    try:
        return float(env.get(name, default))
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {env[name]!r}") from None


def _text(env: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` set to a non-empty value (their order is the precedence), else None."""
    for name in names:
        value = env.get(VARIABLES[name].name)  # KeyError: only a variable of the table is read
        if value:
            return value
    return None


def _switch(env: Mapping[str, str], name: str) -> bool:
    """On when set to anything but `0`; unset or empty: the table's default."""
    row = VARIABLES[name]
    value = env.get(row.name, "")
    return value != "0" if value else bool(row.default)


def _fetch_proxy(env: Mapping[str, str]) -> str | None:
    # Proxy variables are ignored unless explicitly enabled: a proxy sees every fetched URL.
    if not _switch(env, "CONTEXT_KERNEL_FETCH_USE_PROXY"):
        return None
    return _text(env, "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")


def _semantic(env: Mapping[str, str]) -> bool:
    """CONTEXT_KERNEL_SEMANTIC: any value but an explicit off keeps semantic recall on."""
    row = VARIABLES["CONTEXT_KERNEL_SEMANTIC"]
    value = env.get(row.name)
    return bool(row.default) if value is None else value.strip().lower() not in _OFF


def _live(env: Mapping[str, str]) -> tuple[bool, Path | None]:
    """CONTEXT_KERNEL_LIVE_NOTEBOOKS: off, on (the default folder), or the folder to write them in."""
    row = VARIABLES["CONTEXT_KERNEL_LIVE_NOTEBOOKS"]
    value = (env.get(row.name) or "").strip()
    if not value or value.lower() in ("1", "on", "true", "yes"):
        return bool(row.default), None
    if value.lower() in _OFF:
        return False, None
    return True, Path(value).expanduser().absolute()


def _python_choice(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str | None, str]:
    """The explicit interpreter (`--python` wins over CONTEXT_KERNEL_PYTHON), a path made absolute here."""
    value, source = getattr(args, "python", None), "--python"
    if not value:
        value, source = _text(env, PYTHON_VAR), PYTHON_VAR
    if value and (os.sep in value or value.startswith((".", "~"))):
        value = str(Path(value).expanduser().absolute())
    return value, source


def _auth_header(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str, str] | None:
    """`--gateway-auth-header` as given, else the token in the scheme Jupyter servers accept."""
    raw = getattr(args, "gateway_auth_header", None) or _text(env, "CONTEXT_KERNEL_GATEWAY_AUTH_HEADER")
    if raw:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise SystemExit(f"--gateway-auth-header must be 'Name: value', got {raw!r}")
        return name.strip(), value.strip()
    token = getattr(args, "gateway_token", None) or _text(env, "CONTEXT_KERNEL_GATEWAY_TOKEN",
                                                          "JUPYTER_GATEWAY_AUTH_TOKEN")
    return ("Authorization", f"token {token}") if token else None


def _gateway(args: argparse.Namespace, env: Mapping[str, str]) -> GatewaySettings | None:
    """`--gateway-url` and its auth and timeouts; the flags win over the variables (as jupyter_server names them)."""
    url = getattr(args, "gateway_url", None) or _text(env, "CONTEXT_KERNEL_GATEWAY_URL", "JUPYTER_GATEWAY_URL")
    if not url:
        return None
    if not url.startswith(("http://", "https://")):
        raise SystemExit(f"--gateway-url must start with http:// or https://, got {url!r}")
    header = _auth_header(args, env)
    request = getattr(args, "gateway_request_timeout", None) or _float(env, "CONTEXT_KERNEL_GATEWAY_REQUEST_TIMEOUT_S")
    connect = _float(env, "CONTEXT_KERNEL_GATEWAY_CONNECT_TIMEOUT_S")
    kernel_env: dict[str, str] = {}
    for item in getattr(args, "gateway_kernel_env", None) or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"--gateway-kernel-env must be NAME=VALUE, got {item!r}")
        kernel_env[name] = value
    return GatewaySettings(url=url, auth_header=header, connect_timeout_s=connect, request_timeout_s=request,
                           kernel_env=kernel_env)


def build_settings(args: argparse.Namespace, env: dict[str, str]) -> Settings:
    python, python_from = _python_choice(args, env)
    model = _text(env, "CONTEXT_KERNEL_SEMANTIC_MODEL")
    live = _live(env)
    return Settings(
        home=data_home(env),
        project_dir=project_dir(env, explicit=getattr(args, "project", None)),
        return_budget=_int(env, "CONTEXT_KERNEL_RETURN_BUDGET"),
        hard_output_cap=_int(env, "CONTEXT_KERNEL_OUTPUT_CAP"),
        default_timeout_ms=_int(env, "CONTEXT_KERNEL_TIMEOUT_MS"),
        max_timeout_ms=_int(env, "CONTEXT_KERNEL_MAX_TIMEOUT_MS"),
        kernel_idle_cull_s=float(_int(env, "CONTEXT_KERNEL_IDLE_CULL_S")),
        max_kernels=getattr(args, "max_kernels", None) or _int(env, "CONTEXT_KERNEL_MAX_KERNELS"),
        prewarm_kernels=_int(env, "CONTEXT_KERNEL_PREWARM"),
        progress_interval_s=_float(env, "CONTEXT_KERNEL_PROGRESS_S"),
        fetch_strict=_switch(env, "CTX_FETCH_STRICT"),
        fetch_max_body=_int(env, "CONTEXT_KERNEL_FETCH_MAX_BYTES"),
        fetch_proxy=_fetch_proxy(env),
        base_env=dict(env),
        user_home=user_home(env),
        claude_settings=claude_user_settings(env),
        client_dirs=user_dirs(env),
        retention_days=_float(env, "CONTEXT_KERNEL_RETENTION_DAYS"),
        resend_after_s=_float(env, "CONTEXT_KERNEL_RESEND_AFTER_S"),
        max_db_mb=_int(env, "CONTEXT_KERNEL_MAX_DB_MB"),
        max_kernel_logs=_int(env, "CONTEXT_KERNEL_MAX_KERNEL_LOGS"),
        python=python,
        python_from=python_from,
        semantic=_semantic(env),
        semantic_model=Path(model).expanduser() if model else None,
        semantic_nice=min(19, max(0, _int(env, "CONTEXT_KERNEL_SEMANTIC_NICE"))),
        gateway=_gateway(args, env),
        live_notebooks=live[0],
        live_dir_override=live[1],
    )

"""`--gateway-url` and its auth: flags win over the variables, the token becomes Jupyter's header, bad values
stop the CLI with one line; doctor names a gateway it cannot reach."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from context_kernel.cli import build_settings


def args(**values: object) -> argparse.Namespace:
    base: dict[str, object] = {"gateway_url": None, "gateway_token": None, "gateway_auth_header": None,
                               "gateway_request_timeout": None, "gateway_kernel_env": [], "project": None}
    base.update(values)
    return argparse.Namespace(**base)


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"CONTEXT_KERNEL_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), **extra}


def test_no_gateway_means_local_kernels(tmp_path: Path) -> None:
    assert build_settings(args(project=str(tmp_path)), env(tmp_path)).gateway is None


def test_the_variables_give_the_url_and_the_token_as_jupyter_s_authorization_header(tmp_path: Path) -> None:
    gateway = build_settings(args(project=str(tmp_path)), env(
        tmp_path, CONTEXT_KERNEL_GATEWAY_URL="http://eg:8888/", CONTEXT_KERNEL_GATEWAY_TOKEN="s3cret",
        CONTEXT_KERNEL_GATEWAY_REQUEST_TIMEOUT_S="7")).gateway
    assert gateway is not None and gateway.url == "http://eg:8888/"
    assert gateway.auth_header == ("Authorization", "token s3cret") and gateway.request_timeout_s == 7.0


def test_flags_win_and_a_header_of_one_s_own_replaces_the_token(tmp_path: Path) -> None:
    gateway = build_settings(
        args(project=str(tmp_path), gateway_url="https://eg.example", gateway_auth_header="X-Api-Key: k1",
             gateway_request_timeout=3.0, gateway_kernel_env=["KERNEL_USERNAME=alice", "KERNEL_X=a=b"]),
        env(tmp_path, JUPYTER_GATEWAY_URL="http://other", JUPYTER_GATEWAY_AUTH_TOKEN="t")).gateway
    assert gateway is not None and gateway.url == "https://eg.example"
    assert gateway.auth_header == ("X-Api-Key", "k1") and gateway.request_timeout_s == 3.0
    assert gateway.kernel_env == {"KERNEL_USERNAME": "alice", "KERNEL_X": "a=b"}


@pytest.mark.parametrize(("flags", "message"), [
    (["--gateway-url", "ftp://eg"], "must start with http:// or https://"),
    (["--gateway-url", "http://eg", "--gateway-auth-header", "no-colon"], "must be 'Name: value'"),
    (["--gateway-url", "http://eg", "--gateway-kernel-env", "NOVALUE"], "must be NAME=VALUE"),
])
def test_bad_gateway_values_stop_serve_with_one_line(tmp_path: Path, flags: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "context_kernel", "serve", "--project", str(tmp_path), *flags],
                          env={**os.environ, **env(tmp_path)}, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr


def test_doctor_names_a_gateway_it_cannot_reach_and_fails(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    done = subprocess.run([sys.executable, "-m", "context_kernel", "doctor", "--project", str(tmp_path),
                           "--gateway-url", url], env={**os.environ, **env(tmp_path)}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert f"[FAIL] gateway: {url}: the kernel gateway at {url} did not answer GET /api" in done.stdout

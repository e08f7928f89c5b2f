"""The command line as scripts use it: --version, documented defaults, exit statuses, one-line
failures, and an HTTP server that outlives the shell that started it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from tests.serving.http_harness import tools_call

CLI = [sys.executable, "-m", "context_kernel"]


def run(tmp_path: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path)


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    from importlib import metadata

    done = run(tmp_path, "--version")
    assert (done.returncode, done.stdout) == (0, f"context-kernel {metadata.version('context-kernel')}\n")


def test_serve_help_documents_every_option_and_the_defaults(tmp_path: Path) -> None:
    text = " ".join(run(tmp_path, "serve", "--help").stdout.split())
    for option in ("--transport", "--host", "--port", "--project", "--max-kernels", "--python", "--no-auth",
                   "--allow-remote", "--allowed-host", "--allowed-origin"):
        assert re.search(rf"{option}\b[^-]*\S", text), option
    assert "(default: 8765)" in text and "(default: 127.0.0.1)" in text and "(default: stdio)" in text
    assert "(default: None)" not in text


def test_doctor_exits_1_when_a_line_is_fail_and_says_so_in_its_help(tmp_path: Path) -> None:
    assert "1 when one is" in " ".join(run(tmp_path, "doctor", "--help").stdout.split())
    done = run(tmp_path, "doctor", "--no-start", "--python", str(tmp_path / "no-such-python"))
    assert "[FAIL] interpreter" in done.stdout
    assert done.returncode == 1


def test_a_port_in_use_is_one_line_naming_the_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run(tmp_path, "serve", "--transport", "http", "--port", str(port))
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1] == (f"context-kernel serve: port {port} on 127.0.0.1 is already in use (another "
                         "`context-kernel serve`?); stop it, or choose another with --port (--port 0 takes a "
                         "free one and prints it)")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
def test_a_port_outside_0_to_65535_is_a_usage_error_naming_the_range(tmp_path: Path, port: str) -> None:
    # 99999 used to listen on 34463 (the kernel keeps the low 16 bits) and -1 blamed the host.
    done = run(tmp_path, "serve", "--transport", "http", f"--port={port}", timeout=30)
    assert done.returncode == 2 and "listening" not in done.stderr
    assert done.stderr.splitlines()[-1] == (f"context-kernel serve: error: argument --port: {port} is not a TCP "
                                            "port: give 1-65535, or 0 for a free one (printed at start)")


def test_an_http_server_started_with_nohup_keeps_serving_after_its_shell_exits(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "data")}
    command = " ".join([*map(str, CLI), "serve", "--transport", "http", "--port", "0"])
    # The shell lives until the server is up (as a terminal would), then exits.
    script = (f"nohup {command} > {log} 2>&1 & echo $!; "
              f"for i in $(seq 600); do grep -q 'listening on' {log} && exit 0; sleep 0.1; done; exit 1")
    shell = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path)
    pid = int(shell.stdout.strip())
    try:
        assert shell.returncode == 0, log.read_text()
        found = re.search(r"listening on (http://\S+)", log.read_text())
        assert found is not None
        token = (tmp_path / "data" / "http-token").read_text().strip()
        headers, body = tools_call("ctx_stats", {})
        reply = httpx2.post(found.group(1), headers={**headers, "Authorization": f"Bearer {token}"},
                            content=body, timeout=30)
        assert reply.status_code == 200, (reply.text, log.read_text())
        assert "result" in json.dumps(reply.json())
        os.kill(pid, 0)  # still alive
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)

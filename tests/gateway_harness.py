"""A real Jupyter Enterprise Gateway on 127.0.0.1 for the gateway tests.

Enterprise Gateway 3.3 pins jupyter_client<7, which our server cannot share an environment with
(jupyter_client 8), so it lives in its own virtual environment, `.venv-gateway` at the repository
root (the Makefile makes it; `make setup`). The gateway offers two kernelspecs, both run by this
test interpreter: python3 (ipykernel) and ck-bash (our shell kernel), so the kernels have the
same ipykernel the local tests use and the comparison is about where they run, nothing else.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
GATEWAY_VENV = REPO / ".venv-gateway"
START_WAIT_S = 60.0
READY_LINE = "is available at"


def gateway_executable() -> Path:
    exe = GATEWAY_VENV / "bin" / "jupyter-enterprisegateway"
    if not exe.exists():
        raise RuntimeError(f"Jupyter Enterprise Gateway is not installed in {GATEWAY_VENV.name}/: run `make setup` "
                           "(it makes that environment: pip install jupyter_enterprise_gateway)")
    return exe


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_kernelspecs(root: Path, extra: dict[str, dict[str, Any]] | None = None) -> Path:
    kernels = root / "kernels"
    specs: dict[str, dict[str, Any]] = {
        "python3": {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "Python 3 (gateway)", "language": "python", "interrupt_mode": "signal"},
        "ck-bash": {"argv": [sys.executable, "-m", "context_kernel.kernel_processes.bash", "-f", "{connection_file}"],
                    "display_name": "Bash (gateway)", "language": "bash", "interrupt_mode": "signal",
                    "env": {"PYDEVD_DISABLE_FILE_VALIDATION": "1"}},
    }
    specs.update(extra or {})
    for name, spec in specs.items():
        (kernels / name).mkdir(parents=True, exist_ok=True)
        (kernels / name / "kernel.json").write_text(json.dumps(spec))
    return root


@dataclass
class RunningGateway:
    url: str
    token: str
    process: subprocess.Popen[bytes]
    log_path: Path
    reader: threading.Thread

    def stop(self) -> None:
        stop_gateway(self.process, self.reader)

    @property
    def auth_header(self) -> tuple[str, str]:
        return ("Authorization", f"token {self.token}")

    def kernels(self) -> list[dict[str, Any]]:
        """The gateway's own list of the kernels it runs (the test's check for orphans)."""
        response = httpx.get(f"{self.url}/api/kernels", headers=dict([self.auth_header]), timeout=10)
        response.raise_for_status()
        data: list[dict[str, Any]] = response.json()
        return data

    def kernel_ids(self) -> set[str]:
        return {k["id"] for k in self.kernels()}

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_gateway(root: Path, *, extra_args: list[str] | None = None,
                  extra_specs: dict[str, dict[str, Any]] | None = None,
                  env: dict[str, str] | None = None) -> RunningGateway:
    """Start Enterprise Gateway on a free loopback port; returns once it says it listens (bounded wait)."""
    exe = gateway_executable()
    jupyter = write_kernelspecs(root / "jupyter", extra_specs)
    port, token = free_port(), secrets.token_hex(16)
    process_env = {**os.environ, **(env or {}), "JUPYTER_PATH": str(jupyter), "JUPYTER_DATA_DIR": str(jupyter),
                   "JUPYTER_RUNTIME_DIR": str(root / "runtime"), "JUPYTER_CONFIG_DIR": str(root / "config")}
    process_env.pop("VIRTUAL_ENV", None)
    log_path = root / "gateway.log"
    proc = subprocess.Popen(
        [str(exe), "--ip=127.0.0.1", f"--port={port}", "--port_retries=0",
         f"--EnterpriseGatewayApp.auth_token={token}", "--EnterpriseGatewayApp.list_kernels=True",
         # CI runs as root, whom Enterprise Gateway refuses kernels by default (unauthorized_users).
         "--EnterpriseGatewayApp.unauthorized_users=nobody-in-particular",
         *(extra_args or [])],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=process_env, cwd=root,
    )
    ready = threading.Event()

    def copy_log() -> None:
        # The gateway logs every request; the pipe must be read all along or the gateway blocks.
        assert proc.stderr is not None
        with proc.stderr, open(log_path, "ab") as out:
            for line in proc.stderr:
                out.write(line)
                out.flush()
                if READY_LINE.encode() in line:
                    ready.set()
        ready.set()  # exited: stop waiting

    reader = threading.Thread(target=copy_log, daemon=True)
    reader.start()
    if not ready.wait(START_WAIT_S) or proc.poll() is not None:
        stop_gateway(proc, reader)
        raise RuntimeError(f"Enterprise Gateway did not start within {START_WAIT_S:g} s:\n{log_path.read_text()}")
    return RunningGateway(f"http://127.0.0.1:{port}", token, proc, log_path, reader)




def stop_gateway(proc: subprocess.Popen[bytes], reader: threading.Thread | None = None) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    if reader is not None:
        reader.join(10)  # it closes the pipe at EOF

"""`serve` refuses at start, in one line naming the fix, what it could only fail at later."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests import foreign_venv

import context_kernel

pytestmark = pytest.mark.e2e

SERVER_DIR = Path(context_kernel.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def without_gateway_extra(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with context-kernel and its own requirements only: no `gateway` extra (websockets)."""
    return foreign_venv.build(tmp_path_factory.mktemp("no-extras") / "venv", root="context-kernel")


@pytest.mark.parametrize("command", ["serve", "doctor"])
def test_a_gateway_url_without_the_gateway_extra_is_refused_at_start_naming_the_install_command(
        tmp_path: Path, without_gateway_extra: Path, command: str) -> None:
    # It used to start, then fail the first call inside the server (ModuleNotFoundError: websockets).
    env = foreign_venv.environment(PYTHONPATH=str(SERVER_DIR), CONTEXT_KERNEL_HOME=str(tmp_path / "home"))
    done = subprocess.run([str(without_gateway_extra), "-m", "context_kernel", command, "--gateway-url",
                           "http://127.0.0.1:9"], capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    checkout = SERVER_DIR.parent
    assert done.stderr.splitlines()[-1] == (
        f"context-kernel {command}: --gateway-url needs the `gateway` extra (websockets), which is not installed "
        f"here: uv pip --python {without_gateway_extra} install -e '{checkout}[gateway]' — then start it again")
    assert not (tmp_path / "home").exists() or command == "doctor"

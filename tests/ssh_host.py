"""A second 'host' reached over SSH for the remote-placement test: sshd on 127.0.0.2 (Enterprise Gateway
treats 127.0.0.1 and this machine's interface addresses as local and would skip SSH), a user of its own,
and keys this test makes. Needs root (sshd switches to that user) and Debian's openssh-server
(`make setup` installs it when run as root).

The kernel's Python on that 'host' is `.venv-remote` (made by `make setup`: gateway_provisioners
and ipykernel), and its launcher is gateway_provisioners' launch_ipykernel.py with the shared
server_listener.py beside it, assembled as gateway_provisioners' own kernelspec installer does.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.gateway_harness import REPO

SSHD = Path("/usr/sbin/sshd")
REMOTE_VENV = REPO / ".venv-remote"
REMOTE_USER = "ck-remote"
HOST = "127.0.0.2"
LISTEN_WAIT_S = 20.0
DISTRIBUTED = "enterprise_gateway.services.processproxies.distributed.DistributedProcessProxy"


def unavailable() -> str | None:
    """Why the SSH placement cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root: sshd must switch to the kernel's user"
    if not SSHD.exists():
        return "needs Debian's openssh-server (make setup installs it as root)"
    if not (REMOTE_VENV / "bin" / "python").exists():
        return f"needs {REMOTE_VENV.name}/ (make setup makes it)"
    return None


def ensure_user() -> None:
    try:
        pwd.getpwnam(REMOTE_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--create-home", "--shell", "/bin/bash", REMOTE_USER], check=True)
    # A new system account is locked ('!'), which sshd refuses even for key logins; '*' only forbids passwords.
    subprocess.run(["usermod", "-p", "*", REMOTE_USER], check=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass
class SshHost:
    port: int
    home: Path
    """The gateway's HOME: .ssh/ with its key and the host's key in known_hosts (paramiko reads them)."""
    launcher: Path
    process: subprocess.Popen[bytes]

    def kernelspec(self) -> dict[str, Any]:
        return {
            "argv": [str(REMOTE_VENV / "bin" / "python"), str(self.launcher), "--kernel-id", "{kernel_id}",
                     "--port-range", "{port_range}", "--response-address", "{response_address}",
                     "--public-key", "{public_key}"],
            "display_name": "Python on 127.0.0.2 over SSH", "language": "python",
            "metadata": {"process_proxy": {"class_name": DISTRIBUTED}},
        }

    def gateway_env(self) -> dict[str, str]:
        return {"EG_REMOTE_HOSTS": HOST, "EG_REMOTE_USER": REMOTE_USER, "EG_SSH_PORT": str(self.port),
                "HOME": str(self.home), "EG_RESPONSE_PORT": str(_free_port())}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def start_ssh_host(root: Path) -> SshHost:
    ensure_user()
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / "host_key")], check=True)
    home = root / "gateway-home"
    (home / ".ssh").mkdir(parents=True)
    client_key = home / ".ssh" / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(client_key)], check=True)
    authorized = root / "authorized_keys"
    shutil.copy(f"{client_key}.pub", authorized)
    os.chmod(authorized, 0o644)
    port = _free_port()
    host_key = (root / "host_key.pub").read_text().split()[:2]
    (home / ".ssh" / "known_hosts").write_text(f"[{HOST}]:{port} {' '.join(host_key)}\n")
    scripts = root / "launchers"
    scripts.mkdir()
    kernel_launchers = next(REMOTE_VENV.glob("lib/python*/site-packages/gateway_provisioners/kernel-launchers"))
    shutil.copy(kernel_launchers / "python" / "scripts" / "launch_ipykernel.py", scripts)
    shutil.copy(kernel_launchers / "shared" / "scripts" / "server_listener.py", scripts)
    for path in scripts.iterdir():
        os.chmod(path, 0o644)
    os.chmod(scripts, 0o755)
    config = root / "sshd_config"
    config.write_text("\n".join([
        f"ListenAddress {HOST}", f"Port {port}", f"HostKey {root / 'host_key'}", f"AuthorizedKeysFile {authorized}",
        "StrictModes no", "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes", f"AllowUsers {REMOTE_USER}", "PidFile none", "",
    ]))
    Path("/run/sshd").mkdir(exist_ok=True)  # its privilege-separation directory
    proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL)
    listening = threading.Event()

    def watch() -> None:
        assert proc.stderr is not None
        with proc.stderr, open(root / "sshd.log", "ab") as log:
            for line in proc.stderr:
                log.write(line)
                log.flush()
                if b"Server listening" in line:
                    listening.set()
        listening.set()

    threading.Thread(target=watch, daemon=True).start()
    if not listening.wait(LISTEN_WAIT_S) or proc.poll() is not None:
        proc.kill()
        raise RuntimeError(f"sshd did not listen on {HOST}:{port}: {(root / 'sshd.log').read_text()}")
    return SshHost(port, home, scripts / "launch_ipykernel.py", proc)

"""The kernel supervisor (kernels/supervisor.py) as the program it is, with a shell or python standing in
for the kernel: exit codes, forwarded interrupts, and the end of everything the "kernel" started when it
exits, when it is asked to end, and when its parent (the server) is killed; its cgroup where the machine
gives one. No Jupyter kernel starts here: the end-to-end cases are tests/e2e/test_cell_processes.py.
"""

from __future__ import annotations

import functools
import os
import select
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import wait_gone

from context_kernel.kernels import supervisor
from context_kernel.lifeline import die_with_parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the supervisor is Linux only")

WAIT_S = 15.0
# Starts one process of each kind a process-group kill misses, prints their pids, then waits.
ESCAPING = (
    "setsid sleep 400 >/dev/null & echo $!; "
    "nohup sleep 401 >/dev/null 2>&1 & echo $!; "
    "(sleep 402 >/dev/null 2>&1 & echo $!) & wait $!; "
    "sleep 403 >/dev/null & echo $!; "
)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Supervisors (or stand-in servers) a test starts; killed and reaped after it whatever happened."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait(timeout=WAIT_S)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def supervised(processes: list[subprocess.Popen[bytes]], argv: list[str], cwd: Path,
               cgroup: str | None = None) -> subprocess.Popen[bytes]:
    """A supervisor running `argv`, started the way jupyter_client starts a kernel (its own session)."""
    proc = subprocess.Popen(supervisor.command(argv, cgroup), cwd=cwd, stdin=subprocess.DEVNULL, bufsize=0,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    processes.append(proc)
    return proc


def read_lines(proc: subprocess.Popen[bytes], count: int) -> list[str]:
    """`count` lines of the process's unbuffered stdout (a buffer would hide lines from select)."""
    assert proc.stdout is not None
    lines = []
    for _ in range(count):
        ready, _, _ = select.select([proc.stdout], [], [], WAIT_S)
        assert ready, f"no line within {WAIT_S} s after {lines}"
        lines.append(proc.stdout.readline().decode().strip())
    return lines


def alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if wait_gone([pid], timeout=0) == [pid]]


def test_the_supervisor_exits_with_the_kernels_exit_code(processes: list[subprocess.Popen[bytes]],
                                                         tmp_path: Path) -> None:
    assert supervised(processes, ["sh", "-c", "exit 3"], tmp_path).wait(timeout=WAIT_S) == 3


def test_the_supervisor_dies_of_the_signal_that_killed_the_kernel_without_leaving_a_core_file(
        processes: list[subprocess.Popen[bytes]], tmp_path: Path) -> None:
    assert supervised(processes, ["sh", "-c", "kill -SEGV $$"], tmp_path).wait(timeout=WAIT_S) == -signal.SIGSEGV
    assert list(tmp_path.iterdir()) == []


def test_a_kernel_that_cannot_be_started_exits_127_and_says_why(processes: list[subprocess.Popen[bytes]],
                                                                tmp_path: Path) -> None:
    proc = supervised(processes, [str(tmp_path / "no-such-kernel")], tmp_path)
    assert proc.wait(timeout=WAIT_S) == 127
    assert proc.stderr is not None
    message = proc.stderr.read().decode()
    assert "cannot start" in message and "no-such-kernel" in message


def test_sigint_to_the_supervisors_group_reaches_the_kernel_which_handles_it(
        processes: list[subprocess.Popen[bytes]], tmp_path: Path) -> None:
    kernel = ("import signal, sys\n"
              "signal.signal(signal.SIGINT, lambda *_: (print('interrupted', flush=True), sys.exit(5)))\n"
              "print('ready', flush=True)\n"
              "signal.pause()\n")
    proc = supervised(processes, [sys.executable, "-c", kernel], tmp_path)
    assert read_lines(proc, 1) == ["ready"]
    os.killpg(os.getpgid(proc.pid), signal.SIGINT)  # what jupyter_client's interrupt does
    assert read_lines(proc, 1) == ["interrupted"]
    assert proc.wait(timeout=WAIT_S) == 5


def test_when_the_kernel_exits_every_process_it_started_ends(processes: list[subprocess.Popen[bytes]],
                                                              tmp_path: Path) -> None:
    proc = supervised(processes, ["sh", "-c", ESCAPING + "exit 0"], tmp_path)
    pids = [int(line) for line in read_lines(proc, 4)]
    assert proc.wait(timeout=WAIT_S) == 0
    assert wait_gone(pids, timeout=WAIT_S) == []


def test_sigterm_ends_the_kernel_and_every_process_it_started(processes: list[subprocess.Popen[bytes]],
                                                               tmp_path: Path) -> None:
    proc = supervised(processes, ["sh", "-c", ESCAPING + "echo $$; exec sleep 404"], tmp_path)
    pids = [int(line) for line in read_lines(proc, 5)]
    assert alive(pids) == pids
    proc.send_signal(signal.SIGTERM)  # GuardedProvisioner.kill
    assert proc.wait(timeout=WAIT_S) == -signal.SIGKILL  # the kernel was killed: so says the supervisor
    assert wait_gone(pids, timeout=WAIT_S) == []


STAND_IN_SERVER = """
import functools, os, signal, subprocess, sys
from context_kernel.kernels import supervisor
from context_kernel.lifeline import die_with_parent
subprocess.Popen(supervisor.command(sys.argv[1:], None), start_new_session=True,
                 preexec_fn=functools.partial(die_with_parent, signal.SIGTERM, os.getpid()))
signal.pause()
"""


def test_when_the_server_is_killed_the_kernel_and_every_process_it_started_end(
        processes: list[subprocess.Popen[bytes]], tmp_path: Path) -> None:
    # A stand-in server launching the supervisor as GuardedProvisioner does; the kernel prints to our pipe.
    server = subprocess.Popen([sys.executable, "-c", STAND_IN_SERVER, "sh", "-c", ESCAPING + "echo $$; exec sleep 405"],
                              cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, bufsize=0)
    processes.append(server)
    pids = [int(line) for line in read_lines(server, 5)]
    assert alive(pids) == pids
    server.kill()
    assert wait_gone(pids, timeout=WAIT_S) == []


def test_a_child_whose_parent_is_gone_before_it_asks_for_the_death_signal_gets_it_at_once() -> None:
    # The parent it was forked by (-1: none) is not its parent any more, as after a parent died early.
    child = subprocess.Popen(["sleep", "406"], preexec_fn=functools.partial(die_with_parent, signal.SIGKILL, -1))
    assert child.wait(timeout=WAIT_S) == -signal.SIGKILL


def _kernel_cgroup_or_skip() -> str:
    path = supervisor.new_cgroup_path(uuid.uuid4().hex[:12])
    try:
        if path is None:
            raise OSError("no cgroup v2 here")
        os.mkdir(path)
        os.rmdir(path)
    except OSError as exc:
        pytest.skip(f"this machine gives kernels no cgroup ({exc}): the tree walk alone ends them")
    return path


def test_a_kernel_and_everything_it_starts_are_in_a_cgroup_of_its_own_that_goes_with_it(
        processes: list[subprocess.Popen[bytes]], tmp_path: Path) -> None:
    cgroup = _kernel_cgroup_or_skip()
    proc = supervised(processes, ["sh", "-c", ESCAPING + "echo $$; exec sleep 407"], tmp_path, cgroup=cgroup)
    pids = [int(line) for line in read_lines(proc, 5)]
    assert sorted(int(pid) for pid in (Path(cgroup) / "cgroup.procs").read_text().split()) == sorted(pids)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=WAIT_S) == -signal.SIGKILL
    assert wait_gone(pids, timeout=WAIT_S) == []
    assert not os.path.exists(cgroup)

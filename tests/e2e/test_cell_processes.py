"""Every process a cell starts ends with its kernel: after a clean end, an idle cull, a restart and a
`kill -9` of the server.

The cells start one process of each kind that a kill of the kernel's process group misses (a plain
child, a shell job, `setsid`, a double fork, `nohup`) and print `name=pid` for each. The test checks
that every one of them is alive, then causes the event, then waits (event-driven, bounded) for each
pid to exit. Where the machine gives kernels a cgroup (kernels/supervisor.py) it also checks that
every process of a kernel is in that kernel's cgroup, and that the cgroup is gone afterwards.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, server_command, text_of, wait_gone

from context_kernel import app
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]

GONE_WITHIN_S = 15.0  # jupyter_client gives a kernel 5 s to exit; the rest is margin for 2 busy cores

PYTHON_CELL = """\
import os, subprocess
def _orphan(command):  # sh starts it in the background and exits: the process is reparented
    return subprocess.run(['sh', '-c', command], capture_output=True, text=True).stdout.split()[0]
_kept = {'plain': subprocess.Popen(['sleep', '300']),
         'setsid': subprocess.Popen(['setsid', 'sleep', '302']),
         'nohup': subprocess.Popen(['nohup', 'sleep', '304'], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)}
print(f"kernel={os.getpid()} server={os.environ['JPY_PARENT_PID']}",
      *(f'{name}={p.pid}' for name, p in _kept.items()),
      'job=' + _orphan('sleep 301 >/dev/null 2>&1 & echo $!'),
      'double_fork=' + _orphan('(sleep 303 >/dev/null 2>&1 & echo $!) &'))
"""

SHELL_CELL = """\
echo "kernel=$PPID"
sleep 301 >/dev/null & echo "job=$!"
setsid sleep 302 >/dev/null & echo "setsid=$!"
echo "double_fork=$( (sleep 303 >/dev/null 2>&1 & echo $!) & )"
nohup sleep 304 >/dev/null 2>&1 & echo "nohup=$!"
"""

JAVASCRIPT_CELL = """\
const { spawn } = require('child_process');
const kids = { node_child: spawn('sleep', ['305'], { stdio: 'ignore' }),
               node_detached: spawn('sleep', ['306'], { stdio: 'ignore', detached: true }) };
for (const kid of Object.values(kids)) kid.unref();
console.log(`kernel=${process.ppid}`, Object.entries(kids).map(([name, kid]) => `${name}=${kid.pid}`).join(' '));
"""

PERL_CELL = """\
use POSIX qw(setsid);
my $pid = fork();
if ($pid == 0) { setsid(); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null'); exec('sleep', '307'); }
print "kernel=" . getppid() . " program_setsid=$pid\\n";
"""

CELLS = {"python": PYTHON_CELL, "shell": SHELL_CELL, "javascript": JAVASCRIPT_CELL, "perl": PERL_CELL}


def pids_of(text: str) -> dict[str, int]:
    """The `name=pid` words a cell printed."""
    pairs = [word.split("=", 1) for word in text.split() if "=" in word]
    return {name: int(pid) for name, pid in pairs}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


def cgroup_of(pid: int) -> str:
    with open(f"/proc/{pid}/cgroup") as f:
        return next((line[3:].strip() for line in f if line.startswith("0::")), "")


EXPECTED = {
    "python": {"kernel", "plain", "job", "setsid", "double_fork", "nohup"},
    "shell": {"kernel", "job", "setsid", "double_fork", "nohup"},
    "javascript": {"kernel", "node_child", "node_detached"},
    "perl": {"kernel", "program_setsid"},
}


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


@dataclass
class Started:
    """What cells started (`language:name` -> pid, their kernels included), read right after each cell:
    the kernels' cgroup directories, if the machine gives kernels cgroups, and their supervisors."""

    pids: dict[str, int] = field(default_factory=dict)
    cgroups: list[str] = field(default_factory=list)
    supervisors: list[int] = field(default_factory=list)

    def add(self, language: str, text: str) -> None:
        pids = {name: pid for name, pid in pids_of(text).items() if name != "server"}
        assert set(pids) == EXPECTED[language], text
        assert {name: pid for name, pid in pids.items() if not alive(pid)} == {}, text
        self.pids.update({f"{language}:{name}": pid for name, pid in pids.items()})
        supervisor = parent_of(pids["kernel"])
        with open(f"/proc/{supervisor}/cmdline", "rb") as f:
            if b"context_kernel.kernels.supervisor" in f.read():
                self.supervisors.append(supervisor)
        groups = {cgroup_of(pid) for pid in pids.values()}
        if any(os.path.basename(group).startswith("ck-kernel-") for group in groups):
            from context_kernel.kernels.supervisor import cgroup_directory

            assert len(groups) == 1, f"{language}: the kernel's processes are in several cgroups: {groups}"
            path = cgroup_directory(groups.pop())
            assert path and os.path.isdir(path) and path not in self.cgroups
            self.cgroups.append(path)

    def assert_all_end(self) -> None:
        left = wait_gone([*self.pids.values(), *self.supervisors], timeout=GONE_WITHIN_S)
        assert {name: pid for name, pid in self.pids.items() if pid in left} == {}
        assert [pid for pid in self.supervisors if pid in left] == []
        # a supervisor removes its kernel's cgroup before it exits
        assert [path for path in self.cgroups if os.path.exists(path)] == []


async def start_everywhere(client: Client, languages: tuple[str, ...]) -> Started:
    started = Started()
    for language in languages:
        result = await client.call_tool("ctx_execute", {"language": language, "code": CELLS[language]})
        assert not result.is_error, text_of(result)
        started.add(language, text_of(result))
    return started


async def test_every_process_a_cell_started_ends_when_the_server_ends_cleanly(
        tmp_path: Path, project: Path) -> None:
    async with Client(create_server(make_settings(tmp_path, project))) as client:
        started = await start_everywhere(client, ("python", "shell", "javascript", "perl"))
    started.assert_all_end()


async def test_every_process_a_cell_started_ends_when_its_idle_kernel_is_culled(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app, "CULL_EVERY_S", 0.1)
    settings = make_settings(tmp_path, project, kernel_idle_cull_s=1.0)
    async with Client(create_server(settings)) as client:
        started = await start_everywhere(client, ("python", "shell"))
        # while the server runs on, in this event loop: wait in a thread
        await anyio.to_thread.run_sync(started.assert_all_end)


async def test_every_process_a_cell_started_ends_when_its_kernel_is_restarted_after_a_stuck_cell(
        client: Client) -> None:
    started = await start_everywhere(client, ("python",))
    stuck = await client.call_tool("ctx_execute", {
        "language": "python", "timeout": 1000,
        "code": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass"})
    assert stuck.is_error and "the kernel was restarted" in text_of(stuck)
    started.assert_all_end()
    fresh = await client.call_tool("ctx_execute", {"language": "python", "code": "print(globals().get('_kept'))"})
    assert text_of(fresh) == "None"


@pytest.mark.parametrize("blow", [signal.SIGSTOP, signal.SIGKILL], ids=["stopped", "killed"])
async def test_every_process_a_cell_started_ends_even_when_the_kernels_supervisor_is_stopped_or_killed(
        tmp_path: Path, project: Path, blow: signal.Signals) -> None:
    async with Client(create_server(make_settings(tmp_path, project))) as client:
        started = await start_everywhere(client, ("python",))
        if not started.supervisors or (blow == signal.SIGKILL and not started.cgroups):
            pytest.skip("no supervisor, or no cgroup to end what a killed supervisor's kernel left")
        for pid in started.supervisors:
            # Stopped, it will not end the tree when asked; killed, it cannot: the provisioner must.
            os.kill(pid, blow)
    started.assert_all_end()


CLIENT_SCRIPT = """
import json, os, sys, anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    # The SDK passes a server only a few safe variables unless told: CONTEXT_KERNEL_HOME must reach it.
    params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=dict(os.environ))
    async with Client(params) as c:
        for language, code in json.loads(sys.argv[1]):
            result = await c.call_tool("ctx_execute", {"language": language, "code": code})
            print(json.dumps([language, "".join(getattr(b, "text", "") for b in result.content)]), flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""


def test_every_process_a_cell_started_ends_when_the_server_is_killed(tmp_path: Path, project: Path) -> None:
    cells = [(language, CELLS[language]) for language in ("python", "shell", "javascript", "perl")]
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT_SCRIPT, json.dumps(cells), *server_command("--project", str(project))],
        env={**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home")},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        assert client.stdout is not None
        started = Started()
        server_pid = 0
        for _ in cells:
            ready, _, _ = select.select([client.stdout], [], [], 90)
            assert ready, "the client did not report a cell's result"
            language, text = json.loads(client.stdout.readline())
            server_pid = pids_of(text).get("server", server_pid)
            started.add(language, text)
        assert server_pid
        os.kill(server_pid, signal.SIGKILL)
        started.assert_all_end()
    finally:
        client.kill()
        client.wait(timeout=10)
        if client.stdout:
            client.stdout.close()

"""100 hooks at once on a busy machine: how long the slowest client waits, and whether any event is lost.

What the issue measured: a burst of hook calls (an agent running many tools in parallel, several
hooks per call) while other work keeps every core busy. This starts one busy loop per core
(`python -c "while True: pass"`, two by default), then spawns N `context-kernel hook claude-code
PostToolUse` calls at once, each recording one distinct file read in one of ten sessions, and times
each call from its spawn to its exit (what the client waits for). After the burst the busy loops
stop, the recordings a hook deferred (hooks/deferral.py) are waited for, the spool is ingested into
the database as a server would, and the stored events are counted against the sent ones.

Baselines in the same run, under the same busy loops: N bare interpreters (`python -c pass`) at
once, the floor no Python hook can go below on this machine; and one hook at a time on the idle
machine (the serial median). Targets: slowest hook within 2 s, no event lost. Usage (repo root):
    python bench/hooks_parallel.py               # 100 hooks, 2 busy loops
    python bench/hooks_parallel.py --hooks 30 --busy 4
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from context_kernel.hooks import deferral
from context_kernel.hooks.memory import open_memory

CLI = Path(sys.executable).parent / "context-kernel"
TARGET_MAX_S = 2.0
SESSIONS = 10
SERIAL_RUNS = 15
WAIT_S = 300.0  # bound on the deferred recordings after the burst (they run at the lowest priority)


def payload(project: Path, i: int, session: str = "") -> bytes:
    return json.dumps({"session_id": session or f"bench-{i % SESSIONS}", "hook_event_name": "PostToolUse",
                       "cwd": str(project), "tool_name": "Read", "tool_input": {"file_path": f"src/module_{i}.py"},
                       "tool_response": {"type": "text", "file": {"filePath": f"src/module_{i}.py",
                                                                   "content": "x = 1\n" * 20}}}).encode()


def burst(argvs: list[list[str]], stdins: list[bytes], env: dict[str, str], cwd: Path) -> tuple[list[float], int]:
    """Spawn every command at once; seconds from each spawn to its exit, and how many answered wrongly.

    Exits are reaped by a thread blocked in os.wait() from before the first spawn, so an early exit
    is timed when it happens, not when the spawning is over.
    """
    exited: dict[int, tuple[float, int]] = {}

    def reap() -> None:
        while len(exited) < len(argvs):
            pid, status = os.wait()  # only the hooks exit: the busy loops run until killed
            exited[pid] = (time.monotonic(), status)

    reaper = threading.Thread(target=reap, daemon=True)
    reaper.start()
    started: dict[int, float] = {}
    procs: dict[int, subprocess.Popen[bytes]] = {}
    for argv, data in zip(argvs, stdins, strict=True):
        began = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env, cwd=cwd)
        started[proc.pid], procs[proc.pid] = began, proc
        assert proc.stdin is not None
        try:
            proc.stdin.write(data)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # `python -c pass` exits without reading
    reaper.join(timeout=WAIT_S)
    assert not reaper.is_alive(), f"not every process exited within {WAIT_S:.0f} s"
    elapsed: list[float] = []
    wrong = 0
    for pid, proc in procs.items():
        ended, status = exited[pid]
        elapsed.append(ended - started[pid])
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped above: Popen must not wait for it again
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.stdout.close()
        wrong += proc.returncode != 0 or out.strip() != b""  # Claude Code's neutral answer: nothing
    return elapsed, wrong


def recorded(home: Path) -> int:
    with sqlite3.connect(home / "context-kernel.sqlite3") as db:
        return int(db.execute("SELECT count(*) FROM session_events WHERE session_id LIKE 'bench-%'").fetchone()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hooks", type=int, default=100)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy loops (default: one per core)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ck-hooks-parallel-") as tmp:
        root = Path(tmp)
        home, project, user = root / "home", root / "project", root / "user"
        (project / "src").mkdir(parents=True)
        user.mkdir()
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONDONTWRITEBYTECODE", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")}
        env.update({"CONTEXT_KERNEL_HOME": str(home), "HOME": str(user), "CONTEXT_KERNEL_HOOK_LOG": "1"})
        hook = [str(CLI), "hook", "claude-code", "PostToolUse"]
        serial = []
        for i in range(SERIAL_RUNS + 3):  # the first calls fill the hooks' pattern cache
            began = time.monotonic()
            subprocess.run(hook, input=payload(project, i, session="warm-up"), capture_output=True, env=env,
                           cwd=project, check=True, timeout=60)
            serial.append(time.monotonic() - began)
        serial = serial[3:]
        deferral.wait_for_deferred(home, WAIT_S)
        open_memory(home).ingest()  # the warm-up's events out of the way

        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        try:
            floor, _ = burst([[sys.executable, "-c", "pass"]] * args.hooks, [b""] * args.hooks, env, project)
            sent = [payload(project, i) for i in range(args.hooks)]
            hooks, wrong = burst([hook] * args.hooks, sent, env, project)
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()
        waited = time.monotonic()
        settled = deferral.wait_for_deferred(home, WAIT_S)
        waited = time.monotonic() - waited
        log = (home / "logs" / "hooks.log").read_text().splitlines() if (home / "logs" / "hooks.log").exists() else []
        deferred = sum("recording deferred" in line for line in log)
        answered = sorted(float(line.split(" answered ")[1].split(" ms")[0]) / 1000 for line in log
                          if " answered " in line)
        open_memory(home).ingest()
        stored = recorded(home)

    lost = args.hooks - stored
    print(f"{args.hooks} hooks at once (claude-code PostToolUse), {args.busy} busy loops, {os.cpu_count()} cores\n")
    print("| measure | seconds | × floor |")
    print("|---|---:|---:|")
    print(f"| serial median, idle machine ({SERIAL_RUNS} runs) | {statistics.median(serial):.3f} | |")
    print(f"| floor: `python -c pass` ×{args.hooks} at once, max | {max(floor):.2f} | 1.00 |")
    print(f"| floor: `python -c pass` ×{args.hooks} at once, median | {statistics.median(floor):.2f} | 1.00 |")
    print(f"| hooks at once, max | {max(hooks):.2f} | {max(hooks) / max(floor):.2f} |")
    print(f"| hooks at once, median | {statistics.median(hooks):.2f} | "
          f"{statistics.median(hooks) / statistics.median(floor):.2f} |")
    print()
    if answered:
        print(f"deferring hooks answered (process age at the answer): median {statistics.median(answered):.2f} s, "
              f"max {answered[-1]:.2f} s")
    print(f"recordings deferred: {deferred} of {args.hooks}; all landed {waited:.1f} s after the burst"
          + ("" if settled else f" (NOT within {WAIT_S:.0f} s)"))
    print(f"events sent {args.hooks}, stored {stored}, lost {lost}; wrong answers {wrong}")
    print(f"slowest hook within {TARGET_MAX_S:g} s: {'yes' if max(hooks) <= TARGET_MAX_S else 'NO'}; "
          f"no event lost: {'yes' if lost == 0 else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

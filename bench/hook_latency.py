"""Wall time of `context-kernel hook <client> <event>` (the console script), next to a bare spawn.

A hook runs on every tool call of the agent, so its whole process lifetime is what the agent waits
for. For each client this spawns the real console script N times on that client's documented
payloads (tests/hooks/fixtures) for its PreToolUse and PostToolUse events, and prints the median and
p95 next to two baselines measured in the same run: `python -c pass` (the interpreter's spawn
cost) and `context-kernel --help` (our CLI's import cost). The PreToolUse runs take the most
expensive ordinary path: a live server (so routing applies), project deny rules to load and check,
a Bash command to analyse. PostToolUse extracts, redacts and appends an event to the spool.

Secret detection by shape (detect-secrets' patterns plus our rules) is measured on its own: the
same calls through `bench/hook_runner.py`, once with it and once without, in the same run; the
last table gives the ratio (the target is at most 1.3x). Its prompt rows carry the issue's probe
of 14 secrets, the heaviest text a hook redacts.

Children run without PYTHONDONTWRITEBYTECODE (an installed package has its .pyc files), after a
few warm-up runs. Nothing is asserted: this only prints a Markdown table. Usage (repo root):
    python bench/hook_latency.py                 # 30 runs per row
    python bench/hook_latency.py --runs 10 --clients claude-code,cursor
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from context_kernel.hooks import liveness

TARGET_MS = 150
DETECTOR_TARGET = 1.3
RUNNER = Path(__file__).resolve().parent / "hook_runner.py"
PROBE_PROMPT = (
    "my password is hunter2; token ghp_Zq7Rk2Lm9Xw4Tn8Pv3Hs6Jd1Fb5Gc0Ya2Eu7, aws AKIAQX7ZP3LMN4RT2VWY "
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8fake4Kq; mysql -uroot -pS3cretMysqlPw shop; curl -u admin:CurlPa55word "
    "https://api.example.com; docker login -u bob -p D0ckerHubPass r.example.com; git clone "
    "https://8f3a9c2e7b1d4f6a0e5c9b8d7a6f5e4d3c2b1a09@github.com/acme/x.git; sk-ant-api03-Zx9Cv8Bn7Mq6Wd5Ef4Rg3Th2Yj1"
    " xoxb-918273645012-5647382910123-QwErTyUiOpAsDfGhJkLzXcVb github_pat_11AQZ7RKM0aB3cD4eF5gH6_iJ7kL8mN9oP0"
)
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "hooks" / "fixtures"
PLACEHOLDER = "/path/to/project"
CLI = Path(sys.executable).parent / "context-kernel"
WARMUP = 3

# client: (PreToolUse event, fixture), (PostToolUse event, fixture)
CASES: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "claude-code": (("PreToolUse", "PreToolUse-Bash"), ("PostToolUse", "PostToolUse-Read")),
    "gemini": (("BeforeTool", "BeforeTool-run_shell_command"), ("AfterTool", "AfterTool-read_file")),
    "codex": (("PreToolUse", "PreToolUse-Bash"), ("PostToolUse", "PostToolUse-apply_patch")),
    "cursor": (("beforeShellExecution", "beforeShellExecution"), ("afterFileEdit", "afterFileEdit")),
    "copilot": (("PreToolUse", "PreToolUse-run_in_terminal"), ("PostToolUse", "PostToolUse-create_file")),
}


def timed(cmd: list[str], stdin: str, env: dict[str, str], runs: int, warmup: int = WARMUP) -> list[float]:
    for _ in range(warmup):
        subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, check=True, timeout=60)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, check=True, timeout=60)
        times.append((time.perf_counter() - start) * 1000)
    return times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--clients", default=",".join(CASES))
    args = parser.parse_args()
    clients = [c for c in args.clients.split(",") if c]

    with tempfile.TemporaryDirectory(prefix="ck-hook-bench-") as tmp:
        root = Path(tmp)
        home, project, user = root / "home", root / "project", root / "user"
        (project / ".claude").mkdir(parents=True)
        (project / "src").mkdir()
        user.mkdir()
        (project / "src" / "main.py").write_text("print('hi')\n")
        (project / ".claude" / "settings.json").write_text(
            json.dumps({"permissions": {"deny": ["Bash(rm -rf *)", "Bash(git push:*)", "Read(./.env)"]}}))
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONDONTWRITEBYTECODE", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")}
        env.update({"CONTEXT_KERNEL_HOME": str(home), "HOME": str(user)})
        marker = liveness.mark_alive(home, project)  # this process plays the running server
        try:
            rows: list[tuple[str, list[float]]] = []
            print(f"measuring {args.runs} runs per row…", file=sys.stderr)
            rows.append(("`python -c pass`", timed([sys.executable, "-c", "pass"], "", env, args.runs)))
            rows.append(("`context-kernel --help`", timed([str(CLI), "--help"], "", env, args.runs)))
            for client in clients:
                for event, fixture in CASES[client]:
                    text = (FIXTURES / client / f"{fixture}.json").read_text()
                    payload = text.replace(PLACEHOLDER, json.dumps(str(project))[1:-1])
                    times = timed([str(CLI), "hook", client, event], payload, env, args.runs)
                    rows.append((f"`hook {client} {event}`", times))
            detector = detector_rows(project, env, args.runs)
        finally:
            liveness.clear(marker)

    spawn = statistics.median(rows[0][1])
    cli = statistics.median(rows[1][1])
    print(f"| command | median ms | p95 ms | × python -c pass | × --help | under {TARGET_MS} ms |")
    print("|---|---:|---:|---:|---:|:-:|")
    for name, times in rows:
        median = statistics.median(times)
        ok = "yes" if median < TARGET_MS else "NO"
        print(f"| {name} | {median:.1f} | {p95(times):.1f} | {median / spawn:.2f} | {median / cli:.2f} | {ok} |")
    print()
    print("| hook call (bench/hook_runner.py) | without shapes ms | with shapes ms | ratio | "
          f"within {DETECTOR_TARGET}x |")
    print("|---|---:|---:|---:|:-:|")
    for name, without, with_ in detector:
        ratio = statistics.median(with_) / statistics.median(without)
        ok = "yes" if ratio <= DETECTOR_TARGET else "NO"
        print(f"| {name} | {statistics.median(without):.1f} | {statistics.median(with_):.1f} | {ratio:.2f} | {ok} |")
    return 0


def detector_rows(project: Path, env: dict[str, str], runs: int) -> list[tuple[str, list[float], list[float]]]:
    """Claude Code's recording events with and without shape detection, interleaved run by run so
    that drift on a shared machine hits both alike. The warm-up fills the hooks' pattern cache."""
    cases = [("PostToolUse", (FIXTURES / "claude-code" / "PostToolUse-Read.json").read_text()
              .replace(PLACEHOLDER, json.dumps(str(project))[1:-1])),
             ("UserPromptSubmit", json.dumps({"session_id": "bench", "cwd": str(project), "prompt": PROBE_PROMPT,
                                              "hook_event_name": "UserPromptSubmit"}))]
    rows = []
    for event, payload in cases:
        commands = {v: [sys.executable, str(RUNNER), v, "claude-code", event] for v in ("without", "with")}
        for command in commands.values():
            timed(command, payload, env, 0)
        times: dict[str, list[float]] = {"without": [], "with": []}
        for _ in range(runs):
            for variant, command in commands.items():
                times[variant] += timed(command, payload, env, 1, warmup=0)
        rows.append((f"`hook claude-code {event}`", times["without"], times["with"]))
    return rows


if __name__ == "__main__":
    sys.exit(main())

"""End-to-end round trips through the real `context-kernel serve` process, next to what a spawn costs.

Measures, in one run, and prints Markdown tables (progress goes to stderr, tables to stdout):
  1. time to answer `initialize` (raw JSON-RPC over the server's pipes, no SDK client overhead),
     next to the bare cost of `python -c "import mcp.server.mcpserver"` and of `python -c pass`;
  2. per language, through the SDK's stdio client calling ctx_execute: cold start (first call:
     kernel start + first result), then N warm calls of a trivial print (median, p95), next to the
     cost of spawning that language's interpreter/compiler for the same code every time, which is
     what a spawn-per-call system pays;
  3. the reference system's published numbers (static, from the spec, not measured here).

Nothing is asserted: this only prints. Usage (from the repo root, venv active):
    python bench/roundtrip.py                          # everything (a few minutes on 2 cores)
    python bench/roundtrip.py --languages python,shell --quick
    python bench/roundtrip.py --importtime             # also: top imports of context_kernel.tools.server
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

PROTOCOL_VERSION = "2025-11-25"
INIT_RUNS = 5
INIT_TARGET_MS = 200  # initialize should land within this of the bare `import mcp.server.mcpserver`
INIT_TIMEOUT_S = 60.0
COLD_TIMEOUT_S = 180.0
WARM_TIMEOUT_S = 60.0
SPAWN_TIMEOUT_S = 120.0
MAX_CONSECUTIVE_ERRORS = 3

# Reference system, from the spec (median round trip); not measured here.
SPEC_MEDIAN_MS = {"python": 129, "javascript": 44, "shell": 6, "ruby": 95, "r": 215}
SPEC_INITIALIZE = "0.4-0.5 s"

NOT_INSTALLED = re.compile(r"\bnot installed\b|no jupyter kernel named .* is installed", re.IGNORECASE)


@dataclass(frozen=True)
class Bench:
    """One language: the cell we send, how many warm calls, and how to spawn it bare."""

    language: str
    code: str
    warm_calls: int
    spawn_runs: int
    spawn: Callable[[Path], list[list[str]]]  # scratch dir -> commands run in sequence (one timed unit)
    spawn_label: str


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _typescript_spawn(scratch: Path) -> list[list[str]]:
    # What ck-typescript does per cell (transpile with the npm `typescript` package, then run),
    # paid in a fresh node process. Falls back to the `node -e` floor if the package is missing.
    ts_dir = _typescript_dir()
    if ts_dir is None:
        return [["node", "-e", "const n = 1; console.log(n)"]]
    script = (f"const ts = require({json.dumps(ts_dir)});"
              "eval(ts.transpile('const n: number = 1; console.log(n)'));")
    return [["node", "-e", script]]


def _typescript_dir() -> str | None:
    try:
        from context_kernel.kernel_processes.node import typescript_dir
    except ImportError:
        return None
    path = typescript_dir()
    return path if os.path.isdir(path) else None


def _go_spawn(scratch: Path) -> list[list[str]]:
    src = _write(scratch / "bare.go", 'package main\nimport "fmt"\nfunc main() { fmt.Println(1) }\n')
    return [["go", "run", str(src)]]


def _rust_spawn(scratch: Path) -> list[list[str]]:
    src = _write(scratch / "bare.rs", 'fn main() { println!("1"); }\n')
    out = scratch / "bare_rs"
    # same flags as the ck-rust kernel (script_languages._rust)
    return [["rustc", "--edition", "2021", "-A", "warnings", "-C", "debuginfo=0", "-o", str(out), str(src)],
            [str(out)]]


def _csharp_spawn(scratch: Path) -> list[list[str]]:
    src = _write(scratch / "bare.cs", "public static class P { public static void Main() "
                                      "{ System.Console.WriteLine(1); } }\n")
    exe = scratch / "bare.exe"
    return [["mcs", "-warn:0", f"-out:{exe}", str(src)], ["mono", str(exe)]]


def _const(*argv: str) -> Callable[[Path], list[list[str]]]:
    return lambda scratch: [list(argv)]


BENCHES: dict[str, Bench] = {
    b.language: b
    for b in [
        Bench("python", "print(1)", 100, 10, _const(sys.executable, "-c", "print(1)"), 'python -c "print(1)"'),
        Bench("shell", "echo 1", 100, 10, _const("bash", "-c", "echo 1"), 'bash -c "echo 1"'),
        Bench("r", "cat(1)", 30, 5, _const("Rscript", "-e", "cat(1)"), 'Rscript -e "cat(1)"'),
        Bench("javascript", "console.log(1)", 100, 10, _const("node", "-e", "console.log(1)"),
              'node -e "console.log(1)"'),
        Bench("typescript", "const n: number = 1; console.log(n)", 100, 10, _typescript_spawn,
              "node -e (require typescript; transpile; eval)"),
        Bench("ruby", "puts 1", 30, 10, _const("ruby", "-e", "puts 1"), 'ruby -e "puts 1"'),
        Bench("go", "fmt.Println(1)", 10, 3, _go_spawn, "go run bare.go"),
        Bench("rust", 'println!("1");', 10, 3, _rust_spawn, "rustc + ./bare"),
        Bench("php", "echo 1;", 30, 10, _const("php", "-r", "echo 1;"), 'php -r "echo 1;"'),
        Bench("perl", "print 1;", 30, 10, _const("perl", "-e", "print 1"), 'perl -e "print 1"'),
        Bench("elixir", "IO.puts 1", 30, 5, _const("elixir", "-e", "IO.puts 1"), 'elixir -e "IO.puts 1"'),
        Bench("csharp", "Console.WriteLine(1);", 10, 3, _csharp_spawn, "mcs + mono"),
    ]
}


@dataclass
class LangResult:
    language: str
    skipped: str = ""  # why (not installed)
    error: str = ""  # first error seen (kernel start failure, wrong output, ...)
    cold_ms: float = math.nan
    warm_ms: list[float] = field(default_factory=list)
    calls: int = 0
    mismatches: int = 0
    spawn_ms: float = math.nan
    spawn_error: str = ""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def p95(values: list[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]  # nearest rank


def fmt(ms: float, digits: int = 1) -> str:
    return "—" if math.isnan(ms) else f"{ms:.{digits}f}"


def one_line(text: str, limit: int = 90) -> str:
    line = " ".join(text.split())
    line = line.replace("|", "\\|")
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- 1. initialize


def server_argv(project: Path) -> list[str]:
    return [sys.executable, "-m", "context_kernel", "serve", "--project", str(project)]


def time_initialize(project: Path, env: dict[str, str]) -> float:
    """Spawn the server, send `initialize` as one JSON-RPC line, return ms until its response line."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                          "clientInfo": {"name": "context-kernel-bench", "version": "0"}}}
    t0 = time.perf_counter()
    proc = subprocess.Popen(server_argv(project), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], INIT_TIMEOUT_S)  # bound a hung server
        if not ready:
            raise RuntimeError(f"no initialize response within {INIT_TIMEOUT_S:.0f} s")
        line = proc.stdout.readline()
        elapsed = (time.perf_counter() - t0) * 1000
        reply = json.loads(line) if line else {}
        if "result" not in reply:
            raise RuntimeError(f"initialize failed: {line[:300]!r}")
        return elapsed
    finally:
        proc.stdin.close()  # EOF on stdin: the server exits on its own
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()


def time_spawn(commands: list[list[str]], runs: int, cwd: Path, warmup: bool = True) -> float:
    """Median ms of running `commands` in sequence, after one untimed warm-up (disk and build caches)."""
    times = []
    for attempt in range(0 if warmup else 1, runs + 1):
        t0 = time.perf_counter()
        for argv in commands:
            done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=SPAWN_TIMEOUT_S, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{argv[0]} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
        if attempt:
            times.append((time.perf_counter() - t0) * 1000)
    return median(times)


IMPORT_MCP = "import mcp.server.mcpserver"
# The same import without interpreter teardown (~100 ms of finalising pydantic models): the server's
# initialize timer stops at the response, long before its process exits, so this is the like-for-like floor.
IMPORT_MCP_NO_EXIT = "import mcp.server.mcpserver, os; os._exit(0)"


def measure_initialize(project: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """Interleaved rounds (server, bare imports, bare python) so load drift hits all of them alike."""
    log(f"initialize: {runs} rounds of server spawn / bare mcp import / python -c pass ...")
    times: dict[str, list[float]] = {"initialize": [], "import_mcp": [], "import_mcp_no_exit": [], "python_pass": []}
    for _ in range(runs):
        times["initialize"].append(time_initialize(project, env))
        for key, code in (("import_mcp", IMPORT_MCP), ("import_mcp_no_exit", IMPORT_MCP_NO_EXIT),
                          ("python_pass", "pass")):
            times[key].append(time_spawn([[sys.executable, "-c", code]], 1, project, warmup=False))
    return {**{key: median(values) for key, values in times.items()},
            **{f"{key}_min": min(values) for key, values in times.items()}}


# --- 2. languages through the SDK client


def text_of(result: object) -> str:
    # without the citation that ends every execution's reply (`[#42]`): the code's output is compared
    return re.sub(r"\n\[#\d+\]\Z", "", "".join(getattr(block, "text", "") for block in getattr(result, "content", [])))


async def measure_language(client: Client, bench: Bench, warm_calls: int) -> LangResult:
    res = LangResult(bench.language)
    args = {"language": bench.language, "code": bench.code}
    log(f"{bench.language}: cold start ...")
    t0 = time.perf_counter()
    try:
        result = await client.call_tool("ctx_execute", args, read_timeout_seconds=COLD_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - a benchmark reports whatever went wrong, then moves on
        res.error = f"first call raised {type(exc).__name__}: {exc}"
        return res
    res.cold_ms = (time.perf_counter() - t0) * 1000
    text = text_of(result)
    if result.is_error:
        if NOT_INSTALLED.search(text):
            res.skipped = text.strip().splitlines()[0] if text.strip() else "not installed"
        else:
            res.error = f"first call: {text}"
        return res
    res.calls, res.mismatches = 1, int(text != "1")
    if text != "1":
        res.error = f"first call printed {text!r}"
    log(f"{bench.language}: cold {res.cold_ms:.0f} ms; {warm_calls} warm calls ...")
    consecutive = 0
    for _ in range(warm_calls):
        t0 = time.perf_counter()
        try:
            result = await client.call_tool("ctx_execute", args, read_timeout_seconds=WARM_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001
            text, failed = f"{type(exc).__name__}: {exc}", True
        else:
            text, failed = text_of(result), bool(result.is_error)
        elapsed = (time.perf_counter() - t0) * 1000
        res.calls += 1
        if failed or text != "1":
            res.mismatches += 1
            res.error = res.error or f"warm call {'failed' if failed else 'printed'}: {text!r}"
        if failed:
            consecutive += 1
            if consecutive >= MAX_CONSECUTIVE_ERRORS:
                res.error += f" (stopped after {MAX_CONSECUTIVE_ERRORS} failures in a row)"
                break
            continue
        consecutive = 0
        res.warm_ms.append(elapsed)
    return res


async def measure_languages(project: Path, env: dict[str, str], benches: list[Bench], divisor: int) -> list[LangResult]:
    params = StdioServerParameters(command=sys.executable, args=server_argv(project)[1:], env=env)
    results = []
    async with Client(params) as client:
        for bench in benches:
            results.append(await measure_language(client, bench, max(1, bench.warm_calls // divisor)))
    return results


def measure_spawns(results: list[LangResult], scratch: Path) -> None:
    for res in results:
        if res.skipped:
            continue
        bench = BENCHES[res.language]
        log(f"{res.language}: bare spawn x{bench.spawn_runs} ...")
        try:
            res.spawn_ms = time_spawn(bench.spawn(scratch), bench.spawn_runs, scratch)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
            res.spawn_error = one_line(str(exc), 60)


# --- 3. the report


def print_initialize(init: dict[str, float]) -> None:
    def row(label: str, key: str) -> None:
        print(f"| {label} | {fmt(init[key], 0)} (min {fmt(init[key + '_min'], 0)}) |")

    print(f"## initialize (median of {INIT_RUNS}; raw JSON-RPC, protocolVersion {PROTOCOL_VERSION})\n")
    print("| measure | ms |")
    print("|---|---:|")
    row("spawn server → initialize response", "initialize")
    row(f"`python -c \"{IMPORT_MCP}\"`", "import_mcp")
    row(f"`python -c \"{IMPORT_MCP_NO_EXIT}\"` (no interpreter teardown)", "import_mcp_no_exit")
    row("`python -c pass`", "python_pass")
    for label, key in (("bare mcp import", "import_mcp"), ("mcp import without teardown", "import_mcp_no_exit")):
        diff = init["initialize"] - init[key]
        verdict = "within" if diff <= INIT_TARGET_MS else "over"
        print(f"| initialize − {label} | {fmt(diff, 0)} ({verdict} the {INIT_TARGET_MS} ms target) |")
    print(f"| reference initialize (spec, not measured) | {SPEC_INITIALIZE} |")
    print()


def print_languages(results: list[LangResult], divisor: int) -> None:
    print("## ctx_execute round trips over stdio (SDK client) vs a bare spawn per call\n")
    print("| language | cold start ms | warm N | warm median ms | warm p95 ms | mismatches | "
          "bare spawn ms | bare command | warm/bare | reference median ms (spec, not measured) | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
    for res in results:
        bench = BENCHES[res.language]
        spec = str(SPEC_MEDIAN_MS.get(res.language, "—"))
        if res.skipped:
            print(f"| {res.language} | — | — | — | — | — | — | {bench.spawn_label} | — | {spec} | "
                  f"skipped: {one_line(res.skipped)} |")
            continue
        warm = median(res.warm_ms)
        ratio = warm / res.spawn_ms if res.warm_ms and res.spawn_ms > 0 else math.nan
        spawn = fmt(res.spawn_ms, 0) if not res.spawn_error else "failed"
        notes = [n for n in (res.error and one_line(res.error),
                             res.spawn_error and f"bare: {res.spawn_error}") if n]
        print(f"| {res.language} | {fmt(res.cold_ms, 0)} | {len(res.warm_ms)} | {fmt(warm)} | "
              f"{fmt(p95(res.warm_ms))} | {res.mismatches}/{res.calls} | {spawn} | {bench.spawn_label} | "
              f"{'—' if math.isnan(ratio) else f'{ratio:.3f}'} | {spec} | {'; '.join(notes)} |")
    print()
    if divisor > 1:
        print(f"(--quick: warm call counts divided by {divisor})\n")
    skipped = [r for r in results if r.skipped]
    for res in skipped:
        print(f"- skipped {res.language}: {one_line(res.skipped, 200)}")
    if skipped:
        print()


def print_importtime(top: int = 15) -> None:
    """Top imports (cumulative and self) of `import context_kernel.tools.server`, via -X importtime."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import context_kernel.tools.server"],
                          capture_output=True, text=True, check=False, timeout=120)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[0].startswith("import time:") or "cumulative" in parts[1]:
            continue
        self_us, cumulative_us, name = int(parts[0].split(":")[1]), int(parts[1]), parts[2]
        rows.append((cumulative_us, self_us, len(name) - len(name.lstrip()) - 1, name.strip()))
    print("## `python -X importtime -c \"import context_kernel.tools.server\"` (one run)\n")
    print("| module | depth | cumulative ms | self ms |")
    print("|---|---:|---:|---:|")
    for cumulative, self_, depth, name in sorted(rows, reverse=True)[:top]:
        print(f"| {name} | {depth // 2} | {cumulative / 1000:.1f} | {self_ / 1000:.1f} |")
    print()
    print(f"Top {top} by self time:\n")
    print("| module | self ms |")
    print("|---|---:|")
    for _cumulative, self_, _depth, name in sorted(rows, key=lambda r: r[1], reverse=True)[:top]:
        print(f"| {name} | {self_ / 1000:.1f} |")
    print()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default=",".join(BENCHES),
                        help="comma-separated subset of: " + ",".join(BENCHES))
    parser.add_argument("--quick", action="store_true", help="divide every warm call count by 5")
    parser.add_argument("--importtime", action="store_true",
                        help="also print the top imports of context_kernel.tools.server")
    args = parser.parse_args(argv)
    args.languages = [name.strip().lower() for name in args.languages.split(",") if name.strip()]
    unknown = [name for name in args.languages if name not in BENCHES]
    if unknown:
        parser.error(f"unknown language(s) {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    divisor = 5 if args.quick else 1
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="context-kernel-roundtrip-") as tmp:
        root = Path(tmp)
        project, scratch = root / "project", root / "scratch"
        project.mkdir()
        scratch.mkdir()
        env = {**os.environ, "CONTEXT_KERNEL_HOME": str(root / "home")}
        try:
            init = measure_initialize(project, env, INIT_RUNS)
        except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
            raise SystemExit(f"the server did not answer initialize: {exc}") from exc
        benches = [BENCHES[name] for name in args.languages]
        results = anyio.run(measure_languages, project, env, benches, divisor)
        measure_spawns(results, scratch)
    print(f"# context-kernel round trips ({sys.platform}, {os.cpu_count()} CPUs, python "
          f"{sys.version.split()[0]})\n")
    print_initialize(init)
    print_languages(results, divisor)
    if args.importtime:
        print_importtime()
    print(f"Total bench time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

"""The python kernel in a project's own environment vs in the server's own Python, in one run.

Through the real `context-kernel serve` process over stdio (the SDK's client), for two projects:
  server   a project with no environment: the python kernel runs in the server's Python (kernel python3);
  project  a project whose .venv (made by `python -m venv`, no ipykernel) holds a package the server
           lacks: the kernel runs in .venv/bin/python with ipykernel lent from the overlay.
Per setup, alternating so both see the same machine load: cold start (a fresh server, first
ctx_execute = kernel start + first result) over N servers, then warm round trips of `print(1)`
(median, p95). Also timed: the first build of the overlay (a fresh data dir) and the probe of the
interpreter. Prints Markdown tables with ratios project / server; asserts nothing.

    python bench/project_env.py              # 5 cold starts and 200 warm calls per setup
    python bench/project_env.py --quick      # 2 and 40
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from context_kernel.kernels.overlay import build_overlay
from context_kernel.kernels.python_env import find_project_python

COLD_TIMEOUT_S = 180.0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def text_of(result: object) -> str:
    # without the citation that ends every execution's reply (`[#42]`): the code's output is compared
    return re.sub(r"\n\[#\d+\]\Z", "", "".join(getattr(block, "text", "") for block in getattr(result, "content", [])))


def project_with_env(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True)
    site = next((project / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "ck_bench_only.py").write_text("VALUE = 1\n")
    return project


def plain_project(root: Path) -> Path:
    project = root / "plain"
    project.mkdir()
    return project


async def one_server(project: Path, home: Path, warm: int) -> tuple[float, list[float]]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env["CONTEXT_KERNEL_HOME"] = str(home)
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "context_kernel", "serve", "--project", str(project)], env=env)
    async with Client(params) as client:
        await client.call_tool("ctx_stats", {})  # the server is up and its app built: only the kernel is timed
        t0 = time.perf_counter()
        first = await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"},
                                       read_timeout_seconds=COLD_TIMEOUT_S)
        cold = (time.perf_counter() - t0) * 1000
        if first.is_error or not text_of(first).endswith("1"):
            raise RuntimeError(f"first call failed: {text_of(first)}")
        times = []
        for _ in range(warm):
            t0 = time.perf_counter()
            result = await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
            times.append((time.perf_counter() - t0) * 1000)
            if result.is_error or text_of(result) != "1":
                raise RuntimeError(f"warm call printed {text_of(result)!r}")
    return cold, times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="2 cold starts and 40 warm calls per setup")
    args = parser.parse_args(argv)
    starts, warm = (2, 40) if args.quick else (args.starts, args.warm)
    with tempfile.TemporaryDirectory(prefix="ck-bench-env-") as scratch:
        root = Path(scratch)
        projects = {"server": plain_project(root), "project": project_with_env(root)}
        home = root / "home"

        t0 = time.perf_counter()
        build_overlay(root / "first-build" / "python-overlays")
        overlay_ms = (time.perf_counter() - t0) * 1000
        python = find_project_python(projects["project"], dict(os.environ), kernels_dir=root / "probe" / "kernels",
                                     overlays_dir=root / "probe" / "python-overlays")
        t0 = time.perf_counter()
        python.prepare()
        prepare_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        python.prepare()
        cached_ms = (time.perf_counter() - t0) * 1000

        cold: dict[str, list[float]] = {name: [] for name in projects}
        round_trips: dict[str, list[float]] = {name: [] for name in projects}
        for i in range(starts):
            for name, project in projects.items():
                log(f"{name}: server {i + 1}/{starts} ...")
                c, times = anyio.run(one_server, project, home, warm if i == 0 else 0)
                cold[name].append(c)
                round_trips[name] += times

    print(f"## python kernel: project .venv (ipykernel lent) vs the server's own Python "
          f"({starts} cold starts, {warm} warm calls each; Python {sys.version.split()[0]})\n")
    print("| measure | server's Python | project .venv | ratio |")
    print("|---|---:|---:|---:|")

    def row(label: str, server: float, project: float) -> None:
        print(f"| {label} | {server:.1f} ms | {project:.1f} ms | {project / server:.2f} |")

    row("cold start, median", statistics.median(cold["server"]), statistics.median(cold["project"]))
    row("cold start, min", min(cold["server"]), min(cold["project"]))
    row("warm round trip, median", statistics.median(round_trips["server"]),
        statistics.median(round_trips["project"]))
    row("warm round trip, p95", p95(round_trips["server"]), p95(round_trips["project"]))
    print()
    print("| one-off step | ms |")
    print("|---|---:|")
    print(f"| build the overlay (first python kernel of a Python version in a data dir) | {overlay_ms:.0f} |")
    print(f"| probe the interpreter and write its kernelspec (first start of a server) | {prepare_ms:.0f} |")
    print(f"| the same, nothing changed in its site-packages (every later start) | {cached_ms:.1f} |")


if __name__ == "__main__":
    main()

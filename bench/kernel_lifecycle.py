"""What the server's way of starting kernels costs: start, warm round trip and shutdown of a kernel
through the server's own JupyterKernel (kernels/backend.py, so through GuardedProvisioner and the
supervisor), optionally next to another checkout's code for before/after ratios.

Run (from the repo root, venv active):
    python bench/kernel_lifecycle.py [--kernels python3,ck-bash] [--starts 5] [--calls 200]
    python bench/kernel_lifecycle.py --direct      # each start alternates: under the supervisor / direct
    python bench/kernel_lifecycle.py --baseline OTHER_CHECKOUT/server   # alternates the two, prints ratios

- start: JupyterKernel.start() -> the kernel answered kernel_info and ran its setup code
- warm: execute_request sent -> `status: idle` of that request, for `print(1)` / `echo 1`
- shutdown: JupyterKernel.shutdown(now=True), what a cull, discard or server exit pays per kernel
Nothing is asserted: this only prints (medians; progress on stderr).
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

import anyio

CODE = {"python3": "print(1)", "ck-bash": "echo 1"}
TIMEOUT = 60.0


async def measure(kernel_name: str, starts: int, calls: int, label: str = "") -> dict[str, list[float]]:
    """Start `kernel_name` `starts` times; per start `calls` warm round trips. Keys: `start`, `warm`,
    `shutdown`, each prefixed with `label`."""
    from context_kernel.kernels.backend import JupyterKernel

    times: dict[str, list[float]] = {f"{label}{key}": [] for key in ("start", "warm", "shutdown")}
    with tempfile.TemporaryDirectory(prefix="ck-bench-") as scratch:
        root = Path(scratch)
        for _ in range(starts):
            kernel = JupyterKernel(kernel_name, cwd=root, env=dict(os.environ), runtime_dir=root / "run",
                                   log_dir=root / "logs")
            t0 = time.perf_counter()
            await kernel.start(TIMEOUT)
            times[f"{label}start"].append(time.perf_counter() - t0)
            for _ in range(calls):
                t0 = time.perf_counter()
                msg_id = kernel.execute(CODE.get(kernel_name, "1"))
                while True:
                    msg = await kernel.next_iopub(TIMEOUT)
                    if msg is None:
                        raise RuntimeError(f"{kernel_name}: no idle within {TIMEOUT} s")
                    if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                            and msg["content"]["execution_state"] == "idle"):
                        break
                times[f"{label}warm"].append(time.perf_counter() - t0)
                await kernel.shell_reply(msg_id, TIMEOUT)  # as the runner does, outside the timing
            t0 = time.perf_counter()
            await kernel.shutdown(now=True)
            times[f"{label}shutdown"].append(time.perf_counter() - t0)
    return times


def run_here(kernels: list[str], starts: int, calls: int) -> dict[str, dict[str, list[float]]]:
    async def all_kernels() -> dict[str, dict[str, list[float]]]:
        return {name: await measure(name, starts, calls) for name in kernels}

    return anyio.run(all_kernels)


def run_direct_too(kernels: list[str], starts: int, calls: int) -> dict[str, dict[str, list[float]]]:
    """Alternate, start by start, kernels under the supervisor and kernels started directly (the
    provisioner's SUPERVISED switched off): the supervisor's own cost, both sides under one load."""
    from context_kernel.kernels import provisioner

    async def all_kernels() -> dict[str, dict[str, list[float]]]:
        merged: dict[str, dict[str, list[float]]] = {}
        for name in kernels:
            for _ in range(starts):
                for supervised, label in ((False, "direct "), (True, "")):
                    provisioner.SUPERVISED = supervised
                    for key, values in (await measure(name, 1, calls, label)).items():
                        merged.setdefault(name, {}).setdefault(key, []).extend(values)
        provisioner.SUPERVISED = True
        return merged

    return anyio.run(all_kernels)


def run_child(server_dir: str, kernels: list[str], starts: int, calls: int) -> dict[str, dict[str, list[float]]]:
    env = {**os.environ, "PYTHONPATH": server_dir}
    out = subprocess.run([sys.executable, __file__, "--json", "--kernels", ",".join(kernels), "--starts", str(starts),
                          "--calls", str(calls)], env=env, capture_output=True, text=True, timeout=900, check=True)
    result: dict[str, dict[str, list[float]]] = json.loads(out.stdout)
    return result


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f}" if values else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default="python3,ck-bash")
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200, help="warm calls per start")
    parser.add_argument("--baseline", help="another checkout's server/ dir: measured alternately with this one")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --baseline")
    parser.add_argument("--direct", action="store_true", help="alternate supervised and direct starts")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    kernels = args.kernels.split(",")
    if args.json:
        print(json.dumps(run_here(kernels, args.starts, args.calls)))
        return
    if not args.baseline:
        results = (run_direct_too if args.direct else run_here)(kernels, args.starts, args.calls)
        for name, times in results.items():
            for label in ("direct ", "") if args.direct else ("",):
                tag = label.strip() or ("supervised" if args.direct else "")
                print(f"{name} {tag}: start {ms(times[label + 'start'])} ms, warm {ms(times[label + 'warm'])} ms, "
                      f"shutdown {ms(times[label + 'shutdown'])} ms")
        return
    here = str(Path(__file__).resolve().parents[1] / "server")
    merged: dict[str, dict[str, dict[str, list[float]]]] = {"baseline": {}, "this": {}}
    for round_no in range(args.rounds):
        for label, server_dir in (("baseline", args.baseline), ("this", here)):
            print(f"round {round_no + 1}/{args.rounds}: {label}", file=sys.stderr, flush=True)
            for name, times in run_child(server_dir, kernels, args.starts, args.calls).items():
                for key, values in times.items():
                    merged[label].setdefault(name, {}).setdefault(key, []).extend(values)
    print("| kernel | measure | baseline ms | this ms | ratio |")
    print("|---|---|---|---|---|")
    for name in kernels:
        for key in ("start", "warm", "shutdown"):
            before, after = merged["baseline"][name][key], merged["this"][name][key]
            ratio = statistics.median(after) / statistics.median(before)
            print(f"| {name} | {key} (n={len(after)}) | {ms(before)} | {ms(after)} | {ratio:.2f} |")


if __name__ == "__main__":
    main()

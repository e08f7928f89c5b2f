"""Warm round trip of the script kernels vs running the same program by hand.

For each language whose runtime is installed: start ck-<lang>, run two warm-up cells,
then alternate N times between one kernel cell of a trivial print (execute_request
sent -> execute_reply received, output collected) and one bare run, with
subprocess.run, of the very program the kernel builds for that cell (compile step
included). Alternating keeps both sides under the same machine load.

    python bench/kernel_roundtrip_script.py [-n 15] [languages...]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time

from jupyter_client import AsyncKernelClient, AsyncKernelManager

from context_kernel.kernel_processes.script_languages import LANGUAGES, Program

TRIVIAL = {
    "ruby": "puts 42", "perl": "print 42, qq(\\n);", "php": "echo 42, PHP_EOL;",
    "elixir": "IO.puts(42)", "go": "fmt.Println(42)", "rust": 'println!("42");',
    "csharp": "Console.WriteLine(42);",
}
TIMEOUT = 120
WARMUP = 2


async def kernel_cell(kc: AsyncKernelClient, code: str) -> float:
    start = time.perf_counter()
    reply = await kc.execute_interactive(code, timeout=TIMEOUT, output_hook=lambda msg: None)
    elapsed = time.perf_counter() - start
    assert reply["content"]["status"] == "ok", reply["content"]
    return elapsed


def bare_run(program: Program, scratch: str) -> float:
    start = time.perf_counter()
    if program.compile:
        subprocess.run(program.compile, cwd=scratch, check=True, capture_output=True, timeout=TIMEOUT)
    out = subprocess.run(program.run, check=True, capture_output=True, text=True, timeout=TIMEOUT)
    elapsed = time.perf_counter() - start
    assert out.stdout == "42\n", out
    return elapsed


async def measure(language: str, n: int) -> tuple[list[float], list[float]]:
    scratch = tempfile.mkdtemp(prefix="ck-bench-")
    program = LANGUAGES[language].build(TRIVIAL[language], None, scratch)
    with open(program.path, "w", encoding="utf-8") as f:  # noqa: ASYNC230 - before any kernel starts
        f.write(program.source)
    km = AsyncKernelManager(kernel_name=f"ck-{language}", transport="ipc")
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kernel, bare = [], []
    try:
        await kc.wait_for_ready(timeout=TIMEOUT)
        for i in range(WARMUP + n):  # warm-up fills the Go build cache and the page cache
            k, b = await kernel_cell(kc, TRIVIAL[language]), bare_run(program, scratch)
            if i >= WARMUP:
                kernel.append(k)
                bare.append(b)
        return kernel, bare
    finally:
        kc.stop_channels()
        await km.shutdown_kernel()
        shutil.rmtree(scratch, ignore_errors=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="timed cells per language")
    parser.add_argument("languages", nargs="*", default=list(LANGUAGES))
    args = parser.parse_args()
    print(f"{'language':9} {'kernel ms':>10} {'bare ms':>9} {'overhead ms':>12}   (median of {args.n})")
    for language in args.languages:
        missing = [tool for tool, _ in LANGUAGES[language].tools if shutil.which(tool) is None]
        if missing:
            print(f"{language:9} skipped: {', '.join(missing)} not installed")
            continue
        kernel, bare = await measure(language, args.n)
        k, b = statistics.median(kernel) * 1000, statistics.median(bare) * 1000
        print(f"{language:9} {k:10.1f} {b:9.1f} {k - b:12.1f}")


if __name__ == "__main__":
    asyncio.run(main())

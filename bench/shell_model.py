"""What reading a shell command line costs the hooks: import time and time per call.

The hooks run on every tool call of an agent. Three consumers read a Bash command line there: the
deny rules (`DenyRules.check_shell`), the fetch routing (`find_printing_fetch`, PreToolUse with a live
server) and the session memory (`shell_events`, PostToolUse). This prints a Markdown table:
- the import time of `context_kernel.hooks.routing` + `context_kernel.hooks.extract` (the median of
  the cumulative `-X importtime` figures over fresh interpreters);
- the time per call of each consumer on a few realistic command lines (the best of the runs).
Nothing is asserted. Usage (repo root): `python bench/shell_model.py [--runs 15]`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable

from context_kernel.hooks.shell_commands import shell_events
from context_kernel.hooks.shell_fetch import find_printing_fetch
from context_kernel.security import DenyRules

COMMANDS: dict[str, str] = {
    "plain": "pytest -q tests/test_totals.py",
    "fetch": "curl -sS https://docs.python.org/3/library/shlex.html | jq .",
    "git chain": "cd src && git add -A && git commit -m 'Fix rounding' && git push -u origin fix/rounding",
    "heredoc commit": ("git add -A && git commit -m \"$(cat <<'EOF'\nFix rounding in cart totals\n\n"
                       "Co-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\""),
    "python heredoc": ("python3 - <<'EOF'\nimport urllib.request\n"
                       "print(urllib.request.urlopen('https://a.io/x').read()[:200])\nEOF"),
    "4 KB script": "set -e\n" + "echo step; ls -la build | grep -v tmp > /dev/null\n" * 80,
}
RULES = DenyRules.from_strings(["Bash(rm -rf *)", "Bash(git push:*)", "Bash(curl:*)"])
IMPORTS = "import context_kernel.hooks.routing, context_kernel.hooks.extract"
TOP = ("context_kernel.hooks.routing", "context_kernel.hooks.extract")
# The modules that read command lines (before and after they shared one model), and shlex.
PARSERS = ("context_kernel.hooks.shell_fetch", "context_kernel.hooks.shell_commands", "context_kernel.shell",
           "context_kernel.shell.words", "context_kernel.shell.commands", "shlex")


def import_ms(runs: int) -> tuple[float, float]:
    """Median cumulative import time of the two hook modules, and of the parsers' own (self) time, in ms."""
    totals, parsers = [], []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORTS], capture_output=True, text=True,
                              check=True)
        total = own = 0
        for line in done.stderr.splitlines():
            parts = [part.strip() for part in line.removeprefix("import time:").split("|")]
            if len(parts) != 3 or not parts[0].isdigit():
                continue
            total += int(parts[1]) if parts[2] in TOP else 0
            own += int(parts[0]) if parts[2] in PARSERS else 0
        totals.append(total / 1000)
        parsers.append(own / 1000)
    return statistics.median(totals), statistics.median(parsers)


def per_call_us(func: Callable[[str], object], command: str, runs: int) -> float:
    timer = timeit.Timer(lambda: func(command))
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=runs, number=number)) / number * 1e6  # the least disturbed run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    total, parsers = import_ms(args.runs)
    print(f"import of routing + extract: {total:.1f} ms, of which the command-line parsers' own: {parsers:.1f} ms "
          f"(medians of {args.runs})\n")
    print("| command | chars | check_shell µs | find_printing_fetch µs | shell_events µs |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, command in COMMANDS.items():
        deny = per_call_us(RULES.check_shell, command, args.runs)
        fetch = per_call_us(find_printing_fetch, command, args.runs)
        events = per_call_us(lambda c: shell_events(c, "/p"), command, args.runs)
        print(f"| {name} | {len(command)} | {deny:.0f} | {fetch:.0f} | {events:.0f} |")


if __name__ == "__main__":
    main()

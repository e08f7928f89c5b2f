"""Cost of redacting what the agent's code printed before it is indexed, next to indexing's own
chunking of the same text, in the same run.

Three outputs of 1 MB: an access log (few hints of a secret: the fast path's best case), JSON
records with `key` fields on every line (its worst case: every line is run through every rule)
and the log with the issue's 14-secret probe sprinkled in. For each: `chunk_document` (the
baseline), `redact_text` over the whole text, and `redact_output` (what indexing uses). Prints a
Markdown table; asserts nothing. Usage (repo root): python bench/redaction_speed.py [--mb 1]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from context_kernel.knowledge.chunking import chunk_document
from context_kernel.security.redact import redact_output, redact_text
from context_kernel.security.secret_shapes import default_shapes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.security.secret_probe import PROBE

RUNS = 5


def access_log(size: int, rng: random.Random) -> str:
    lines = []
    while sum(len(line) + 1 for line in lines) < size:
        i = len(lines)
        lines.append(f"2026-01-01T00:00:{i % 60:02d} INFO worker-{i % 7} GET /api/items/{rng.randrange(10**6)} "
                     f"in {rng.random():.3f}s status=200")
    return "\n".join(lines)


def json_records(size: int, rng: random.Random) -> str:
    lines = []
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(json.dumps({"key": f"item-{rng.randrange(10**6)}", "value": rng.random(), "tags": ["a", "b"]}))
    return "\n".join(lines)


def with_probe(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for secret in PROBE.values():
        lines.insert(rng.randrange(len(lines)), secret)
    return "\n".join(lines)


def median_ms(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=1.0)
    args = parser.parse_args()
    size = int(args.mb * 1024 * 1024)
    rng = random.Random(14)
    log = access_log(size, rng)
    texts = {"access log": log, "JSON records": json_records(size, rng), "log + probe": with_probe(log, rng)}
    default_shapes()  # read detect-secrets' plugins before timing (once per server process)
    print(f"| {args.mb:g} MB output | chunking ms | redact_text ms | redact_output ms | redact_output × chunking |")
    print("|---|---:|---:|---:|---:|")
    for name, text in texts.items():
        chunk = median_ms(lambda t=text: chunk_document(t, name="output.txt"))
        whole = median_ms(lambda t=text: redact_text(t))
        output = median_ms(lambda t=text: redact_output(t))
        print(f"| {name} | {chunk:.0f} | {whole:.0f} | {output:.0f} | {output / chunk:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

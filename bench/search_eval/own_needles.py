"""Needle-in-a-large-output cases written from the issue text, until the blind generator exists.

    python bench/search_eval/own_needles.py --out DIR --split dev|test

Writes DIR/cases.jsonl (one case a line: id, kind, file, intent, needles) and the files it names.
Each file is a large output (a log, a test run, a build, a table) with a few planted needle lines;
the intent is how an agent would say what it looks for, often without the needle's own words.
Deterministic per split (the seed is the split's name), so numbers compare across runs.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

Case = tuple[str, list[str], list[str]]  # (intent, lines of the file, needle lines)


def _ts(rng: random.Random, i: int) -> str:
    return f"2026-11-30T12:{(i // 60) % 60:02d}:{i % 60:02d}.{rng.randrange(1000):03d}Z"


def _plant(rng: random.Random, lines: list[str], needles: list[str]) -> None:
    for needle in needles:
        lines.insert(rng.randrange(len(lines) // 10, len(lines)), needle)


def app_log(rng: random.Random) -> Case:
    n = rng.randrange(1500, 4000)
    paths = ["/api/users", "/api/orders", "/health", "/api/cart", "/static/app.js"]
    lines = [f"{_ts(rng, i)} INFO  [worker-{rng.randrange(8)}] GET {rng.choice(paths)} 200 {rng.randrange(3, 40)}ms"
             for i in range(n)]
    needles = [f"{_ts(rng, n)} ERROR [worker-3] database connection lost: server closed the connection unexpectedly"]
    _plant(rng, lines, needles)
    return rng.choice(["why did requests fail", "errors", "what went wrong with the database"]), lines, needles


def slow_request(rng: random.Random) -> Case:
    n = rng.randrange(1000, 3000)
    lines = [f"{_ts(rng, i)} request id={rng.randrange(10**6):06d} path=/api/search took {rng.randrange(20, 90)}ms"
             for i in range(n)]
    needles = [f"{_ts(rng, n)} request id={rng.randrange(10**6):06d} path=/api/search took 48213ms"]
    _plant(rng, lines, needles)
    return rng.choice(["slowest request", "which request was slow", "latency outliers"]), lines, needles


def pytest_run(rng: random.Random) -> Case:
    n = rng.randrange(400, 1200)
    lines = [f"tests/test_mod{i % 40}.py::test_case_{i} PASSED" for i in range(n)]
    needles = [f"tests/test_api.py::test_refund_{k} FAILED" for k in rng.sample(range(100), 3)]
    needles.append("E       AssertionError: expected 200, got 503")
    _plant(rng, lines, needles)
    return rng.choice(["failing tests", "which tests broke", "test failures and why"]), lines, needles


def traceback_in_log(rng: random.Random) -> Case:
    n = rng.randrange(1500, 3000)
    lines = [f"{_ts(rng, i)} DEBUG scheduler tick {i} queue={rng.randrange(50)}" for i in range(n)]
    at = rng.randrange(n // 4, n)
    trace = ["Traceback (most recent call last):", '  File "worker.py", line 88, in run',
             "    result = job.execute()", '  File "jobs.py", line 412, in execute',
             "KeyError: 'customer_id'"]
    lines[at:at] = trace
    return rng.choice(["why did the worker crash", "exception", "what broke"]), lines, [trace[0], trace[-1]]


def access_log(rng: random.Random) -> Case:
    n = rng.randrange(2000, 5000)
    lines = [f'10.0.{rng.randrange(256)}.{rng.randrange(256)} - - [30/Nov/2026:12:{i % 60:02d}:00 +0000] '
             f'"GET /products/{rng.randrange(9999)} HTTP/1.1" 200 {rng.randrange(500, 9000)}' for i in range(n)]
    needles = [f'10.0.3.7 - - [30/Nov/2026:13:0{k}:00 +0000] "POST /checkout HTTP/1.1" 502 0' for k in range(2)]
    _plant(rng, lines, needles)
    return rng.choice(["server errors", "failed checkouts", "any 5xx responses"]), lines, needles


def build_log(rng: random.Random) -> Case:
    n = rng.randrange(800, 2000)
    lines = []
    for i in range(n):
        if rng.random() < 0.1:
            lines.append(f"src/module{i % 30}.c:{rng.randrange(900)}:5: warning: unused variable 'tmp{i}' "
                         "[-Wunused-variable]")
        else:
            lines.append(f"  CC      src/module{i % 30}/file{i}.o")
    needles = [f"src/net/socket.c:{rng.randrange(900)}:12: error: 'SO_REUSEPORT' undeclared (first use in this "
               "function)", "make[2]: *** [Makefile:312: src/net/socket.o] Error 1"]
    _plant(rng, lines, needles)
    return rng.choice(["why does the build fail", "compile errors", "what stopped make"]), lines, needles


def vague(rng: random.Random) -> Case:
    n = rng.randrange(2000, 4000)
    lines = [f"{_ts(rng, i)} INFO sync: copied {rng.randrange(100)} files from bucket-{rng.randrange(9)}"
             for i in range(n)]
    needles = [f"{_ts(rng, n)} WARN sync: checksum mismatch for bucket-4/archive.tar, retrying",
               f"{_ts(rng, n + 1)} FATAL sync: giving up after 5 retries"]
    _plant(rng, lines, needles)
    return rng.choice(["anything unusual?", "summary", "did the sync work", "problems"]), lines, needles


def config_dump(rng: random.Random) -> Case:
    keys = [f"feature.flag_{i}" for i in range(1500)]
    lines = [f"{k} = {rng.choice(['true', 'false', str(rng.randrange(100))])}" for k in keys]
    needles = ["database.pool.max_connections = 12"]
    _plant(rng, lines, needles)
    return rng.choice(["database pool size", "max connections setting"]), lines, needles


def table(rng: random.Random) -> Case:
    n = rng.randrange(1500, 3000)
    lines = ["date,region,orders,revenue"] + [
        f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d},{rng.choice(['eu', 'us', 'apac'])},"
        f"{rng.randrange(10, 90)},{rng.randrange(1000, 9000)}.{rng.randrange(100):02d}" for _ in range(n)]
    needles = ["2026-07-14,us,11,982114.50"]
    _plant(rng, lines, needles)
    return rng.choice(["largest revenue", "outlier rows", "biggest day"]), lines, needles


def kubernetes_events(rng: random.Random) -> Case:
    n = rng.randrange(1000, 2500)
    pods = [f"api-{rng.randrange(16**5):05x}-{rng.randrange(16**4):04x}" for _ in range(30)]
    lines = [f"{_ts(rng, i)} Normal   Pulled     pod/{rng.choice(pods)}   Container image already present"
             for i in range(n)]
    needles = [f"{_ts(rng, n)} Warning  OOMKilled  pod/{pods[3]}   Container api exceeded memory limit (512Mi)",
               f"{_ts(rng, n + 1)} Warning  BackOff    pod/{pods[3]}   Back-off restarting failed container"]
    _plant(rng, lines, needles)
    return rng.choice(["why does the pod restart", "pod problems"]), lines, needles


def user_event(rng: random.Random) -> Case:
    n = rng.randrange(1500, 3000)
    lines = [f"{_ts(rng, i)} audit user=u{rng.randrange(10**5)} action=login result=ok" for i in range(n)]
    needles = [f"{_ts(rng, n)} audit user=u4711 action=delete_account result=ok"]
    _plant(rng, lines, needles)
    return rng.choice(["what did user u4711 do", "account deletions"]), lines, needles


def noisy_warnings(rng: random.Random) -> Case:
    n = rng.randrange(1500, 3000)
    warnings = ["DeprecationWarning: pkg_resources is deprecated", "WARN retrying connection to cache (attempt {a})",
                "WARNING slow query took {b}ms", "warn: config key 'legacy_mode' is ignored"]
    lines = []
    for i in range(n):
        if rng.random() < 0.3:
            lines.append(rng.choice(warnings).format(a=rng.randrange(1, 4), b=rng.randrange(100, 900)))
        else:
            lines.append(f"{_ts(rng, i)} INFO processed batch {i} rows={rng.randrange(1000)}")
    needles = [f"{_ts(rng, n)} ERROR could not write checkpoint: No space left on device"]
    _plant(rng, lines, needles)
    return rng.choice(["why did the job stop", "errors", "what failed"]), lines, needles


def startup(rng: random.Random) -> Case:
    n = rng.randrange(600, 1500)
    mods = ["auth", "billing", "search", "cache", "mailer", "server", "router"]
    lines = [f"{_ts(rng, i)} INFO server: loaded module {rng.choice(mods)} v{rng.randrange(9)}.{rng.randrange(20)}"
             for i in range(n)]
    needles = [f"{_ts(rng, n)} INFO server: listening on 0.0.0.0:8443 (tls)"]
    _plant(rng, lines, needles)
    return rng.choice(["which port does the server listen on", "listening address"]), lines, needles


def json_lines(rng: random.Random) -> Case:
    n = rng.randrange(1500, 3000)
    lines = [json.dumps({"ts": _ts(rng, i), "level": "info", "msg": "cache hit", "key": f"user:{rng.randrange(10**5)}",
                         "ms": rng.randrange(1, 9)}) for i in range(n)]
    needles = [json.dumps({"ts": _ts(rng, n), "level": "error", "msg": "upstream timeout", "key": "user:4711",
                           "ms": 30000})]
    _plant(rng, lines, needles)
    return rng.choice(["what went wrong", "upstream problems"]), lines, needles


KINDS: dict[str, Callable[[random.Random], Case]] = {
    "app_log": app_log, "slow_request": slow_request, "pytest": pytest_run, "traceback": traceback_in_log,
    "access_log": access_log, "build": build_log, "vague": vague, "config": config_dump, "table": table,
    "k8s": kubernetes_events, "audit": user_event,
    "noisy_warnings": noisy_warnings, "startup": startup, "json": json_lines,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--per-kind", type=int, default=2)
    args = parser.parse_args()
    rng = random.Random(args.split)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "cases.jsonl").open("w") as cases:
        for kind, make in KINDS.items():
            for k in range(args.per_kind):
                intent, lines, needles = make(rng)
                name = f"{kind}-{k}.log"
                (args.out / name).write_text("\n".join(lines) + "\n")
                cases.write(json.dumps({"id": f"{kind}-{k}", "kind": kind, "file": name, "intent": intent,
                                        "needles": needles}) + "\n")


if __name__ == "__main__":
    main()

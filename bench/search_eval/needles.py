"""Needle-in-output cases: large, realistic tool outputs with a few answer lines.

    python needles.py --out DIR --split dev|test

writes DIR/<case>.log and DIR/cases.jsonl, one JSON object a line:

    {"id", "kind", "file", "intent", "needles": [exact lines of the file]}

Each case is a tool output of 20-600 KB (web server access log, application
log with stack traces, CI logs, compiler output, database log, kubectl events,
terraform plan, systemd journal, JSON-lines logs, ps/df tables, apt log,
strace, nginx error log) with 1-5 needle lines planted among noise.  The noise
deliberately shares the vocabulary of the intent (lines that say "failed",
"error", "memory", "slow", "destroy"... without being the answer), and the
needle's form varies: an error among warnings, the one failed test among
passes, the single slowest request, a numeric extreme in a table, a rare
message template among common ones.

Everything is derived from a seeded random.Random: the same split always gives
byte-identical files.  dev and test use different seeds and different intent
wordings; tune on dev, report on test.
"""

# ruff: noqa: E501
# (the long lines are the generated log lines themselves, as in bench/scenarios)
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from pathlib import Path

SEEDS = {"dev": 7_301, "test": 90_417}

# ---------------------------------------------------------------- helpers

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "nova", "orion", "vega", "lyra", "atlas", "pluto", "titan",
         "cobalt", "ember", "frost", "harbor", "maple", "quartz", "raven", "sable"]
SERVICES = ["orders", "payments", "catalog", "users", "search", "inventory", "billing",
            "shipping", "auth", "notify", "reports", "gateway"]
HOSTS = [f"ip-10-0-{a}-{b}" for a in (1, 2, 3) for b in (11, 37, 52, 140, 201)]


def clock(rng: random.Random, start: dt.datetime, max_step_ms: int = 900):
    t = start
    while True:
        t += dt.timedelta(milliseconds=rng.randint(1, max_step_ms))
        yield t


def base_time(rng: random.Random) -> dt.datetime:
    return dt.datetime(2025, rng.randint(1, 12), rng.randint(1, 28),
                       rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))


def hexid(rng: random.Random, n: int = 12) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def ip(rng: random.Random) -> str:
    return f"{rng.choice([10, 172, 192, 203, 81, 94])}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


class Doc:
    """Noise lines grown to a byte budget, with needle blocks planted in it."""

    def __init__(self, rng: random.Random, target: int):
        self.rng, self.target = rng, target
        self.lines: list[str] = []
        self.size = 0
        self.pending: list[tuple[int, int, object]] = []
        self.needles: list[str] = []

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line.encode()) + 1

    def at(self, lo: float, hi: float, make) -> None:
        """Emit make() -> (block, needles) once the output has grown to a
        random point between lo and hi of the budget, so that the block gets
        the clock of its neighbours."""
        self.pending.append((int(self.target * self.rng.uniform(lo, hi)), len(self.pending), make))
        self.pending.sort()

    def full(self) -> bool:
        """Loop condition of the generators, called between noise groups."""
        while self.pending and self.size >= self.pending[0][0]:
            block, needles = self.pending.pop(0)[2]()
            for line in block:
                self.add(line)
            self.needles += needles
        return self.size >= self.target and not self.pending

    def plant(self, block: list[str], lo: float = 0.05, hi: float = 0.95) -> None:
        n = len(self.lines)
        at = self.rng.randint(int(n * lo), max(int(n * lo), int(n * hi)))
        self.lines[at:at] = block


# ------------------------------------------------------------- generators
# Each takes (rng, variant, target_bytes) and returns (lines, needles).

def gen_access_log(rng, variant, target):
    """nginx combined log with $request_time; variant 0: the slowest request;
    variant 1: the only 5xx responses among many 4xx and slow-ish 200s."""
    doc = Doc(rng, target)
    tk = clock(rng, base_time(rng), 120)
    paths = ["/api/v1/products", "/api/v1/products/{id}", "/api/v1/cart", "/api/v1/checkout",
             "/api/v1/search?q={w}", "/static/app.{h}.js", "/static/app.{h}.css", "/healthz",
             "/api/v1/users/{id}/orders", "/login", "/api/v1/slow-report/status"]
    agents = ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
              'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148',
              'curl/8.5.0', 'kube-probe/1.29', 'python-requests/2.31.0']

    def line(t, path, status, rt, method=None):
        method = method or rng.choice(["GET"] * 6 + ["POST", "PUT"])
        return (f'{ip(rng)} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "{method} {path} HTTP/1.1" {status} '
                f'{rng.randint(120, 48000)} "-" "{rng.choice(agents)}" rt={rt:.3f} uct=0.001 urt={max(rt - 0.002, 0):.3f}')

    def rpath():
        return rng.choice(paths).format(id=rng.randint(1, 99999), w=rng.choice(WORDS), h=hexid(rng, 8))

    if variant == 0:
        def slowest():
            n = line(next(tk), f"/api/v1/reports/export?year={rng.randint(2019, 2024)}&format=csv", 200,
                     rng.uniform(31.0, 58.0))
            return [n], [n]
        doc.at(0.05, 0.95, slowest)
    else:
        def failed_checkout():
            n = line(next(tk), "/api/v1/checkout", rng.choice([500, 502, 503, 504]), rng.uniform(0.2, 30.0), "POST")
            return [n], [n]
        for _ in range(rng.randint(2, 4)):
            doc.at(0.05, 0.95, failed_checkout)
    while not doc.full():
        if rng.random() < 0.004:  # 5xx on other endpoints: not the answer
            doc.add(line(next(tk), rng.choice(["/api/v1/search?q=" + rng.choice(WORDS), "/api/v1/cart"]),
                         rng.choice([500, 502, 504]), rng.uniform(0.05, 9.0)))
            continue
        status = rng.choices([200, 201, 204, 301, 304, 400, 401, 403, 404, 429], [60, 5, 3, 2, 8, 3, 3, 2, 8, 2])[0]
        rt = rng.expovariate(1 / 0.08)
        if rng.random() < 0.01:
            rt = rng.uniform(2.0, 9.5)  # slow-ish noise requests
        doc.add(line(next(tk), rpath(), status, min(rt, 9.9)))
    return doc.lines, doc.needles


def gen_app_stacktrace(rng, variant, target):
    """Java service log: INFO/WARN with handled exceptions (noise), one
    unhandled exception with a stack trace (needles: ERROR line + cause)."""
    doc = Doc(rng, target)
    tk = clock(rng, base_time(rng), 400)
    svc = rng.choice(SERVICES)
    threads = [f"http-nio-8080-exec-{i}" for i in range(1, 11)] + ["scheduling-1", "kafka-consumer-0"]
    infos = [
        "c.e.{s}.web.RequestLogger - {m} /api/{s}/{id} completed 200 in {ms}ms",
        "c.e.{s}.service.CacheService - cache hit ratio {r}% over last 60s",
        "o.h.engine.jdbc.batch.internal.BatchingBatch - executed batch of {n} statements",
        "c.e.{s}.jobs.ReconcileJob - reconciled {n} records, 0 errors",
        "c.e.{s}.client.RetryingClient - request to inventory succeeded after {k} attempt(s)",
        "c.e.{s}.web.HealthIndicator - health check passed: db=UP kafka=UP",
    ]
    warns = [
        "c.e.{s}.client.RetryingClient - transient exception calling pricing (java.net.SocketTimeoutException: Read timed out), retrying {k}/3",
        "c.e.{s}.web.GlobalExceptionHandler - handled exception for request {id}: ValidationException: field 'email' must not be blank",
        "o.a.k.clients.NetworkClient - [Consumer clientId={s}-0] Connection to node 2 could not be established. Broker may not be available.",
        "c.e.{s}.service.CacheService - cache miss storm detected, {n} misses in 5s",
        "c.z.hikari.pool.HikariPool - HikariPool-1 - Thread starvation or clock leap detected (housekeeper delta={ms}ms).",
    ]

    def ts(t):
        return f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d}"

    def fmt(tpl):
        return tpl.format(s=svc, m=rng.choice(["GET", "POST"]), id=rng.randint(1000, 99999),
                          ms=rng.randint(2, 900), r=rng.randint(70, 99), n=rng.randint(1, 500), k=rng.randint(1, 3))

    def crash():
        t = next(tk)
        if variant == 0:
            head = (f"{ts(t)} ERROR [kafka-consumer-0] c.e.{svc}.consumer.OrderEventListener - "
                    f"Unhandled exception in listener, consumer thread stopping")
            cause = (f"java.lang.NullPointerException: Cannot invoke \"java.math.BigDecimal.multiply(java.math.BigDecimal)\" "
                     f"because the return value of \"com.example.{svc}.model.LineItem.getUnitPrice()\" is null")
            frames = [f"\tat com.example.{svc}.service.TotalsCalculator.lineTotal(TotalsCalculator.java:{rng.randint(40, 90)})",
                      f"\tat com.example.{svc}.consumer.OrderEventListener.onMessage(OrderEventListener.java:{rng.randint(50, 120)})",
                      "\tat org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.doInvokeOnMessage(KafkaMessageListenerContainer.java:2801)"]
            block = [head, cause] + frames
            nd = [head, cause]
        else:
            head = (f"{ts(t)} ERROR [http-nio-8080-exec-{rng.randint(1, 10)}] o.a.c.c.C.[.[.[/].[dispatcherServlet] - "
                    f"Servlet.service() for servlet [dispatcherServlet] threw exception")
            wrap = "org.springframework.dao.DataIntegrityViolationException: could not execute statement; SQL [n/a]"
            cause = (f"Caused by: org.postgresql.util.PSQLException: ERROR: duplicate key value violates unique constraint "
                     f"\"{svc}_external_ref_key\"")
            frames = ["\tat org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2713)",
                      "\tat org.postgresql.core.v3.QueryExecutorImpl.processResults(QueryExecutorImpl.java:2401)",
                      "\t... 97 more"]
            block = [head, wrap, f"\tat com.example.{svc}.repo.Repository.save(Repository.java:{rng.randint(30, 80)})", cause] + frames
            nd = [head, cause]
        return block, nd

    doc.at(0.3, 0.9, crash)
    while not doc.full():
        lvl = rng.choices(["INFO", "WARN", "DEBUG"], [80, 12, 8])[0]
        tpl = rng.choice(warns if lvl == "WARN" else infos)
        doc.add(f"{ts(next(tk))} {lvl:5} [{rng.choice(threads)}] {fmt(tpl)}")
        if lvl == "WARN" and rng.random() < 0.15:
            # handled exceptions also print (short) traces: shared vocabulary
            doc.add("java.net.SocketTimeoutException: Read timed out")
            doc.add("\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)")
            doc.add("\tat java.base/java.net.Socket$SocketInputStream.read(Socket.java:1099)")
            doc.add("\t... 41 common frames omitted")
    return doc.lines, doc.needles


def gen_pytest_ci(rng, variant, target):
    """GitHub-Actions-like CI job with pytest -v: hundreds of PASSED, some
    SKIPPED/XFAIL, test names that contain 'fail'/'error'; one failed test."""
    doc = Doc(rng, target)
    tk = clock(rng, base_time(rng), 300)
    mods = ["api", "models", "billing", "auth", "cache", "workers", "cli", "storage", "retry", "errors"]
    verbs = ["creates", "rejects", "handles_failure_of", "retries_after_error_in", "parses", "serializes",
             "returns_404_for", "validates", "raises_error_on_bad", "migrates"]
    nouns = ["order", "invoice", "user", "token", "payload", "webhook", "upload", "session", "queue_item", "config"]

    def stamp():
        t = next(tk)
        return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}0Z"

    setup = ["##[group]Run actions/checkout@v4", "##[endgroup]", "##[group]Run actions/setup-python@v5",
             "Successfully set up CPython (3.12.3)", "##[endgroup]", "##[group]Run pip install -e '.[test]'",
             "Successfully installed pytest-8.2.0 pytest-cov-5.0.0 pluggy-1.5.0", "##[endgroup]",
             "##[group]Run pytest -v --maxfail=25 -p no:cacheprovider",
             "============================= test session starts ==============================",
             "platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0 -- /opt/hostedtoolcache/Python/3.12.3/x64/bin/python",
             "collected 2874 items"]
    for s in setup:
        doc.add(f"{stamp()} {s}")
    names = []
    failed = f"tests/test_{rng.choice(mods)}.py::test_totals_include_tax_for_{rng.choice(nouns)}"
    progress = []

    def fail_line():
        progress.append(f"{stamp()} {failed} FAILED [{100 * doc.size // target:3d}%]")
        return progress, [progress[0]]

    doc.at(0.1, 0.7, fail_line)
    while not doc.full():
        m = rng.choice(mods)
        name = f"tests/test_{m}.py::test_{rng.choice(verbs)}_{rng.choice(nouns)}_{rng.randint(1, 400)}"
        if name in names:
            continue
        names.append(name)
        r = rng.choices(["PASSED", "SKIPPED (requires redis)", "XFAIL (known flaky upstream, see #4411)"], [94, 4, 2])[0]
        doc.add(f"{stamp()} {name} {r} [{min(100 * doc.size // target, 100):3d}%]")
    if variant == 0:
        exp, got = rng.randint(100, 999), rng.randint(100, 999)
        summary = f"FAILED {failed} - assert {got / 100:.2f} == {exp / 100:.2f}"
    else:
        summary = f"FAILED {failed} - KeyError: 'vat_rate'"
    tail = ["", "=================================== FAILURES ===================================",
            f"_________________ {failed.split('::')[1]} _________________",
            "    def test_totals():", ">       assert order.total == expected", "E       assert failed",
            "=========================== short test summary info ============================",
            summary,
            f"============ 1 failed, {len(names) - 40} passed, 31 skipped, 9 xfailed in 412.77s (0:06:52) ============",
            "##[error]Process completed with exit code 1."]
    needles = list(doc.needles)
    for s in tail:
        doc.add(f"{stamp()} {s}")
        if s == summary:
            needles.append(doc.lines[-1])
    return doc.lines, needles


def gen_jest_ci(rng, variant, target):
    """npm ci + jest: npm WARN deprecated noise, many passing suites, one
    failing test (needles: the ✕ line and the ● header)."""
    doc = Doc(rng, target)
    pkgs = ["inflight@1.0.6", "glob@7.2.3", "rimraf@3.0.2", "har-validator@5.1.5", "request@2.88.2",
            "uuid@3.4.0", "querystring@0.2.0", "stable@0.1.8", "w3c-hr-time@1.0.2", "abab@2.0.6"]
    for p in pkgs:
        doc.add(f"npm WARN deprecated {p}: This module is not supported, and leaks memory. Do not use it.")
    doc.add(f"added {rng.randint(900, 1900)} packages, and audited {rng.randint(1900, 2100)} packages in {rng.randint(20, 90)}s")
    doc.add(f"{rng.randint(3, 12)} vulnerabilities ({rng.randint(1, 5)} moderate, {rng.randint(1, 5)} high)")
    doc.add("> web@3.14.0 test")
    doc.add("> jest --ci --reporters=default")
    comps = ["Cart", "CartSummary", "Checkout", "LoginForm", "ProductList", "SearchBox", "ErrorBoundary",
             "Toast", "OrderHistory", "PaymentForm", "AddressForm", "Header"]
    behaviours = ["renders without crashing", "shows error message when request fails", "handles failed fetch gracefully",
                  "matches snapshot", "calls onSubmit", "disables button while loading", "formats currency",
                  "retries after network error", "renders empty state", "updates total when quantity changes"]
    fail_comp = rng.choice(comps)
    fail_name = rng.choice(["renders checkout total with discount", "applies coupon code before tax",
                            "shows shipping estimate for remote address"])
    suites = 0
    while not doc.full():
        comp = rng.choice(comps)
        suites += 1
        doc.add(f"PASS src/components/{comp}/{comp}.test.tsx ({rng.uniform(0.8, 9.0):.3f} s)")
        doc.add(f"  {comp}")
        for b in rng.sample(behaviours, rng.randint(4, len(behaviours))):
            doc.add(f"    ✓ {b} ({rng.randint(2, 300)} ms)")
        if rng.random() < 0.1:
            doc.add("  console.error")
            doc.add("    Warning: An update to %s inside a test was not wrapped in act(...).")
    x = f"    ✕ {fail_name} ({rng.randint(20, 400)} ms)"
    hdr = f"  ● {fail_comp} › {fail_name}"
    if variant == 0:
        detail = ["    expect(received).toBe(expected) // Object.is equality", "",
                  f'    Expected: "${rng.randint(10, 99)}.{rng.randint(10, 99)}"',
                  f'    Received: "${rng.randint(10, 99)}.{rng.randint(10, 99)}"']
    else:
        detail = ["    TypeError: Cannot read properties of undefined (reading 'amount')", "",
                  f"      at computeTotal (src/components/{fail_comp}/total.ts:{rng.randint(10, 80)}:{rng.randint(5, 40)})"]
    block = [f"FAIL src/components/{fail_comp}/{fail_comp}.test.tsx ({rng.uniform(0.8, 9.0):.3f} s)",
             f"  {fail_comp}", x, ""]
    doc.plant(block, 0.2, 0.8)
    doc.add("")
    doc.add(hdr)
    for d in detail:
        doc.add(d)
    doc.add(f"Test Suites: 1 failed, {suites} passed, {suites + 1} total")
    doc.add(f"Tests:       1 failed, {suites * 8} passed, {suites * 8 + 1} total")
    return doc.lines, [x, hdr]


def gen_gcc_make(rng, variant, target):
    """make -j with gcc: compile lines, many -W warnings (some say 'error'
    in identifiers), one real error (needles: the error: line + make's Error)."""
    doc = Doc(rng, target)
    dirs = ["src/net", "src/core", "src/util", "src/storage", "src/error", "src/io", "lib/parse"]
    files = ["buffer", "conn", "error_report", "hash", "log", "alloc", "queue", "retry", "json", "config", "errno_map"]
    warns = ["warning: unused variable '{v}' [-Wunused-variable]",
             "warning: comparison of integer expressions of different signedness: 'int' and 'size_t' [-Wsign-compare]",
             "warning: '{v}' may be used uninitialized [-Wmaybe-uninitialized]",
             "warning: implicit fallthrough [-Wimplicit-fallthrough=]",
             "note: in expansion of macro 'LOG_ERROR'",
             "warning: format '%d' expects argument of type 'int', but argument 3 has type 'long int' [-Wformat=]"]
    vars_ = ["err", "error_count", "rc", "tmp", "len", "last_error", "fd"]
    doc.add("make[1]: Entering directory '/builds/app'")
    while not doc.full():
        d, f = rng.choice(dirs), rng.choice(files)
        doc.add(f"gcc -O2 -g -Wall -Wextra -Werror=implicit-function-declaration -Iinclude -I{d} -c {d}/{f}.c -o build/{d}/{f}.o")
        if rng.random() < 0.25:
            ln, col = rng.randint(10, 900), rng.randint(1, 60)
            doc.add(f"{d}/{f}.c: In function '{rng.choice(['handle_error', 'conn_close', 'report_errors', 'parse_header', 'retry_io'])}':")
            doc.add(f"{d}/{f}.c:{ln}:{col}: {rng.choice(warns).format(v=rng.choice(vars_))}")
            doc.add(f"  {ln} |     int {rng.choice(vars_)} = 0;")
        if rng.random() < 0.05:
            doc.add(f"ar rcs build/lib{rng.choice(['core', 'net', 'util'])}.a build/*.o")
    f = rng.choice(files)
    ln = rng.randint(100, 700)
    if variant == 0:
        err = f"src/storage/{f}.c:{ln}:17: error: 'struct page_header' has no member named 'checksum'"
        block = [f"src/storage/{f}.c: In function 'page_verify':", err,
                 f"  {ln} |     if (hdr->checksum != crc32c(buf, len))", "      |                 ^~"]
    else:
        err = f"src/net/{f}.c:{ln}:5: error: implicit declaration of function 'ssl_ctx_set_ciphers'; did you mean 'ssl_ctx_set_cipher_list'? [-Werror=implicit-function-declaration]"
        block = [f"src/net/{f}.c: In function 'tls_init':", err, f"  {ln} |     ssl_ctx_set_ciphers(ctx, cfg->ciphers);"]
    doc.plant(block, 0.5, 0.9)
    mk = f"make[1]: *** [Makefile:{rng.randint(40, 200)}: build/{'src/storage' if variant == 0 else 'src/net'}/{f}.o] Error 1"
    doc.add(mk)
    doc.add("make[1]: Leaving directory '/builds/app'")
    doc.add("make: *** [Makefile:23: all] Error 2")
    return doc.lines, [err, mk]


def gen_cargo(rng, variant, target):
    """cargo build: Compiling ... lines, warnings, one error[E....] (needles:
    the error line and its --> location)."""
    doc = Doc(rng, target)
    crates = ["serde", "serde_json", "tokio", "hyper", "regex", "rand", "clap", "anyhow", "thiserror",
              "tracing", "bytes", "futures", "libc", "syn", "quote", "proc-macro2", "once_cell", "errno",
              "error-chain", "failure", "memchr", "smallvec", "parking_lot", "mio", "socket2", "h2"]
    doc.add("    Updating crates.io index")
    i = 0
    while not doc.full():
        c = rng.choice(crates)
        doc.add(f"   Compiling {c} v{rng.randint(0, 2)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}")
        i += 1
        if rng.random() < 0.12:
            ln = rng.randint(5, 400)
            w = rng.choice(["unused variable: `err`", "unused import: `std::error::Error`",
                            "field `retries` is never read", "value assigned to `failed` is never read",
                            "unused `Result` that must be used"])
            doc.add(f"warning: {w}")
            doc.add(f"  --> src/{rng.choice(['worker', 'error', 'retry', 'http', 'db'])}.rs:{ln}:{rng.randint(5, 30)}")
            doc.add("   |")
            doc.add(f"{ln:<3}|     let err = do_work();")
            doc.add("   |         ^^^ help: if this is intentional, prefix it with an underscore: `_err`")
            doc.add("   |")
            doc.add("   = note: `#[warn(unused_variables)]` on by default")
            doc.add("")
    ln = rng.randint(20, 300)
    if variant == 0:
        err = "error[E0308]: mismatched types"
        loc = f"  --> src/billing/invoice.rs:{ln}:{rng.randint(9, 40)}"
        block = [err, loc, "   |", f"{ln:<3}|         total_cents: amount * 100,",
                 "   |                      ^^^^^^^^^^^^ expected `u64`, found `f64`", ""]
    else:
        err = "error[E0599]: no method named `retry_with_backoff` found for struct `Client` in the current scope"
        loc = f"  --> src/http/client.rs:{ln}:{rng.randint(9, 40)}"
        block = [err, loc, "   |", f"{ln:<3}|         self.inner.retry_with_backoff(req, 3).await?",
                 "   |                    ^^^^^^^^^^^^^^^^^^ method not found in `Client`", ""]
    doc.plant(block, 0.6, 0.95)
    doc.add(f"warning: `app` (lib) generated {rng.randint(3, 30)} warnings")
    doc.add("error: could not compile `app` (lib) due to 1 previous error; 7 warnings emitted")
    return doc.lines, [err, loc]


def gen_postgres_log(rng, variant, target):
    """PostgreSQL server log. Variant 0: the slowest statement among many
    'duration:' lines; variant 1: the deadlock among lock waits."""
    doc = Doc(rng, target)
    tk = clock(rng, base_time(rng), 700)
    stmts = ["SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT 20",
             "UPDATE inventory SET qty = qty - $1 WHERE sku = $2",
             "INSERT INTO events (kind, payload) VALUES ($1, $2)",
             "SELECT count(*) FROM sessions WHERE expires_at > now()",
             "SELECT p.* FROM products p JOIN categories c ON c.id = p.category_id WHERE c.slug = $1",
             "DELETE FROM carts WHERE updated_at < now() - interval '30 days'"]

    def pfx(t, pid):
        return f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} UTC [{pid}] app@shop"

    def incident():
        t = next(tk)
        pid = rng.randint(30000, 39999)
        if variant == 0:
            nd = [f"{pfx(t, pid)} LOG:  duration: {rng.uniform(48000, 190000):.3f} ms  statement: SELECT date_trunc('day', o.created_at), sum(li.qty * li.price) FROM orders o JOIN line_items li ON li.order_id = o.id GROUP BY 1 ORDER BY 1"]
            return nd, nd
        a, b = rng.randint(30000, 39999), rng.randint(30000, 39999)
        err = f"{pfx(t, pid)} ERROR:  deadlock detected"
        det = (f"{pfx(t, pid)} DETAIL:  Process {a} waits for ShareLock on transaction {rng.randint(10 ** 6, 9 * 10 ** 6)}; blocked by process {b}.")
        block = [err, det,
                 f"{pfx(t, pid)} HINT:  See server log for query details.",
                 f"{pfx(t, pid)} CONTEXT:  while updating tuple (1021,7) in relation \"inventory\"",
                 f"{pfx(t, pid)} STATEMENT:  UPDATE inventory SET qty = qty - 1 WHERE sku = 'SKU-{rng.randint(1000, 9999)}'"]
        return block, [err, det]

    doc.at(0.05, 0.95, incident)
    while not doc.full():
        pid = rng.randint(20000, 29999)
        r = rng.random()
        t = next(tk)
        if r < 0.7:
            doc.add(f"{pfx(t, pid)} LOG:  duration: {rng.expovariate(1 / 40):.3f} ms  statement: {rng.choice(stmts)}")
        elif r < 0.8:
            doc.add(f"{pfx(t, pid)} LOG:  process {pid} still waiting for ShareLock on transaction {rng.randint(10 ** 6, 9 * 10 ** 6)} after 1000.{rng.randint(100, 999)} ms")
            doc.add(f"{pfx(t, pid)} DETAIL:  Process holding the lock: {rng.randint(20000, 29999)}. Wait queue: {pid}.")
        elif r < 0.85:
            doc.add(f"{pfx(t, pid)} LOG:  process {pid} acquired ShareLock on transaction {rng.randint(10 ** 6, 9 * 10 ** 6)} after {rng.randint(1000, 4000)}.{rng.randint(100, 999)} ms")
        elif r < 0.9:
            doc.add(f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} UTC [{rng.randint(100, 999)}] LOG:  checkpoint complete: wrote {rng.randint(100, 9000)} buffers ({rng.uniform(0, 9):.1f}%); 0 WAL file(s) added, 1 removed, 0 recycled; write={rng.uniform(1, 200):.3f} s, sync=0.011 s, total={rng.uniform(1, 200):.3f} s")
        elif r < 0.95:
            doc.add(f"{pfx(t, pid)} ERROR:  duplicate key value violates unique constraint \"events_pkey\"")
            doc.add(f"{pfx(t, pid)} DETAIL:  Key (id)=({rng.randint(1, 10 ** 6)}) already exists.")
        else:
            doc.add(f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} UTC [{rng.randint(100, 999)}] LOG:  automatic vacuum of table \"shop.public.events\": index scans: 1, pages: 0 removed, {rng.randint(1000, 90000)} remain")
    return doc.lines, doc.needles


def gen_k8s_events(rng, variant, target):
    """kubectl get events -A: Normal noise, Warnings about probes/scheduling
    with 'memory' and 'killing' words; needle: OOMKilled / evicted pod."""
    doc = Doc(rng, target)
    nss = ["default", "shop", "payments", "monitoring", "kube-system", "ingress-nginx"]
    doc.add(f"{'NAMESPACE':<14}{'LAST SEEN':<11}{'TYPE':<9}{'REASON':<22}{'OBJECT':<52}MESSAGE")

    def pod(ns):
        return f"pod/{rng.choice(SERVICES)}-{hexid(rng, 10)}-{hexid(rng, 5)}"

    normals = [("Scheduled", "Successfully assigned {ns}/{p} to {h}"),
               ("Pulled", "Container image \"registry.example.com/{s}:1.{v}.0\" already present on machine"),
               ("Created", "Created container {s}"), ("Started", "Started container {s}"),
               ("Killing", "Stopping container {s}"),
               ("SuccessfulCreate", "Created pod: {p}"),
               ("ScalingReplicaSet", "Scaled up replica set {s}-{h5} to {n}"),
               ("Pulling", "Pulling image \"registry.example.com/{s}:1.{v}.0\"")]
    warnings = [("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503"),
                ("BackOff", "Back-off pulling image \"registry.example.com/{s}:1.{v}.0\""),
                ("FailedScheduling", "0/9 nodes are available: 3 Insufficient cpu, 6 node(s) didn't match pod anti-affinity rules."),
                ("Unhealthy", "Liveness probe failed: Get \"http://10.2.{n}.4:8080/healthz\": context deadline exceeded")]
    while not doc.full():
        ns = rng.choice(nss)
        p = pod(ns)
        if rng.random() < 0.85:
            reason, msg, typ = *rng.choice(normals), "Normal"
        else:
            reason, msg, typ = *rng.choice(warnings), "Warning"
        svc = p[4:].split("-")[0]
        msg = msg.format(ns=ns, p=p[4:], h=rng.choice(HOSTS), s=svc, v=rng.randint(0, 40),
                         h5=hexid(rng, 10), n=rng.randint(1, 12))
        obj = p if reason not in ("ScalingReplicaSet",) else f"deployment/{svc}"
        doc.add(f"{ns:<14}{str(rng.randint(1, 59)) + 'm':<11}{typ:<9}{reason:<22}{obj:<52}{msg}")
    victim = f"pod/reports-{hexid(rng, 10)}-{hexid(rng, 5)}"
    if variant == 0:
        nd = [f"{'shop':<14}{'4m':<11}{'Warning':<9}{'OOMKilling':<22}{'node/' + rng.choice(HOSTS):<52}"
              f"Memory cgroup out of memory: Killed process {rng.randint(1000, 99999)} (java) total-vm:{rng.randint(4, 9)}012345kB, anon-rss:2097152kB, file-rss:0kB",
              f"{'shop':<14}{'4m':<11}{'Warning':<9}{'BackOff':<22}{victim:<52}"
              f"Back-off restarting failed container reports in pod {victim[4:]}_shop(0c1d2e3f) (last state: OOMKilled, exit code 137)"]
    else:
        nd = [f"{'monitoring':<14}{'12m':<11}{'Warning':<9}{'Evicted':<22}{victim:<52}"
              f"The node was low on resource: memory. Threshold quantity: 100Mi, available: 91232Ki. Container reports was using 3811240Ki, request is 512Mi, has larger consumption of memory."]
    for n in nd:
        doc.plant([n])
    return doc.lines, nd


def gen_terraform(rng, variant, target):
    """terraform plan: many in-place updates (tags), creates; needle: the one
    resource that will be destroyed/replaced and the Plan: summary line."""
    doc = Doc(rng, target)
    doc.add("Terraform used the selected providers to generate the following execution plan. Resource actions are")
    doc.add("indicated with the following symbols:")
    doc.add("  + create")
    doc.add("  ~ update in-place")
    doc.add("-/+ destroy and then create replacement")
    doc.add("")
    doc.add("Terraform will perform the following actions:")
    doc.add("")
    types = ["aws_security_group_rule", "aws_iam_role_policy", "aws_s3_bucket", "aws_lambda_function",
             "aws_cloudwatch_log_group", "aws_ecs_service", "aws_route53_record", "aws_sqs_queue"]
    n_upd = n_add = 0
    while not doc.full():
        tname = rng.choice(types)
        name = f"{rng.choice(SERVICES)}_{rng.choice(WORDS)}_{rng.randint(1, 99)}"
        if rng.random() < 0.8:
            n_upd += 1
            doc.add(f"  # {tname}.{name} will be updated in-place")
            doc.add(f"  ~ resource \"{tname}\" \"{name}\" {{")
            doc.add(f"        id   = \"{name}-{hexid(rng, 8)}\"")
            doc.add("      ~ tags = {")
            doc.add(f"          ~ \"CostCenter\" = \"{rng.randint(1000, 9999)}\" -> \"{rng.randint(1000, 9999)}\"")
            doc.add("            \"ManagedBy\"  = \"terraform\"")
            doc.add("        }")
            doc.add("      ~ lifecycle_note = \"prevent_destroy enabled\" -> \"prevent_destroy enabled; reviewed\"")
            doc.add("        # (9 unchanged attributes hidden)")
            doc.add("    }")
        else:
            n_add += 1
            doc.add(f"  # {tname}.{name} will be created")
            doc.add(f"  + resource \"{tname}\" \"{name}\" {{")
            doc.add("      + arn  = (known after apply)")
            doc.add("      + id   = (known after apply)")
            doc.add(f"      + name = \"{name}\"")
            doc.add("    }")
        doc.add("")
    if variant == 0:
        head = "  # aws_db_instance.orders_primary must be replaced"
        block = [head, "-/+ resource \"aws_db_instance\" \"orders_primary\" {",
                 "      ~ engine_version = \"14.11\" -> \"15.6\"",
                 "      ~ identifier     = \"orders-primary\" -> (known after apply)",
                 "      ~ storage_encrypted = false -> true # forces replacement", "    }", ""]
        n_add += 1
    else:
        head = "  # aws_s3_bucket.invoices_archive will be destroyed"
        block = [head, "  # (because aws_s3_bucket.invoices_archive is not in configuration)",
                 "  - resource \"aws_s3_bucket\" \"invoices_archive\" {",
                 "      - bucket = \"acme-invoices-archive\" -> null", "    }", ""]
    doc.plant(block, 0.2, 0.9)
    summary = f"Plan: {n_add} to add, {n_upd} to change, 1 to destroy."
    doc.add(summary)
    return doc.lines, [head, summary]


def gen_journal(rng, variant, target):
    """journalctl: services starting/stopping, sshd 'Failed password' noise,
    'Deactivated successfully' lines; needle: the unit that failed to start."""
    doc = Doc(rng, target)
    tk = clock(rng, base_time(rng), 2000)
    host = rng.choice(["web-01", "db-02", "worker-03"])
    units = ["nginx.service", "cron.service", "systemd-tmpfiles-clean.service", "logrotate.service",
             "apt-daily.service", "fstrim.service", "certbot.service", "node-exporter.service", "sshd.service"]

    def pre(t, who):
        return f"{t:%b %d %H:%M:%S} {host} {who}"

    def failure():
        t = next(tk)
        unit = "orders-api.service" if variant == 0 else "postgresql@15-main.service"
        pid = rng.randint(1000, 60000)
        if variant == 0:
            why = f"{pre(t, f'orders-api[{pid}]:')} Error: listen EADDRINUSE: address already in use 0.0.0.0:8080"
        else:
            why = (f"{pre(t, f'postgresql@15-main[{pid}]:')} FATAL:  could not open configuration file "
                   f"\"/etc/postgresql/15/main/postgresql.conf\": Permission denied")
        fail = f"{pre(t, 'systemd[1]:')} Failed to start {unit[:-8]}."
        block = [f"{pre(t, 'systemd[1]:')} Starting {unit[:-8]}...", why,
                 f"{pre(t, 'systemd[1]:')} {unit}: Main process exited, code=exited, status=1/FAILURE",
                 f"{pre(t, 'systemd[1]:')} {unit}: Failed with result 'exit-code'.", fail]
        return block, [why, fail]

    doc.at(0.05, 0.95, failure)
    while not doc.full():
        t = next(tk)
        r = rng.random()
        u = rng.choice(units)
        if r < 0.3:
            doc.add(f"{pre(t, 'systemd[1]:')} Starting {u[:-8]}...")
            doc.add(f"{pre(t, 'systemd[1]:')} Started {u[:-8]}.")
        elif r < 0.5:
            doc.add(f"{pre(t, 'systemd[1]:')} {u}: Deactivated successfully.")
        elif r < 0.65:
            doc.add(f"{pre(t, f'sshd[{rng.randint(1000, 60000)}]:')} Failed password for invalid user {rng.choice(['admin', 'test', 'oracle', 'ubuntu'])} from {ip(rng)} port {rng.randint(1024, 65000)} ssh2")
        elif r < 0.75:
            doc.add(f"{pre(t, f'CRON[{rng.randint(1000, 60000)}]:')} (root) CMD (/usr/local/bin/backup.sh --incremental)")
        elif r < 0.85:
            doc.add(f"{pre(t, 'kernel:')} [UFW BLOCK] IN=eth0 OUT= SRC={ip(rng)} DST=10.0.1.5 PROTO=TCP SPT={rng.randint(1024, 65000)} DPT=23")
        elif r < 0.92:
            doc.add(f"{pre(t, f'node_exporter[{rng.randint(500, 900)}]:')} level=warn msg=\"failed to read textfile collector directory\" err=\"open /var/lib/node_exporter: no such file or directory\"")
        else:
            doc.add(f"{pre(t, 'systemd[1]:')} Reloading requested from client PID {rng.randint(1000, 9000)} ('systemctl') (unit session-{rng.randint(1, 90)}.scope)...")
    return doc.lines, doc.needles


def gen_jsonl(rng, variant, target):
    """JSON-lines service log. Variant 0: highest latency request (numeric
    extreme); variant 1: the rare 'error' template among many warnings."""
    doc = Doc(rng, target)
    tk = clock(rng, base_time(rng), 150)
    routes = ["/v2/quote", "/v2/orders", "/v2/orders/:id", "/v2/payments", "/v2/refunds", "/v2/webhooks/stripe"]

    def slowest():
        t = next(tk)
        rec = {"ts": f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z", "svc": "payments",
               "trace_id": hexid(rng, 16), "level": "info", "msg": "request completed", "route": "/v2/refunds",
               "status": 200, "latency_ms": round(rng.uniform(21000, 60000), 1)}
        return [json.dumps(rec)], [json.dumps(rec)]

    def capture_failed():
        t = next(tk)
        rec = {"ts": f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z", "svc": "payments",
               "trace_id": hexid(rng, 16), "level": "error", "msg": "payment capture failed",
               "route": "/v2/payments", "provider": "stripe", "error": "card_declined: insufficient_funds",
               "order_id": f"ord_{hexid(rng, 10)}"}
        return [json.dumps(rec)], [json.dumps(rec)]

    if variant == 0:
        doc.at(0.05, 0.95, slowest)
    else:
        for _ in range(rng.randint(1, 3)):
            doc.at(0.05, 0.95, capture_failed)
    while not doc.full():
        t = next(tk)
        r = rng.random()
        rec = {"ts": f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z", "svc": rng.choice(SERVICES),
               "trace_id": hexid(rng, 16)}
        if r < 0.85:
            rec.update(level="info", msg="request completed", route=rng.choice(routes),
                       status=rng.choice([200, 200, 200, 201, 404]), latency_ms=round(rng.expovariate(1 / 60), 1))
        elif r < 0.97:
            rec.update(level="warn", msg=rng.choice(["slow downstream call", "retrying payment provider request",
                                                     "error budget burn rate high", "request completed slowly"]),
                       route=rng.choice(routes), latency_ms=round(rng.uniform(900, 4800), 1), attempt=rng.randint(1, 3))
        else:
            rec.update(level="debug", msg="cache refresh", keys=rng.randint(10, 900))
        doc.add(json.dumps(rec))
    return doc.lines, doc.needles


def gen_ps(rng, variant, target):
    """ps aux: hundreds of processes; needle: highest %MEM (variant 0) or
    highest %CPU (variant 1)."""
    doc = Doc(rng, target)
    doc.add("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND")
    cmds = ["/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main",
            "postgres: 15/main: app shop 10.0.1.7(51234) idle", "nginx: worker process",
            "/usr/bin/python3 -m gunicorn app:wsgi --workers 8", "/usr/sbin/sshd -D", "[kworker/u16:2-events_unbound]",
            "node /srv/web/server.js", "/usr/bin/dockerd -H fd://", "containerd-shim-runc-v2 -namespace moby",
            "/usr/local/bin/node_exporter --collector.textfile", "memcached -m 1024 -p 11211", "redis-server *:6379",
            "/usr/bin/java -Xmx2g -jar /opt/reports/reports.jar"]
    owner = {"postgres": "postgres", "nginx": "www-data", "gunicorn": "app", "node": "app", "memcached": "memcache",
             "redis": "redis", "java": "app"}
    pid = 1
    while not doc.full():
        pid += rng.randint(1, 40)
        cpu = round(rng.expovariate(1 / 1.5), 1)
        mem = round(rng.expovariate(1 / 0.8), 1)
        cpu, mem = min(cpu, 38.0), min(mem, 9.5)
        rss = int(mem * 160000)
        cmd = rng.choice(cmds)
        user = next((u for key, u in owner.items() if key in cmd), "root")
        doc.add(f"{user:<10}{pid:>7} {cpu:>4} {mem:>4} {rss * 3 + 10000:>7} {rss:>6} ?        S    "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}   {rng.randint(0, 90)}:{rng.randint(0, 59):02d} {cmd}")
    pid += 7
    if variant == 0:
        nd = [f"{'app':<10}{pid:>7} {'3.1':>4} {rng.uniform(41, 78):>4.1f} 25165824 12582912 ?        Sl   "
              f"03:12 412:07 /usr/bin/java -Xmx12g -XX:+UseG1GC -jar /opt/reports/reports.jar --batch nightly"]
    else:
        nd = [f"{'www-data':<10}{pid:>7} {rng.uniform(180, 399):>4.1f} {'1.2':>4} 812344 196608 ?        Rl   "
              f"09:41 891:33 php-fpm: pool www (runaway /var/www/export.php)"]
    doc.plant(nd)
    return doc.lines, nd


def gen_df(rng, variant, target):
    """df -h on a container host: hundreds of overlay/tmpfs mounts; needle:
    the nearly full filesystem(s)."""
    doc = Doc(rng, target)
    doc.add("Filesystem      Size  Used Avail Use% Mounted on")
    doc.add(f"{'udev':<16}{'16G':>4}{'0':>6}{'16G':>6}{0:>4}% /dev")
    doc.add(f"{'tmpfs':<16}{'3.2G':>4}{'2.1M':>6}{'3.2G':>6}{1:>4}% /run")
    doc.add(f"{'/dev/nvme0n1p1':<16}{'200G':>4}{'71G':>6}{'129G':>6}{36:>4}% /var/lib/docker")
    while not doc.full():
        use = rng.randint(1, 84)
        if rng.random() < 0.5:
            used = use * 97 // 100
            doc.add(f"{'overlay':<16}{'97G':>4}{str(used) + 'G':>6}{str(97 - used) + 'G':>6}{use:>4}% /var/lib/docker/overlay2/{hexid(rng, 64)}/merged")
        else:
            size = rng.choice(['64M', '128M', '1.0G'])
            doc.add(f"{'tmpfs':<16}{size:>4}{'0':>6}{size:>6}{0:>4}% /var/lib/kubelet/pods/{hexid(rng, 8)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 12)}/volumes/kubernetes.io~projected/kube-api-access-{hexid(rng, 5)}")
    if variant == 0:
        nd = [f"{'/dev/nvme1n1':<16}{'500G':>4}{'496G':>6}{'4.1G':>6}{100:>4}% /var/lib/postgresql"]
    else:
        nd = [f"{'/dev/sda1':<16}{'30G':>4}{'29G':>6}{'712M':>6}{98:>4}% /",
              f"{'/dev/sdb1':<16}{'2.0T':>4}{'1.9T':>6}{'61G':>6}{97:>4}% /mnt/backups"]
    for n in nd:
        doc.plant([n])
    return doc.lines, nd


def gen_apt(rng, variant, target):
    """apt-get install log in its real phases (Get, unpack, setting up) for
    packages whose names contain 'error'/'fail', with W: warnings and debconf
    noise; needle: the dpkg configure error (variant 0) or, in a second
    apt-get run, the package that cannot be found (variant 1)."""
    doc = Doc(rng, target)
    fixed = ["libgpg-error0", "liberror-perl", "libfailsafe2", "libssl3", "curl", "git", "python3-pip",
             "libpq5", "build-essential", "make", "gcc-12", "libc6-dev", "openssh-client", "ca-certificates",
             "libcurl4", "libexpat1", "perl-modules-5.36", "patch", "xz-utils", "libfile-fcntllock-perl",
             "libgpg-error-l10n", "python3-retry", "node-fail-fast", "libexception-class-perl"]
    stems = ["xml", "yaml", "png", "jpeg", "ssl", "ldap", "krb5", "sasl2", "nghttp2", "brotli", "zstd", "icu",
             "sqlite3", "ffi", "gmp", "mpfr", "isl", "tiff", "webp", "gdbm", "readline", "ncurses", "uuid", "event"]
    n_pkgs = max(40, target // 330)
    names: list[str] = list(fixed)
    while len(names) < n_pkgs:
        nm = rng.choice([f"lib{rng.choice(stems)}{rng.randint(0, 9)}", f"lib{rng.choice(stems)}-dev",
                         f"python3-{rng.choice(WORDS)}", f"node-{rng.choice(WORDS)}-{rng.choice(stems)}",
                         f"lib{rng.choice(WORDS)}-{rng.choice(stems)}-perl"])
        if nm not in names:
            names.append(nm)
    rng.shuffle(names)
    vers = {nm: f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}-{rng.randint(1, 9)}" for nm in names}
    doc.add("$ sudo apt-get install -y build-essential libpq-dev python3-pip")
    doc.add("Reading package lists... Done")
    doc.add("Building dependency tree... Done")
    doc.add("Reading state information... Done")
    doc.add("The following additional packages will be installed:")
    for k in range(0, len(names), 8):
        doc.add("  " + " ".join(names[k:k + 8]))
    doc.add(f"0 upgraded, {len(names)} newly installed, 0 to remove and 3 not upgraded.")
    doc.add(f"Need to get {rng.randint(90, 400)} MB of archives.")
    doc.add("W: https://packages.example.com/debian/dists/bookworm/InRelease: Key is stored in legacy trusted.gpg keyring (/etc/apt/trusted.gpg), see the DEPRECATION section in apt-key(8) for details.")
    for k, nm in enumerate(names, 1):
        doc.add(f"Get:{k} http://deb.debian.org/debian bookworm/main amd64 {nm} amd64 {vers[nm]} [{rng.randint(10, 9000)} kB]")
    doc.add(f"Fetched {rng.randint(90, 400)} MB in {rng.randint(5, 60)}s ({rng.uniform(2, 30):.1f} MB/s)")
    doc.add("debconf: delaying package configuration, since apt-utils is not installed")
    files = rng.randint(9000, 20000)
    for k, nm in enumerate(names, 1):
        doc.add(f"Selecting previously unselected package {nm}:amd64.")
        if k == 1 or rng.random() < 0.05:
            doc.add(f"(Reading database ... {files} files and directories currently installed.)")
        files += rng.randint(3, 200)
        doc.add(f"Preparing to unpack .../{k - 1:03d}-{nm}_{vers[nm]}_amd64.deb ...")
        doc.add(f"Unpacking {nm}:amd64 ({vers[nm]}) ...")
    order = list(names)
    rng.shuffle(order)
    broken_at = rng.randint(len(order) // 4, len(order) * 3 // 4)
    nd: list[str] = []
    for k, nm in enumerate(order):
        if variant == 0 and k == broken_at:
            nd = ["dpkg: error processing package postgresql-15 (--configure):",
                  " installed postgresql-15 package post-installation script subprocess returned error exit status 1"]
            doc.add("Setting up postgresql-15 (15.8-0+deb12u1) ...")
            doc.add("Error: could not create default cluster. Please create it manually with")
            doc.add("  pg_createcluster 15 main --start")
            doc.add("or a similar command (see 'man pg_createcluster').")
            for line in nd:
                doc.add(line)
        doc.add(f"Setting up {nm}:amd64 ({vers[nm]}) ...")
        r = rng.random()
        if r < 0.06:
            doc.add(f"update-alternatives: using /usr/bin/{nm}-{rng.randint(1, 9)} to provide /usr/bin/{nm} ({nm}) in auto mode")
        elif r < 0.09:
            doc.add("debconf: unable to initialize frontend: Dialog")
            doc.add("debconf: (TERM is not set, so the dialog frontend is not usable.)")
            doc.add("debconf: falling back to frontend: Readline")
        elif r < 0.11:
            doc.add(f"update-alternatives: warning: skip creation of /usr/share/man/man1/{nm}.1.gz because associated file /usr/share/man/man1/{nm}-2.1.gz (of link group {nm}) doesn't exist")
    doc.add("Processing triggers for libc-bin (2.36-9+deb12u7) ...")
    doc.add("Processing triggers for man-db (2.11.2-2) ...")
    if variant == 0:
        doc.add("Errors were encountered while processing:")
        doc.add(" postgresql-15")
        doc.add("E: Sub-process /usr/bin/dpkg returned an error code (1)")
    else:
        nd = ["E: Unable to locate package libssl1.1"]
        doc.add("$ sudo apt-get install -y libssl1.1 libffi7")
        doc.add("Reading package lists... Done")
        doc.add("Building dependency tree... Done")
        doc.add("Reading state information... Done")
        doc.add(nd[0])
    return doc.lines, nd


def gen_strace(rng, variant, target):
    """strace -f of a service start: many ENOENT on library/config search
    paths (noise); needle: EACCES (variant 0) or ECONNREFUSED (variant 1)."""
    doc = Doc(rng, target)
    pid = rng.randint(1000, 60000)
    t = 1_700_000_000 + rng.randint(0, 10 ** 7)
    us = 0
    libs = ["libssl.so.3", "libcrypto.so.3", "libpq.so.5", "libz.so.1", "libpthread.so.0", "libyaml-0.so.2"]
    dirs = ["/lib/x86_64-linux-gnu/tls", "/usr/local/lib", "/opt/app/lib", "/lib/x86_64-linux-gnu/haswell"]
    fd = 3
    now = {"us": 0}

    def denied():
        us = now["us"] + 77
        ts = f"{t + us // 10 ** 6}.{us % 10 ** 6:06d}"
        if variant == 0:
            n = f"{pid} {ts} openat(AT_FDCWD, \"/var/lib/app/secrets/tls.key\", O_RDONLY) = -1 EACCES (Permission denied)"
        else:
            n = (f"{pid + 2} {ts} connect(17, {{sa_family=AF_INET, sin_port=htons(9092), "
                 f"sin_addr=inet_addr(\"10.0.2.41\")}}, 16) = -1 ECONNREFUSED (Connection refused)")
        return [n], [n]

    doc.at(0.4, 0.95, denied)
    while not doc.full():
        us += rng.randint(5, 900)
        now["us"] = us
        ts = f"{t + us // 10 ** 6}.{us % 10 ** 6:06d}"
        r = rng.random()
        p = pid + rng.randint(0, 4)
        if r < 0.3:
            doc.add(f"{p} {ts} openat(AT_FDCWD, \"{rng.choice(dirs)}/{rng.choice(libs)}\", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)")
        elif r < 0.45:
            doc.add(f"{p} {ts} openat(AT_FDCWD, \"/etc/app/conf.d/{rng.choice(WORDS)}.yaml\", O_RDONLY) = {fd}")
        elif r < 0.6:
            doc.add(f"{p} {ts} read({fd}, \"{rng.choice(WORDS)}: {rng.randint(1, 999)}\\n\"..., 4096) = {rng.randint(10, 4096)}")
        elif r < 0.7:
            doc.add(f"{p} {ts} close({fd}) = 0")
        elif r < 0.8:
            doc.add(f"{p} {ts} mmap(NULL, {rng.randint(4, 900) * 4096}, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f{hexid(rng, 10)}")
        elif r < 0.88:
            doc.add(f"{p} {ts} stat(\"/etc/app/{rng.choice(WORDS)}.override\", 0x7ffd{hexid(rng, 8)}) = -1 ENOENT (No such file or directory)")
        elif r < 0.95:
            doc.add(f"{p} {ts} connect({fd}, {{sa_family=AF_INET, sin_port=htons({rng.choice([5432, 6379, 443])}), sin_addr=inet_addr(\"10.0.{rng.randint(1, 3)}.{rng.randint(2, 250)}\")}}, 16) = 0")
        else:
            doc.add(f"{p} {ts} futex(0x7f{hexid(rng, 10)}, FUTEX_WAIT_PRIVATE, 0, NULL) = -1 EAGAIN (Resource temporarily unavailable)")
        fd = rng.randint(3, 40)
    return doc.lines, doc.needles


def gen_nginx_error(rng, variant, target):
    """nginx error.log: [warn]/[notice]/[info] noise incl. 'worker process
    exited with code 0' and upstream warnings; needle: the crash or the
    upstream timeouts of one backend."""
    doc = Doc(rng, target)
    tk = clock(rng, base_time(rng), 1500)

    def crash():
        t = next(tk)
        n = f"{t:%Y/%m/%d %H:%M:%S} [alert] 1#1: worker process {rng.randint(1000, 9000)} exited on signal 11 (core dumped)"
        return [n], [n]

    def timeout():
        t = next(tk)
        pid = rng.randint(1000, 9000)
        n = (f"{t:%Y/%m/%d %H:%M:%S} [error] {pid}#{pid}: *{rng.randint(10 ** 5, 10 ** 7)} upstream timed out "
             f"(110: Connection timed out) while reading response header from upstream, client: {ip(rng)}, "
             f"server: shop.example.com, request: \"POST /api/v1/checkout HTTP/1.1\", "
             f"upstream: \"http://10.0.3.17:8080/api/v1/checkout\"")
        return [n], [n]

    if variant == 0:
        doc.at(0.05, 0.95, crash)
    else:
        for _ in range(rng.randint(2, 4)):
            doc.at(0.05, 0.95, timeout)
    while not doc.full():
        t = next(tk)
        pid = rng.randint(1000, 9000)
        c = rng.randint(10 ** 5, 10 ** 7)
        r = rng.random()
        pre = f"{t:%Y/%m/%d %H:%M:%S}"
        if r < 0.35:
            doc.add(f"{pre} [warn] {pid}#{pid}: *{c} an upstream response is buffered to a temporary file /var/cache/nginx/proxy_temp/{rng.randint(1, 9)}/{rng.randint(10, 99)}/{rng.randint(10 ** 9, 10 ** 10)} while reading upstream, client: {ip(rng)}, server: shop.example.com, request: \"GET /api/v1/products HTTP/1.1\", upstream: \"http://10.0.1.{rng.randint(2, 9)}:8080/api/v1/products\"")
        elif r < 0.55:
            doc.add(f"{pre} [info] {pid}#{pid}: *{c} client {ip(rng)} closed keepalive connection")
        elif r < 0.65:
            doc.add(f"{pre} [notice] 1#1: worker process {pid} exited with code 0")
        elif r < 0.72:
            doc.add(f"{pre} [notice] 1#1: signal 1 (SIGHUP) received from {rng.randint(100, 999)}, reconfiguring")
        elif r < 0.85:
            doc.add(f"{pre} [error] {pid}#{pid}: *{c} open() \"/usr/share/nginx/html/{rng.choice(['favicon.ico', 'robots.txt', 'wp-login.php', '.env'])}\" failed (2: No such file or directory), client: {ip(rng)}, server: shop.example.com")
        else:
            doc.add(f"{pre} [warn] {pid}#{pid}: *{c} upstream server temporarily disabled while connecting to upstream, client: {ip(rng)}, server: shop.example.com, upstream: \"http://10.0.1.{rng.randint(2, 9)}:8080/\"")
    return doc.lines, doc.needles


# ----------------------------------------------------------------- table
# kind -> (generator, {variant: {"dev": [intents], "test": [intents]}})

KINDS = {
    "access-log": (gen_access_log, {
        0: {"dev": ["which request was the slowest"], "test": ["find the request that took the longest to respond"]},
        1: {"dev": ["show the server errors (5xx) on checkout"], "test": ["did checkout return any 500-type errors"]}}),
    "app-stacktrace": (gen_app_stacktrace, {
        0: {"dev": ["what exception killed the consumer"], "test": ["why did the kafka listener stop"]},
        1: {"dev": ["what is the root cause of the servlet exception"], "test": ["which database error made the request fail"]}}),
    "pytest-ci": (gen_pytest_ci, {
        0: {"dev": ["which test failed"], "test": ["what broke in this CI run"]},
        1: {"dev": ["which test failed and with what error"], "test": ["name the failing test case"]}}),
    "jest-ci": (gen_jest_ci, {
        0: {"dev": ["which jest test is failing"], "test": ["what frontend test broke"]},
        1: {"dev": ["why is the npm test step red"], "test": ["which component test failed"]}}),
    "gcc-build": (gen_gcc_make, {
        0: {"dev": ["why did the build fail"], "test": ["what is the compile error"]},
        1: {"dev": ["what error stopped make"], "test": ["which file does not compile and why"]}}),
    "cargo-build": (gen_cargo, {
        0: {"dev": ["what is the rust compiler error"], "test": ["why does cargo build fail"]},
        1: {"dev": ["where is the compile error in the rust code"], "test": ["which line breaks the cargo build"]}}),
    "postgres-log": (gen_postgres_log, {
        0: {"dev": ["which query is slowest"], "test": ["what was the longest running statement"]},
        1: {"dev": ["was there a deadlock"], "test": ["which processes deadlocked"]}}),
    "k8s-events": (gen_k8s_events, {
        0: {"dev": ["what ran out of memory"], "test": ["which container was OOM killed"]},
        1: {"dev": ["why was the reports pod evicted"], "test": ["which pod got kicked off the node for memory"]}}),
    "terraform-plan": (gen_terraform, {
        0: {"dev": ["will this plan destroy anything"], "test": ["what resource is going to be replaced"]},
        1: {"dev": ["is anything being deleted by this plan"], "test": ["which resource will terraform destroy"]}}),
    "systemd-journal": (gen_journal, {
        0: {"dev": ["which service failed to start"], "test": ["why did the unit fail"]},
        1: {"dev": ["why did the database service not come up"], "test": ["what failed during boot"]}}),
    "jsonl-log": (gen_jsonl, {
        0: {"dev": ["which request had the highest latency"], "test": ["what was the slowest call"]},
        1: {"dev": ["were there any errors"], "test": ["why did payments fail"]}}),
    "ps-table": (gen_ps, {
        0: {"dev": ["which process uses the most memory"], "test": ["what is eating all the RAM"]},
        1: {"dev": ["which process is using the most CPU"], "test": ["what is hogging the processor"]}}),
    "df-table": (gen_df, {
        0: {"dev": ["which disk is almost full"], "test": ["is any filesystem out of space"]},
        1: {"dev": ["which filesystems are nearly full"], "test": ["where am I running out of disk"]}}),
    "apt-install": (gen_apt, {
        0: {"dev": ["why did the package install fail"], "test": ["what error did dpkg report"]},
        1: {"dev": ["what went wrong with apt-get install"], "test": ["which package could not be installed"]}}),
    "strace": (gen_strace, {
        0: {"dev": ["why does it get permission denied"], "test": ["which file could it not open due to permissions"]},
        1: {"dev": ["which connection was refused"], "test": ["what host and port failed to connect"]}}),
    "nginx-error": (gen_nginx_error, {
        0: {"dev": ["why did the nginx worker crash"], "test": ["did a worker process die abnormally"]},
        1: {"dev": ["which upstream is timing out"], "test": ["why is checkout getting gateway timeouts"]}}),
}


def build(split: str) -> list[tuple[dict, str]]:
    rng = random.Random(SEEDS[split])
    out = []
    for kind, (gen, intents) in KINDS.items():
        for variant in sorted(intents):
            case_rng = random.Random(rng.randrange(2 ** 32))
            target = case_rng.choice([case_rng.randint(22_000, 80_000), case_rng.randint(80_000, 250_000),
                                      case_rng.randint(250_000, 560_000)])
            lines, needles = gen(case_rng, variant, target)
            cid = f"{split}-{kind}-{variant + 1}"
            text = "\n".join(lines) + "\n"
            case = {"id": cid, "kind": kind, "file": f"{cid}.log",
                    "intent": intents[variant][split][0], "needles": needles}
            out.append((case, text))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description="Write needle-in-output cases.")
    ap.add_argument("--out", required=True, help="directory to write the .log files and cases.jsonl")
    ap.add_argument("--split", required=True, choices=sorted(SEEDS))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cases = build(args.split)
    with open(out / "cases.jsonl", "w", encoding="utf-8") as fh:
        for case, text in cases:
            (out / case["file"]).write_text(text, encoding="utf-8")
            fh.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Coding inputs: a source tree, a 2,000-line module, a test tree, an asset tree, dependency files, a failing
build script, a small pytest suite, an OpenAPI spec, a markdown docs folder and an ini file."""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections import Counter
from pathlib import Path

from .words import paragraph

FIXED_MTIME = 1_714_600_000  # 2024-05-01: `ls -l` output does not depend on when the bench ran

PACKAGES = ["billing", "accounts", "catalog", "shipping", "search", "notifications", "reports", "auth", "inventory",
            "pricing", "audit", "support"]


def source_tree(root: Path, rng: random.Random) -> str:
    """Twelve packages of twenty modules; `reconcile_ledger` is defined once and called from about a hundred
    places. Returns the file that defines it."""
    for pkg in PACKAGES:
        for m in range(20):
            path = root / pkg / f"{pkg}_{m:02d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            uses = rng.random() < 0.45
            head = ['"""' + paragraph(rng, 2) + '"""', "", "from __future__ import annotations", ""]
            if uses:
                head.append("from billing.ledger_sync import reconcile_ledger")
            body: list[str] = []
            for f in range(8):
                name = f"{rng.choice(['load', 'apply', 'render', 'check', 'merge', 'sync'])}_{pkg}_{m}_{f}"
                body += ["", "", f"def {name}(record: dict, *, strict: bool = False) -> dict:",
                         f'    """{paragraph(rng, 1)}"""', "    result = dict(record)",
                         f"    result['{rng.choice(['state', 'total', 'owner', 'updated'])}'] = strict"]
                if uses and f % 3 == 0:
                    body.append("    reconcile_ledger(result['account'], period=result.get('period'))")
                body.append("    return result")
            path.write_text("\n".join(head + body) + "\n")
    target = root / "billing" / "ledger_sync.py"
    target.write_text(
        '"""Keeps the general ledger and the payment provider\'s settlements in agreement."""\n\n'
        "from __future__ import annotations\n\n\n"
        "def reconcile_ledger(account: str, *, period: str | None = None, dry_run: bool = False) -> int:\n"
        '    """Match settlements to ledger entries for one account; returns the number of entries fixed."""\n'
        "    fixed = 0\n    for entry in _open_entries(account, period):\n        fixed += _settle(entry, dry_run)\n"
        "    return fixed\n\n\ndef _open_entries(account: str, period: str | None) -> list[dict]:\n    return []\n\n\n"
        "def _settle(entry: dict, dry_run: bool) -> int:\n    return 0 if dry_run else 1\n")
    return "billing/ledger_sync.py"


def big_module(path: Path, rng: random.Random) -> tuple[str, list[str]]:
    """A 2,000-line module. Returns the planted `Scheduler.__init__` default and the abstract methods."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ['"""Job scheduling engine: queues, backends, leases and the scheduler loop."""', "",
             "from __future__ import annotations", "", "import time", ""]
    abstract = ["BaseBackend.submit", "BaseBackend.cancel", "BaseBackend.poll"]
    classes = [f"{rng.choice(['Lease', 'Queue', 'Retry', 'Metric', 'Worker', 'Batch'])}Manager{n}" for n in range(38)]
    for n, cls in enumerate(classes):
        if len(lines) > 1880:
            break
        if n == 12:
            lines += ["", "", "class BaseBackend:", '    """Where jobs actually run; subclasses implement it."""', ""]
            for meth in ("submit", "cancel", "poll"):
                lines += [f"    def {meth}(self, job_id: str) -> None:", f'        """{paragraph(rng, 1)}"""',
                          f"        raise NotImplementedError('{meth} is backend specific')", ""]
        if n == 25:
            lines += ["", "", "class Scheduler:", '    """The main loop: pulls jobs and leases them to workers."""', "",
                      "    def __init__(self, backend: BaseBackend, workers: int = 8, max_inflight: int = 64,",
                      "                 lease_seconds: float = 30.0, clock=time.monotonic) -> None:",
                      "        self.backend = backend", "        self.workers = workers",
                      "        self.max_inflight = max_inflight", "        self.lease_seconds = lease_seconds",
                      "        self.clock = clock", ""]
        lines += ["", "", f"class {cls}:", f'    """{paragraph(rng, 2)}"""', ""]
        for step in range(5):
            lines += [f"    def step_{step}(self, items: list[int], limit: int = {rng.randint(1, 500)}) -> int:",
                      f'        """{paragraph(rng, 1)}"""', "        total = 0", "        for item in items[:limit]:",
                      f"            if item % {rng.randint(2, 9)} == 0:", "                total += item",
                      "            else:", f"                total -= {rng.randint(1, 5)}", "        return total", ""]
    while len(lines) + 3 <= 2000:
        lines += ["", f"def helper_{len(lines)}(value: int) -> int:", f"    return value * {rng.randint(2, 9)}"]
    lines += ["# end of module"] * (2000 - len(lines))
    path.write_text("\n".join(lines) + "\n")
    return "max_inflight", abstract


def test_tree(root: Path, rng: random.Random) -> tuple[int, str, int]:
    """About 1,300 test files in a few dozen directories. Returns the total, the busiest directory and its count."""
    counts: Counter[str] = Counter()
    for area in ["unit", "integration", "e2e"]:
        for pkg in PACKAGES:
            for sub in ["models", "services", "api", "jobs"]:
                d = root / area / pkg / sub
                d.mkdir(parents=True, exist_ok=True)
                n = rng.randint(2, 22) if area != "e2e" else rng.randint(0, 4)
                if (area, pkg, sub) == ("unit", "billing", "services"):
                    n = 61
                for k in range(n):
                    (d / f"test_{sub}_{k:03d}.py").write_text("def test_it():\n    assert True\n")
                (d / "conftest.py").write_text("")
                counts[f"{root.name}/{area}/{pkg}/{sub}"] += n
    top, top_n = counts.most_common(1)[0]
    return sum(counts.values()), top, top_n


def asset_tree(root: Path, rng: random.Random) -> str:
    """About 3,000 sparse files (sizes without the disk space). Returns the largest one."""
    kinds = {"img": ".png", "icons": ".svg", "fonts": ".woff2", "video": ".mp4", "audio": ".ogg", "i18n": ".json"}
    for kind, ext in kinds.items():
        for group in range(25):
            d = root / kind / f"set_{group:02d}"
            d.mkdir(parents=True, exist_ok=True)
            for k in range(20):
                f = d / f"{kind}_{group:02d}_{k:02d}{ext}"
                f.touch()
                os.truncate(f, rng.randint(200, 40_000_000 if kind == "video" else 900_000))
                os.utime(f, (FIXED_MTIME, FIXED_MTIME))
    largest = root / "video" / "set_07" / "keynote_master_4k.mp4"
    largest.touch()
    os.truncate(largest, 1_900_000_000)
    for d in sorted(root.rglob("*"), reverse=True):
        os.utime(d, (FIXED_MTIME, FIXED_MTIME))
    return f"{root.name}/video/set_07/keynote_master_4k.mp4"


def lockfile(path: Path, rng: random.Random) -> tuple[int, list[str]]:
    """An npm lockfile v3 with ~900 packages; three are installed in two versions. Returns the package count and
    the duplicate lines the agent's script prints."""
    syllables = ["re", "act", "lo", "dash", "ch", "alk", "mi", "nim", "at", "ch", "es", "bu", "ild", "pa", "rse",
                 "fast", "glob", "util", "core", "kit", "json", "vite", "ws", "yaml", "tar", "qs"]
    names: set[str] = set()
    while len(names) < 880:
        n = "-".join(rng.choice(syllables) + rng.choice(syllables) for _ in range(rng.randint(1, 2)))
        names.add(f"@{rng.choice(['babel', 'types', 'vitest', 'eslint'])}/{n}" if rng.random() < 0.15 else n)
    packages: dict[str, dict[str, object]] = {"": {"name": "web-app", "version": "1.4.0", "dependencies": {},
                                                   "devDependencies": {}}}

    def entry(name: str, version: str) -> dict[str, object]:
        digest = hashlib.sha512(f"{name}@{version}".encode()).hexdigest()
        e: dict[str, object] = {"version": version,
                                "resolved": f"https://registry.npmjs.org/{name}/-/{name.split('/')[-1]}-{version}.tgz",
                                "integrity": f"sha512-{digest[:86]}==", "license": rng.choice(["MIT", "ISC", "Apache-2.0"])}
        if rng.random() < 0.4:
            e["dev"] = True
        if rng.random() < 0.5:
            e["dependencies"] = {rng.choice(sorted(names)): f"^{rng.randint(0, 9)}.{rng.randint(0, 20)}.0"
                                 for _ in range(rng.randint(1, 4))}
        return e

    for name in sorted(names):
        packages[f"node_modules/{name}"] = entry(name, f"{rng.randint(0, 12)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}")
    planted = {"node_modules/semver": "7.6.0", "node_modules/make-dir/node_modules/semver": "6.3.1",
               "node_modules/glob": "10.3.10", "node_modules/rimraf/node_modules/glob": "7.2.3",
               "node_modules/debug": "4.3.4", "node_modules/express/node_modules/debug": "2.6.9"}
    for key, version in planted.items():
        packages[key] = entry(key.rsplit("node_modules/", 1)[1], version)
    path.write_text(json.dumps({"name": "web-app", "version": "1.4.0", "lockfileVersion": 3, "requires": True,
                                "packages": packages}, indent=2) + "\n")
    versions: dict[str, set[str]] = {}
    for key, meta in packages.items():
        if key:
            versions.setdefault(key[key.rindex("node_modules/") + 13:], set()).add(str(meta["version"]))
    dups = [f"{n}: {', '.join(sorted(v))}" for n, v in versions.items() if len(v) > 1]
    return len(versions), dups


def requirements(path: Path, rng: random.Random) -> list[str]:
    """A requirements file with a few loose pins. Returns the loose lines the agent's script reports."""
    names = ["requests", "urllib3", "idna", "certifi", "charset-normalizer", "pydantic", "pydantic-core", "fastapi",
             "starlette", "uvicorn", "anyio", "sniffio", "h11", "httpx", "httpcore", "sqlalchemy", "alembic",
             "mako", "markupsafe", "jinja2", "click", "rich", "pygments", "typer", "orjson", "python-dateutil",
             "six", "pytz", "tzdata", "numpy", "pandas", "pyarrow", "boto3", "botocore", "s3transfer", "jmespath",
             "redis", "celery", "kombu", "vine", "billiard", "amqp", "structlog", "sentry-sdk", "prometheus-client"]
    loose = {"pandas": "pandas>=2.0", "celery": "celery", "boto3": "boto3~=1.34", "rich": "rich"}
    lines = ["# generated by pip-compile; edit requirements.in instead", "--index-url https://pypi.org/simple", ""]
    for n in names:
        lines.append(loose.get(n, f"{n}=={rng.randint(0, 5)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"))
        lines.append(f"    # via {rng.choice(names)}")
    path.write_text("\n".join(lines) + "\n")
    return [loose[n] for n in names if n in loose]


BUILD_SCRIPT = r"""#!/usr/bin/env bash
# A noisy C++ build (generated): 1,400 compile steps, warnings, and one failure in the middle.
for i in $(seq 1 1400); do
  echo "[$i/1402] CXX build/obj/module_$i.o -c src/module_$i.cc -O2 -Wall -Wextra -std=c++20 -Iinclude -Ithird_party/abseil"
  if (( i % 6 == 0 )); then
    echo "src/module_$i.cc:$(( i % 300 + 10 )):5: warning: unused variable 'tmp_$i' [-Wunused-variable]"
  fi
  if (( i == 733 )); then
    echo "FAILED: build/obj/module_733.o"
    echo "src/module_733.cc:88:12: error: no member named 'frobnicate_v2' in namespace 'ledger'"
    echo "    ledger::frobnicate_v2(entry);"
    echo "    ~~~~~~~~^"
  fi
done
echo "ninja: build stopped: subcommand failed."
exit 1
"""


def build_script(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BUILD_SCRIPT)
    path.chmod(0o755)
    return "src/module_733.cc:88:12: error: no member named 'frobnicate_v2' in namespace 'ledger'"


def pytest_suite(root: Path, rng: random.Random) -> list[str]:
    """30 files of 10 tests; two fail. Returns the failing test ids."""
    root.mkdir(parents=True, exist_ok=True)
    failing = ["test_invoices_17.py::test_case_4", "test_invoices_23.py::test_case_8"]
    for f in range(30):
        body = []
        for t in range(10):
            test_id = f"test_invoices_{f:02d}.py::test_case_{t}"
            a, b = rng.randint(1, 999), rng.randint(1, 999)
            expect = a + b + (1 if test_id in failing else 0)
            body += [f"def test_case_{t}():", f"    assert {a} + {b} == {expect}", ""]
        (root / f"test_invoices_{f:02d}.py").write_text("\n".join(body))
    return failing


def openapi(path: Path, rng: random.Random) -> list[str]:
    """An OpenAPI 3 document of 160 paths. Returns the deprecated operations that page with `cursor`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    resources = ["orders", "customers", "invoices", "refunds", "payouts", "disputes", "coupons", "products",
                 "prices", "subscriptions", "webhooks", "events", "files", "balances", "transfers", "tax_rates"]
    spec: dict[str, object] = {"openapi": "3.0.3", "info": {"title": "Acme Payments API", "version": "2024-05-01"}}
    paths: dict[str, dict[str, object]] = {}
    hits = []
    for r in resources:
        for suffix in ["", "/{id}", "/{id}/history", "/search", "/{id}/lines", "/{id}/notes", "/export",
                       "/{id}/attachments", "/bulk", "/{id}/events"]:
            p = f"/v1/{r}{suffix}"
            ops: dict[str, object] = {}
            for method in (["get", "post"] if "{id}" not in suffix else ["get", "post", "delete"]):
                params = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}] \
                    if "{id}" in suffix else []
                pages = method == "get" and rng.random() < 0.5
                if pages:
                    params += [{"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}},
                               {"name": "cursor", "in": "query", "schema": {"type": "string"},
                                "description": "An opaque cursor from the previous page's next_cursor."}]
                deprecated = rng.random() < 0.12
                ops[method] = {
                    "operationId": f"{method}_{r}{suffix.replace('/', '_').replace('{', '').replace('}', '')}",
                    "summary": paragraph(rng, 1), "description": paragraph(rng, 3), "deprecated": deprecated,
                    "parameters": params, "tags": [r],
                    "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {
                        "type": "object", "properties": {f: {"type": "string", "description": paragraph(rng, 1)}
                                                         for f in ("id", "object", "created", "status", "metadata")}}}}},
                                  "4XX": {"$ref": "#/components/responses/Error"}},
                }
                if pages and deprecated:
                    hits.append(f"GET {p}")
            paths[p] = ops
    spec["paths"] = paths
    spec["components"] = {"responses": {"Error": {"description": "An error object."}}}
    path.write_text(json.dumps(spec, indent=2) + "\n")
    return hits


def docs_folder(root: Path, rng: random.Random) -> tuple[str, str]:
    """Forty markdown guides. Returns the two planted facts: a backoff setting and a signature header."""
    root.mkdir(parents=True, exist_ok=True)
    topics = ["installation", "quickstart", "authentication", "pagination", "errors", "idempotency", "testing",
              "logging", "metrics", "tracing", "timeouts", "proxies", "tls", "caching", "batching", "uploads",
              "downloads", "streaming", "websockets", "migrations", "cli", "configuration", "plugins", "hooks",
              "security", "deployment", "docker", "kubernetes", "serverless", "faq", "changelog", "glossary",
              "limits", "regions", "sandbox", "versioning", "sdk-python", "sdk-node", "retries", "webhooks"]
    for t in topics:
        parts = [f"# {t.replace('-', ' ').title()}", "", paragraph(rng, 4), ""]
        for s in range(6):
            parts += [f"## {t.title()} {rng.choice(['basics', 'options', 'examples', 'pitfalls', 'reference'])} {s}",
                      "", paragraph(rng, 5), "", "```python",
                      f"client = acme.Client(api_key=KEY, {t.replace('-', '_')}_level={s})", "client.request('GET', '/v1/orders')", "```", "", paragraph(rng, 3), ""]
        if t == "retries":
            parts += ["## Exponential backoff", "", ("Failed requests are retried with exponential backoff and jitter. "
                      "The delay doubles after every attempt and never exceeds `max_backoff` seconds."), "",
                      "```python", "from acme import Client, Retry", "",
                      "client = Client(retry=Retry(total=5, backoff_factor=0.5, max_backoff=30))", "```", ""]
        if t == "webhooks":
            parts += ["## Verifying signatures", "", ("Every webhook carries an `X-Acme-Signature` header: the hex "
                      "HMAC-SHA256 of the raw body with your endpoint secret. Compare in constant time."), "",
                      "```python", "import hashlib, hmac", "",
                      "def verify(body: bytes, header: str, secret: bytes) -> bool:",
                      "    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()",
                      "    return hmac.compare_digest(expected, header)", "```", ""]
        (root / f"{t}.md").write_text("\n".join(parts))
    return "max_backoff=30", "X-Acme-Signature"


def app_config(path: Path, rng: random.Random) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    sections = {"server": {"host": "0.0.0.0", "port": "8080", "workers": "4"},
                "database": {"url": "postgresql://app@db:5432/app", "pool_size": "48", "pool_timeout": "12"},
                "cache": {"url": "redis://cache:6379/0", "ttl": "300"}}
    for k in range(30):
        sections[f"feature.{k}"] = {"enabled": rng.choice(["true", "false"]), "rollout": str(rng.randint(0, 100))}
    text = "".join(f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in kv.items()) + "\n" for s, kv in sections.items())
    path.write_text(text)
    return "pool_size = 48"

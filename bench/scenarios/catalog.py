"""The scenarios: for each question, the naive way (its output is what the agent would read) and the calls a
sensible agent makes with our tools, plus the facts the returned text must contain.

The agent's code below is written once, the way an agent would write it after a glance at the file's first
lines; the expected facts come from the generators, not from running that code.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from .model import Call, Scenario, http_body, http_text, literal, shell, sqlite_rows
from .workspace import Workspace


def scenarios(ws: Workspace, url: Callable[[str], str]) -> list[Scenario]:
    return [*_data_analysis(ws), *_web(ws, url), *_codebase(ws), *_builds(ws)]


def _data_analysis(ws: Workspace) -> list[Scenario]:
    s, sen, shop, log, acc = ws.sales, ws.sensors, ws.shop, ws.app_log, ws.access
    return [
        Scenario(
            "sales CSV summary (5 MB)", "rows, revenue by region, best-selling products",
            "cat data/sales.csv", shell("cat data/sales.csv"),
            [Call("ctx_execute", {"language": "python", "code": SALES_CODE})],
            [rf"rows: {s.rows}\b", rf"^{s.top_region}\s+revenue {s.top_region_revenue:.2f}$",
             literal(f"('{s.top_product}', ")]),
        Scenario(
            "sensor regression in R (1 MB CSV)", "power vs temperature slope; hungriest sensor",
            "cat data/sensors.csv", shell("cat data/sensors.csv"),
            [Call("ctx_execute", {"language": "r", "code": SENSORS_R})],
            [rf"rows {sen.rows}, slope {sen.slope:.3f} W per degree", rf"^\s*{sen.top_sensor}\b"]),
        Scenario(
            "SQLite orders table", "orders by status; top paying customer",
            "sqlite3 data/shop.db 'select * from orders'", sqlite_rows("data/shop.db", "select * from orders"),
            [Call("ctx_execute", {"language": "python", "code": SHOP_CODE})],
            [literal(f"('{shop.top_customer}', {shop.top_customer_cents})"), r"\('paid', \d+"]),
        Scenario(
            "top errors in a 20k-line app log", "most frequent error messages; when the errors peaked",
            "cat logs/app.log", shell("cat logs/app.log"),
            [Call("ctx_execute", {"language": "shell", "code": LOG_SHELL}),
             Call("ctx_execute", {"language": "python", "code": LOG_PY})],
            [rf"^\s*{log.top_error_count} {re.escape(log.top_error)}$",
             literal(f"('{log.peak_hour}', {log.peak_hour_errors})")]),
        Scenario(
            "nginx access log latency", "p95 latency per endpoint; where the 5xx come from",
            "cat logs/access.log", shell("cat logs/access.log"),
            [Call("ctx_execute", {"language": "python", "code": ACCESS_CODE})],
            [rf"^{re.escape(acc.slowest_path)}\s+n=\s*\d+ p95={acc.slowest_p95:.3f}s",
             literal(f"('{acc.top_5xx_path}', {acc.top_5xx})")]),
    ]


def _web(ws: Workspace, url: Callable[[str], str]) -> list[Scenario]:
    site = ws.site
    issues_url = url(site.issues)
    return [
        Scenario(
            "issues API JSON: find one issue", "is there an open issue about a memory leak in the parser?",
            "curl <issues.json>", http_body(issues_url),
            [Call("ctx_fetch_and_index", {"url": issues_url, "source": "issues-api"}),
             Call("ctx_search", {"queries": ["memory leak streaming parser"], "source": "issues-api"})],
            [literal(str(site.leak_issue)), literal(site.leak_title)]),
        Scenario(
            "issues API JSON: aggregate", "open issues per label; the oldest open issue",
            "curl <issues.json>", http_body(issues_url),
            [Call("ctx_execute", {"language": "python", "code": ISSUES_CODE.replace("URL", repr(issues_url))})],
            [literal(f"('{site.top_open_label}', {site.top_open_label_count})"),
             rf"oldest open: {site.oldest_open}\b"]),
        Scenario(
            "docs page (Sphinx-like, 45 options)", "default of retry.max_backoff",
            "fetch <configuration.html> as text", http_text(url(site.docs_page)),
            [Call("ctx_fetch_and_index", {"url": url(site.docs_page), "source": "acme-config"}),
             Call("ctx_search", {"queries": ["retry.max_backoff default"], "source": "acme-config"})],
            [literal(site.option), literal(site.option_default)]),
        Scenario(
            "small docs page (tests/web/pages)", "default timeout of the widgetlib client",
            "fetch <widgetlib.html> as text", http_text(url(site.small_page)),
            [Call("ctx_fetch_and_index", {"url": url(site.small_page), "source": "widgetlib"})],
            [r"timeout\W+\|?\s*float\s*\|\s*5\b"]),
    ]


def _codebase(ws: Workspace) -> list[Scenario]:
    total, top_dir, top_n = ws.tests
    n_packages, dups = ws.lock
    default_name, abstract = ws.big_module
    backoff, header = ws.docs_facts
    return [
        Scenario(
            "where is reconcile_ledger defined (240 files)", "which file defines reconcile_ledger?",
            "grep -rn reconcile_ledger src", shell("grep -rn reconcile_ledger src"),
            [Call("ctx_index", {"path": "src", "source": "src"}),
             Call("ctx_search", {"queries": ["def reconcile_ledger"], "source": "src"})],
            [literal(ws.definition_file), literal("def reconcile_ledger(")]),
        Scenario(
            "answer one question about a 2,000-line module", "default of Scheduler(max_inflight); abstract methods",
            "cat engine/scheduler.py", shell("cat engine/scheduler.py"),
            [Call("ctx_execute_file", {"path": "engine/scheduler.py", "language": "python", "code": MODULE_CODE})],
            [rf"'{default_name}': '64'", *(literal(f"abstract: {a}") for a in abstract)]),
        Scenario(
            "test files per directory", "how many test files, and where?",
            "find tests -name 'test_*.py'", shell("find tests -name 'test_*.py'"),
            [Call("ctx_execute", {"language": "python", "code": TESTS_CODE})],
            [rf"total {total} in", rf"^\s*{top_n}\s+{re.escape(top_dir)}$"]),
        Scenario(
            "ls -laR of an asset tree (3,000 files)", "the largest files",
            "ls -laR assets", shell("ls -laR assets"),
            [Call("ctx_execute", {"language": "shell", "code": ASSETS_SHELL})],
            [rf"^1900000000 {re.escape(ws.largest_asset)}$"]),
        Scenario(
            "git log summary (400 commits)", "who commits most; how many fixes",
            "git -C repo log", shell("git -C repo log"),
            [Call("ctx_execute", {"language": "shell", "code": GIT_SHELL})],
            [rf"^\s*{ws.repo.top_author_commits}\t{ws.repo.top_author}$", rf"fix commits: {ws.repo.fix_commits}\b"]),
        Scenario(
            "npm lockfile: duplicated packages (JS)", "which packages are installed in several versions?",
            "cat package-lock.json", shell("cat package-lock.json"),
            [Call("ctx_execute", {"language": "javascript", "code": LOCK_JS})],
            [rf"{n_packages} packages, {len(dups)} with several versions", *(literal(d) for d in dups)]),
        Scenario(
            "requirements.txt: loose pins", "which requirements are not pinned with ==?",
            "cat requirements.txt", shell("cat requirements.txt"),
            [Call("ctx_execute_file", {"path": "requirements.txt", "language": "python", "code": REQS_CODE})],
            [literal(f"{len(ws.loose_requirements)} not pinned: {', '.join(ws.loose_requirements)}")]),
        Scenario(
            "OpenAPI spec (160 paths)", "deprecated operations that page with cursor",
            "cat api/openapi.json", shell("cat api/openapi.json"),
            [Call("ctx_execute_file", {"path": "api/openapi.json", "language": "python", "code": OPENAPI_CODE})],
            [literal(f"deprecated with cursor paging: {ws.deprecated_cursor_ops}")]),
        Scenario(
            "docs folder (40 guides): two questions", "retry backoff settings; webhook signature check",
            # The naive agent is given its best case: it already knows which two files hold the answers.
            "cat docs/retries.md docs/webhooks.md", shell("cat docs/retries.md docs/webhooks.md"),
            [Call("ctx_index", {"path": "docs", "source": "guides"}),
             Call("ctx_search", {"queries": ["retry exponential backoff max_backoff", "verify webhook signature"],
                                 "source": "guides"})],
            [literal(backoff), literal(header), literal("hmac.compare_digest")]),
    ]


def _builds(ws: Workspace) -> list[Scenario]:
    pytest = f"{sys.executable} -m pytest -v -p no:cacheprovider suite"
    return [
        Scenario(
            "build log with one failure (intent)", "why did the build fail?",
            "bash build.sh", shell("bash build.sh"),
            [Call("ctx_execute", {"language": "shell", "code": "bash build.sh", "intent": "error failed"})],
            [literal(ws.build_error), literal("FAILED: build/obj/module_733.o")]),
        Scenario(
            "pytest -v, 300 tests, 2 failing (intent)", "which tests fail and why?",
            "pytest -v suite", shell(pytest),
            [Call("ctx_execute", {"language": "shell", "code": pytest, "intent": "FAILED assert"})],
            [*(literal(t) for t in ws.failing_tests), r"assert \(\d+ \+ \d+\) == \d+"]),
        Scenario(
            "batch: 5 shell commands, 2 queries", "DB pool size; recent billing commits",
            "the 5 commands", shell("; ".join(c["command"] for c in BATCH_COMMANDS)),
            [Call("ctx_batch_execute", {"commands": BATCH_COMMANDS,
                                        "queries": ["database pool_size", "fix billing commit"]})],
            [literal(ws.config_fact), r"fix\(billing\)"]),
    ]


SALES_CODE = """\
import csv, collections
revenue, units = collections.Counter(), collections.Counter()
n = 0
with open("data/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        n += 1
        revenue[row["region"]] += int(row["units"]) * float(row["unit_price"]) * (1 - float(row["discount_pct"]) / 100)
        units[row["product"]] += int(row["units"])
print(f"rows: {n}")
for region, total in revenue.most_common():
    print(f"{region:8} revenue {total:.2f}")
print("top products by units:", units.most_common(3))
"""

SENSORS_R = """\
d <- read.csv("data/sensors.csv")
m <- lm(power_w ~ temp_c, data = d)
cat(sprintf("rows %d, slope %.3f W per degree, R^2 %.3f\\n", nrow(d), coef(m)[["temp_c"]], summary(m)$r.squared))
agg <- aggregate(power_w ~ sensor_id, data = d, FUN = mean)
print(head(agg[order(-agg$power_w), ], 3), row.names = FALSE)
"""

SHOP_CODE = """\
import sqlite3
db = sqlite3.connect("data/shop.db")
print(db.execute("select status, count(*), sum(total_cents) from orders group by status order by 2 desc").fetchall())
print(db.execute("select customer_id, sum(total_cents) from orders where status = 'paid' "
                 "group by customer_id order by 2 desc limit 3").fetchall())
"""

LOG_SHELL = """\
wc -l < logs/app.log
grep -c ' ERROR ' logs/app.log
grep ' ERROR ' logs/app.log | cut -d' ' -f4- | sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -5
"""

LOG_PY = """\
import collections
hours = collections.Counter(line[:13] for line in open("logs/app.log") if " ERROR " in line)
print("errors per hour, busiest:", hours.most_common(3))
"""

ACCESS_CODE = """\
import re, collections
pat = re.compile(r'"GET (?P<path>[^ ?]+)\\S* HTTP/[^"]+" (?P<status>\\d{3}) .* (?P<rt>[\\d.]+)$')
lat, errs = collections.defaultdict(list), collections.Counter()
for line in open("logs/access.log"):
    m = pat.search(line)
    if m:
        lat[m["path"]].append(float(m["rt"]))
        errs[m["path"]] += m["status"].startswith("5")
def p95(xs):
    xs = sorted(xs)
    return xs[int(0.95 * (len(xs) - 1))]
for path, xs in sorted(lat.items(), key=lambda kv: -p95(kv[1]))[:3]:
    print(f"{path:28} n={len(xs):5} p95={p95(xs):.3f}s")
print("5xx by path:", errs.most_common(3))
"""

ISSUES_CODE = """\
import json, urllib.request, collections
issues = json.load(urllib.request.urlopen(URL))
open_ = [i for i in issues if i["state"] == "open"]
labels = collections.Counter(l["name"] for i in open_ for l in i["labels"])
print(len(issues), "issues,", len(open_), "open; open by label:", labels.most_common(4))
oldest = min(open_, key=lambda i: i["created_at"])
print("oldest open:", oldest["number"], oldest["created_at"], oldest["title"])
"""

MODULE_CODE = """\
import ast
tree = ast.parse(FILE_CONTENT)
for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
    for fn in [n for n in cls.body if isinstance(n, ast.FunctionDef)]:
        if cls.name == "Scheduler" and fn.name == "__init__":
            named = fn.args.args[-len(fn.args.defaults):]
            print("Scheduler.__init__ defaults:", {a.arg: ast.unparse(d) for a, d in zip(named, fn.args.defaults)})
        if any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(fn)):
            print(f"abstract: {cls.name}.{fn.name}")
"""

TESTS_CODE = """\
import os, collections
per_dir = collections.Counter()
for d, _, files in os.walk("tests"):
    per_dir[d] += sum(f.startswith("test_") and f.endswith(".py") for f in files)
print("total", sum(per_dir.values()), "in", sum(1 for v in per_dir.values() if v), "directories; busiest:")
for d, n in per_dir.most_common(5):
    print(f"{n:5}  {d}")
"""

ASSETS_SHELL = """\
find assets -type f | wc -l
du -sh --apparent-size assets
find assets -type f -printf '%s %p\\n' | sort -rn | head -5
"""

GIT_SHELL = """\
git -C repo log --oneline | wc -l
git -C repo shortlog -sn HEAD | head -3
echo "fix commits: $(git -C repo log --oneline --grep='^fix' | wc -l)"
git -C repo log -1 --format='last: %h %an %ad %s'
"""

LOCK_JS = """\
const lock = JSON.parse(require("fs").readFileSync("package-lock.json", "utf8"));
const versions = {};
for (const [path, meta] of Object.entries(lock.packages)) {
  if (!path) continue;
  const name = path.slice(path.lastIndexOf("node_modules/") + 13);
  (versions[name] ??= new Set()).add(meta.version);
}
const dup = Object.entries(versions).filter(([, v]) => v.size > 1);
console.log(`${Object.keys(versions).length} packages, ${dup.length} with several versions:`);
for (const [n, v] of dup) console.log(`  ${n}: ${[...v].sort().join(", ")}`);
"""

REQS_CODE = """\
loose = []
for line in FILE_CONTENT.splitlines():
    line = line.split("#")[0].strip()
    if line and not line.startswith("-") and "==" not in line:
        loose.append(line)
print(len(loose), "not pinned:", ", ".join(loose))
"""

OPENAPI_CODE = """\
import json
spec = json.loads(FILE_CONTENT)
hits = []
for path, ops in spec["paths"].items():
    for method, op in ops.items():
        if op.get("deprecated") and "cursor" in {p["name"] for p in op.get("parameters", [])}:
            hits.append(f"{method.upper()} {path}")
print(f"{len(spec['paths'])} paths; deprecated with cursor paging: {hits}")
"""

BATCH_COMMANDS = [
    {"label": "recent commits", "command": "git -C repo log --stat -n 60"},
    {"label": "billing sources", "command": "ls -la src/billing"},
    {"label": "app config", "command": "cat config/app.ini"},
    {"label": "module sizes", "command": "wc -l src/*/*.py"},
    {"label": "log tail", "command": "tail -n 300 logs/app.log"},
]

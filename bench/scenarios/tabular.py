"""Data-analysis inputs: a 5 MB sales CSV, a sensor CSV, an SQLite shop database, an application log and an
nginx access log. Each generator returns the answers computed from exactly what it wrote."""

from __future__ import annotations

import random
import re
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

SALES_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class SalesFacts:
    rows: int
    top_region: str
    top_region_revenue: float
    top_product: str


def sales_csv(path: Path, rng: random.Random) -> SalesFacts:
    path.parent.mkdir(parents=True, exist_ok=True)
    regions = ["north", "south", "east", "west", "central"]
    products = [f"SKU-{rng.randrange(1000, 9999)}" for _ in range(60)]
    channels = ["web", "store", "partner", "phone"]
    prices = {p: f"{rng.uniform(2, 180):.2f}" for p in products}
    revenue: defaultdict[str, float] = defaultdict(float)
    units_by: Counter[str] = Counter()
    lines = ["order_id,date,region,product,channel,units,unit_price,discount_pct,customer_id,ship_days\n"]
    size = len(lines[0])
    order = 100_000
    while size < SALES_BYTES:
        order += 1
        region = rng.choices(regions, weights=[24, 18, 21, 19, 18])[0]
        product = rng.choice(products)
        units, discount = rng.randint(1, 12), rng.choice([0, 0, 0, 5, 10, 15, 20])
        line = (f"{order},2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},{region},{product},"
                f"{rng.choice(channels)},{units},{prices[product]},{discount},C-{rng.randrange(10_000, 99_999)},"
                f"{rng.randint(1, 9)}\n")
        lines.append(line)
        size += len(line)
        # The same expression, on the same parsed strings, as the agent's code in the catalog.
        revenue[region] += int(units) * float(prices[product]) * (1 - float(discount) / 100)
        units_by[product] += units
    path.write_text("".join(lines))
    top_region = max(revenue, key=lambda r: revenue[r])
    top_revenue = revenue[top_region]
    return SalesFacts(len(lines) - 1, top_region, top_revenue, units_by.most_common(1)[0][0])


@dataclass(frozen=True)
class SensorFacts:
    rows: int
    slope: float
    top_sensor: str


def sensors_csv(path: Path, rng: random.Random) -> SensorFacts:
    path.parent.mkdir(parents=True, exist_ok=True)
    sensors = {f"S{n:02d}": rng.uniform(-4, 4) for n in range(24)}
    sensors["S17"] = 19.0  # a sensor drawing clearly more power than the others
    rows: list[tuple[str, float, float]] = []
    lines = ["sensor_id,timestamp,temp_c,humidity_pct,power_w\n"]
    for k in range(20_000):
        sid = rng.choice(list(sensors))
        temp = f"{rng.uniform(-5, 35):.2f}"
        power = f"{12 + 2.5 * float(temp) + sensors[sid] + rng.gauss(0, 3):.3f}"
        lines.append(f"{sid},2024-04-{1 + k // 1000:02d}T{(k // 60) % 24:02d}:{k % 60:02d}:00Z,{temp},"
                     f"{rng.uniform(20, 90):.1f},{power}\n")
        rows.append((sid, float(temp), float(power)))
    path.write_text("".join(lines))
    n = len(rows)
    mx = sum(r[1] for r in rows) / n
    my = sum(r[2] for r in rows) / n
    slope = sum((r[1] - mx) * (r[2] - my) for r in rows) / sum((r[1] - mx) ** 2 for r in rows)
    return SensorFacts(n, slope, "S17")


@dataclass(frozen=True)
class ShopFacts:
    rows: int
    top_customer: str
    top_customer_cents: int


def shop_db(path: Path, rng: random.Random) -> ShopFacts:
    path.parent.mkdir(parents=True, exist_ok=True)
    customers = [f"C-{n:05d}" for n in range(1, 3001)]
    statuses = ["paid"] * 7 + ["refunded", "pending", "cancelled"]
    rows = []
    for k in range(1, 20_001):
        cid = rng.choice(customers)
        rows.append((k, cid, rng.choice(statuses), rng.randint(500, 90_000),
                     f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:00:00",
                     f"{cid.lower()}@example.com", f"{rng.randint(1, 999)} Market Street, Springfield"))
    rows[4711] = (4712, "C-02024", "paid", 2_500_000, "2024-06-01 12:00:00", "c-02024@example.com", "1 Main St")
    with sqlite3.connect(path) as db:
        db.execute("create table orders (id integer primary key, customer_id text, status text, total_cents integer,"
                   " created_at text, email text, shipping_address text)")
        db.executemany("insert into orders values (?, ?, ?, ?, ?, ?, ?)", rows)
    db.close()
    paid: Counter[str] = Counter()
    for r in rows:
        if r[2] == "paid":
            paid[r[1]] += r[3]
    top, cents = paid.most_common(1)[0]
    return ShopFacts(len(rows), top, cents)


@dataclass(frozen=True)
class AppLogFacts:
    lines: int
    top_error: str
    """The most frequent ERROR message with its digits replaced by N (what the agent's sed does)."""
    top_error_count: int
    peak_hour: str
    peak_hour_errors: int


ERRORS = [
    (40, "db: connection pool exhausted (waited {ms} ms, {n} in queue)"),
    (25, "payments: upstream returned 502 for charge ch_{id}"),
    (14, "cache: redis timeout after {ms} ms on GET session:{id}"),
    (9, "worker: job {id} exceeded its deadline of {n} s"),
    (6, "auth: token signature mismatch for client app-{n}"),
]


def app_log(path: Path, rng: random.Random) -> AppLogFacts:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for k in range(20_000):
        hour = 8 + k * 10 // 20_000
        ts = f"2024-05-02T{hour:02d}:{(k // 33) % 60:02d}:{k % 60:02d}.{k % 1000:03d}Z"
        # 14:00-15:00 is an incident: errors are ten times as frequent.
        p_error = 0.12 if hour == 14 else 0.012
        if rng.random() < p_error:
            template = rng.choices([t for _, t in ERRORS], weights=[w for w, _ in ERRORS])[0]
            msg = template.format(ms=rng.randint(100, 9000), n=rng.randint(1, 64), id=rng.randrange(10 ** 6))
            lines.append(f"{ts} ERROR worker-{rng.randint(1, 8)} {msg}")
        elif rng.random() < 0.05:
            lines.append(f"{ts} WARN worker-{rng.randint(1, 8)} slow query took {rng.randint(500, 3000)} ms")
        else:
            path_ = rng.choice(["/api/v1/orders", "/api/v1/users/me", "/api/v1/cart", "/healthz", "/api/v1/search"])
            lines.append(f"{ts} INFO worker-{rng.randint(1, 8)} request handled path={path_} status=200 "
                         f"ms={rng.randint(2, 300)} trace={rng.randrange(16 ** 16):016x}")
    path.write_text("\n".join(lines) + "\n")
    errors = [ln for ln in lines if " ERROR " in ln]
    normalised = Counter(re.sub(r"[0-9]+", "N", ln.split(" ", 3)[3]) for ln in errors)
    top, top_count = normalised.most_common(1)[0]
    hours = Counter(ln[:13] for ln in errors)
    peak, peak_count = hours.most_common(1)[0]
    return AppLogFacts(len(lines), top, top_count, peak, peak_count)


@dataclass(frozen=True)
class AccessFacts:
    lines: int
    slowest_path: str
    slowest_p95: float
    top_5xx_path: str
    top_5xx: int


def access_log(path: Path, rng: random.Random) -> AccessFacts:
    path.parent.mkdir(parents=True, exist_ok=True)
    endpoints = {"/api/v1/orders": 0.05, "/api/v1/search": 0.12, "/api/v1/cart": 0.03, "/api/v1/users/me": 0.02,
                 "/api/v1/reports/export": 0.9, "/static/app.js": 0.004, "/healthz": 0.001}
    agents = ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
              "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Version/17.4 Safari/605.1.15",
              "curl/8.5.0", "python-requests/2.31.0"]
    latency: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    lines = []
    for k in range(15_000):
        ep = rng.choices(list(endpoints), weights=[30, 20, 15, 15, 2, 10, 8])[0]
        rt = round(rng.expovariate(1 / endpoints[ep]), 3)
        status = rng.choices([200, 304, 404, 500, 502, 503], weights=[90, 4, 3, 1, 1, 1])[0]
        if ep == "/api/v1/search" and rng.random() < 0.04:
            status = 503
        query = f"?page={rng.randint(1, 40)}" if ep in ("/api/v1/orders", "/api/v1/search") else ""
        lines.append(f'10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)} - - [02/May/2024:{8 + k // 1500:02d}:'
                     f'{(k // 25) % 60:02d}:{k % 60:02d} +0000] "GET {ep}{query} HTTP/1.1" {status} '
                     f'{rng.randint(200, 90_000)} "-" "{rng.choice(agents)}" {rt:.3f}')
        latency[ep].append(float(f"{rt:.3f}"))
        if status >= 500:
            errors[ep] += 1
    path.write_text("\n".join(lines) + "\n")

    def p95(xs: list[float]) -> float:
        xs = sorted(xs)
        return xs[int(0.95 * (len(xs) - 1))]

    slowest = max(latency, key=lambda ep: p95(latency[ep]))
    top, top_n = errors.most_common(1)[0]
    return AccessFacts(len(lines), slowest, p95(latency[slowest]), top, top_n)

#!/usr/bin/env bash
# Reproduce the case files of the intent evaluation set.
#
#   bash capture.sh OUTDIR            # regenerate the reproducible cases into OUTDIR
#   bash capture.sh OUTDIR --machine  # also re-capture the ones that read this machine's state
#
# Nothing here writes into the repository unless OUTDIR points there. Everything runs in the
# scratch folder /tmp/intent-eval-scratch, which is emptied first and removed at the end.
#
# Two groups of cases:
#   reproducible   made from seeded synthetic data or throwaway projects (pytest, compiler,
#                  pandas, r, data, git, logs, listings, more). Re-running with the same tool
#                  versions gives the same files, except lines holding run times, PIDs or the
#                  current date (pytest/cargo timings, the PostgreSQL log, the traceback's
#                  log times, the ".." line of ls_la_logs.txt).
#   machine state  only with --machine (procs, df, machine): ps/top of a small workload, df of
#                  tmpfs volumes next to / and /dev/shm, and this machine's package logs and
#                  listings (dpkg.log, apt history/term logs, alternatives.log, dpkg -l,
#                  apt-cache policy, pip list/show, ls -la /usr/bin, du /usr/share). They are
#                  committed as captured; re-capturing them elsewhere gives different files and
#                  the needles in the jsonl files would no longer match.
#
# Needs: bash, root (runuser, unshare, mount), python3 with pandas and numpy (PY, default
# python3), Rscript, git, gcc, g++, make, jq, rustc and cargo, go, util-linux (unshare,
# column), procps (ps, top), iproute2, PostgreSQL 15 server binaries (PGBIN, default
# /usr/lib/postgresql/15/bin) and a "postgres" user. Sections can be picked with ONLY:
#   ONLY="pandas r" bash capture.sh OUTDIR
set -euo pipefail

OUT=${1:?usage: capture.sh OUTDIR [--machine]}
MACHINE=${2:-}
PY=${PY:-python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# A fixed scratch path, so that paths printed by the tools are the same on every run.
W=/tmp/intent-eval-scratch
rm -rf "$W"; mkdir -p "$W"
trap 'rm -rf "$W"' EXIT
export LC_ALL=C.UTF-8 TZ=UTC COLUMNS=120

say() { printf '== %s\n' "$*" >&2; }

# Run only some sections: ONLY="pytest compiler" bash capture.sh OUTDIR
want() { [[ -z "${ONLY:-}" || " $ONLY " == *" $1 "* ]]; }

###############################################################################
# Test output: a throwaway invoicing library with passing and failing tests
###############################################################################
sec_pytest() {
  say pytest
  local P=$W/ledgerlite
  mkdir -p "$P/ledgerlite" "$P/tests/data"
  cat > "$P/ledgerlite/__init__.py" <<'PYEOF'
"""ledgerlite: tiny invoicing helpers."""
__version__ = "0.4.1"
PYEOF
  cat > "$P/ledgerlite/money.py" <<'PYEOF'
from decimal import Decimal, ROUND_HALF_UP, InvalidOperation

CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


class MoneyError(ValueError):
    pass


def parse_amount(text):
    """Parse '1,234.50', '$12', '(45.00)' or '-3.5' into a Decimal."""
    s = text.strip()
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative = True
        s = s[1:-1]
    for sym in CURRENCY_SYMBOLS.values():
        s = s.replace(sym, "")
    s = s.replace(",", "").replace(" ", "")
    if s.startswith("-"):
        negative = not negative
        s = s[1:]
    try:
        value = Decimal(s)
    except InvalidOperation:
        raise MoneyError(f"not an amount: {text!r}") from None
    return -value if negative else value


def round_cents(value):
    return Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def format_amount(value, currency="USD", accounting=False):
    value = round_cents(value)
    sym = CURRENCY_SYMBOLS.get(currency, "")
    if currency == "JPY":
        value = value.quantize(Decimal("1"))
        body = f"{abs(value):,}"
    else:
        body = f"{abs(value):,.2f}"
    if value < 0:
        if accounting:
            return f"({sym}{body}"
        return f"-{sym}{body}"
    return f"{sym}{body}"


def split_evenly(total, parts):
    if parts <= 0:
        raise MoneyError("parts must be positive")
    total = round_cents(total)
    base = (total / parts).quantize(Decimal("0.01"), rounding="ROUND_DOWN")
    shares = [base] * parts
    remainder = total - base * parts
    i = 0
    while remainder > 0:
        shares[i] += Decimal("0.01")
        remainder -= Decimal("0.01")
        i += 1
    return shares
PYEOF
  cat > "$P/ledgerlite/dates.py" <<'PYEOF'
import datetime as dt

FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%d.%m.%Y", "%b %d, %Y")


def parse_date(text):
    text = text.strip()
    for fmt in FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unrecognised date: {text!r}")


def business_days_between(start, end):
    """Count weekdays in [start, end)."""
    days = 0
    current = start
    while current < end:
        if current.weekday() < 6:
            days += 1
        current += dt.timedelta(days=1)
    return days


def due_date(issued, net_days=30):
    return issued + dt.timedelta(days=net_days)


def is_overdue(due, today=None):
    today = today or dt.date.today()
    return today > due
PYEOF
  cat > "$P/ledgerlite/invoice.py" <<'PYEOF'
from dataclasses import dataclass, field
from decimal import Decimal

from .money import round_cents


@dataclass
class LineItem:
    sku: str
    description: str
    quantity: int
    unit_price: Decimal

    @property
    def total(self):
        return round_cents(self.unit_price * self.quantity)


@dataclass
class Invoice:
    number: str
    customer: str
    items: list = field(default_factory=list)
    tax_rate: Decimal = Decimal("0")
    discount: Decimal = Decimal("0")

    def add(self, item):
        if item.quantity <= 0:
            raise ValueError(f"quantity must be positive for {item.sku}")
        self.items.append(item)

    @property
    def subtotal(self):
        return sum((i.total for i in self.items), Decimal("0"))

    @property
    def discount_ratio(self):
        return self.discount / self.subtotal

    @property
    def tax(self):
        return round_cents((self.subtotal - self.discount) * self.tax_rate)

    @property
    def total(self):
        return round_cents(self.subtotal - self.discount + self.tax)
PYEOF
  cat > "$P/ledgerlite/csvio.py" <<'PYEOF'
import csv
from decimal import Decimal

from .dates import parse_date
from .money import parse_amount


def read_ledger(path):
    rows = []
    with open(path, newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            rows.append({
                "date": parse_date(rec["date"]),
                "account": rec["account"].strip(),
                "amount": parse_amount(rec["amount"]),
                "memo": rec.get("memo", ""),
            })
    return rows


def balance_by_account(rows):
    out = {}
    for r in rows:
        out[r["account"]] = out.get(r["account"], Decimal("0")) + r["amount"]
    return out
PYEOF
  : > "$P/tests/__init__.py"
  cat > "$P/tests/conftest.py" <<'PYEOF'
import pathlib

import pytest

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture
def ledger_path():
    return DATA / "ledger_2024.csv"


@pytest.fixture
def legacy_export():
    return (DATA / "legacy_export_2019.csv").read_text(encoding="utf-8")
PYEOF
  cat > "$P/tests/data/ledger_2024.csv" <<'PYEOF'
date,account,Amount,memo
2024-01-03,rent,"(2,400.00)",January rent
2024-01-05,sales,"1,250.00",invoice 1001
2024-01-09,sales,980.50,invoice 1002
2024-01-15,software,(49.00),editor licence
PYEOF
  cat > "$P/tests/test_money.py" <<'PYEOF'
import unittest
from decimal import Decimal

from ledgerlite.money import MoneyError, format_amount, parse_amount, round_cents, split_evenly


class ParseAmountTests(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(parse_amount("12.50"), Decimal("12.50"))

    def test_thousands_separator(self):
        self.assertEqual(parse_amount("1,234.50"), Decimal("1234.50"))

    def test_currency_symbol(self):
        self.assertEqual(parse_amount("$99"), Decimal("99"))

    def test_parentheses_are_negative(self):
        self.assertEqual(parse_amount("(45.00)"), Decimal("-45.00"))

    def test_leading_minus(self):
        self.assertEqual(parse_amount("-3.5"), Decimal("-3.5"))

    def test_garbage_raises(self):
        with self.assertRaises(MoneyError):
            parse_amount("twelve dollars")


class FormatAmountTests(unittest.TestCase):
    def test_usd(self):
        self.assertEqual(format_amount(Decimal("1234.5")), "$1,234.50")

    def test_negative_plain(self):
        self.assertEqual(format_amount(Decimal("-8")), "-$8.00")

    def test_negative_accounting(self):
        self.assertEqual(format_amount(Decimal("-1234.5"), accounting=True), "($1,234.50)")

    def test_eur(self):
        self.assertEqual(format_amount(Decimal("0.5"), "EUR"), "€0.50")

    def test_jpy_has_no_decimals(self):
        self.assertEqual(format_amount(Decimal("1500"), "JPY"), "¥1,500")


class RoundingTests(unittest.TestCase):
    def test_half_up(self):
        self.assertEqual(round_cents(Decimal("2.675")), Decimal("2.68"))

    def test_split_evenly_sums_to_total(self):
        shares = split_evenly(Decimal("100"), 3)
        self.assertEqual(sum(shares), Decimal("100.00"))

    def test_split_evenly_first_share_gets_remainder(self):
        self.assertEqual(split_evenly(Decimal("10"), 3)[0], Decimal("3.34"))

    def test_split_evenly_zero_parts(self):
        with self.assertRaises(MoneyError):
            split_evenly(Decimal("10"), 0)

    def test_split_negative_total(self):
        self.assertEqual(sum(split_evenly(Decimal("-10"), 3)), Decimal("-10.00"))
PYEOF
  cat > "$P/tests/test_dates.py" <<'PYEOF'
import datetime as dt

import pytest

from ledgerlite.dates import business_days_between, due_date, is_overdue, parse_date


@pytest.mark.parametrize("text,expected", [
    ("2024-03-01", dt.date(2024, 3, 1)),
    ("01/03/2024", dt.date(2024, 3, 1)),
    ("01.03.2024", dt.date(2024, 3, 1)),
    ("Mar 01, 2024", dt.date(2024, 3, 1)),
    (" 2024-12-31 ", dt.date(2024, 12, 31)),
])
def test_parse_date_formats(text, expected):
    assert parse_date(text) == expected


def test_parse_date_rejects_garbage():
    with pytest.raises(ValueError, match="unrecognised date"):
        parse_date("next tuesday")


def test_business_days_full_week():
    monday = dt.date(2024, 6, 3)
    assert business_days_between(monday, monday + dt.timedelta(days=7)) == 5


def test_business_days_same_day():
    d = dt.date(2024, 6, 3)
    assert business_days_between(d, d) == 0


def test_due_date_net30():
    assert due_date(dt.date(2024, 1, 31)) == dt.date(2024, 3, 1)


def test_is_overdue():
    assert is_overdue(dt.date(2024, 1, 1), today=dt.date(2024, 1, 2))
    assert not is_overdue(dt.date(2024, 1, 2), today=dt.date(2024, 1, 2))
PYEOF
  cat > "$P/tests/test_invoice.py" <<'PYEOF'
from decimal import Decimal

import pytest

from ledgerlite.invoice import Invoice, LineItem


@pytest.fixture
def invoice():
    inv = Invoice(number="INV-1042", customer="Northwind Traders", tax_rate=Decimal("0.2"))
    inv.add(LineItem("SKU-1", "USB-C cable", 3, Decimal("9.99")))
    inv.add(LineItem("SKU-7", "Laptop stand", 1, Decimal("49.00")))
    return inv


def test_subtotal(invoice):
    assert invoice.subtotal == Decimal("78.97")


def test_tax(invoice):
    assert invoice.tax == Decimal("15.79")


def test_total_with_discount(invoice):
    invoice.discount = Decimal("8.97")
    assert invoice.total == Decimal("84.00")


def test_rejects_zero_quantity(invoice):
    with pytest.raises(ValueError):
        invoice.add(LineItem("SKU-9", "Sticker", 0, Decimal("1.00")))


def test_discount_ratio_empty_invoice():
    inv = Invoice(number="INV-1043", customer="Contoso")
    assert inv.discount_ratio == Decimal("0")


@pytest.mark.parametrize("qty", range(1, 41))
def test_line_total_scales(qty):
    item = LineItem("SKU-3", "Notebook", qty, Decimal("2.35"))
    assert item.total == Decimal("2.35") * qty
PYEOF
  cat > "$P/tests/test_csvio.py" <<'PYEOF'
from decimal import Decimal

from ledgerlite.csvio import balance_by_account, read_ledger


def test_read_ledger_rows(ledger_path):
    rows = read_ledger(ledger_path)
    assert len(rows) == 4


def test_balance_by_account(ledger_path):
    balances = balance_by_account(read_ledger(ledger_path))
    assert balances["sales"] == Decimal("2230.50")


def test_legacy_export_has_header(legacy_export):
    assert legacy_export.startswith("date,account,amount")
PYEOF
  cat > "$P/tests/test_ledger_unittest.py" <<'PYEOF'
import datetime as dt
import pathlib
import unittest
from decimal import Decimal

from ledgerlite.csvio import balance_by_account, read_ledger
from ledgerlite.dates import due_date, parse_date
from ledgerlite.invoice import Invoice, LineItem

DATA = pathlib.Path(__file__).parent / "data"


class InvoiceTotalsTests(unittest.TestCase):
    def setUp(self):
        self.inv = Invoice(number="INV-2001", customer="Fabrikam", tax_rate=Decimal("0.07"))
        self.inv.add(LineItem("SKU-12", "Desk lamp", 2, Decimal("24.50")))
        self.inv.add(LineItem("SKU-40", "Monitor arm", 1, Decimal("89.99")))

    def test_subtotal(self):
        self.assertEqual(self.inv.subtotal, Decimal("138.99"))

    def test_tax_is_rounded_to_cents(self):
        self.assertEqual(self.inv.tax, Decimal("9.73"))

    def test_total(self):
        self.assertEqual(self.inv.total, Decimal("148.72"))

    def test_item_count(self):
        self.assertEqual(len(self.inv.items), 2)

    def test_negative_quantity_rejected(self):
        with self.assertRaises(ValueError):
            self.inv.add(LineItem("SKU-1", "Cable", -1, Decimal("3.00")))


class DueDateTests(unittest.TestCase):
    def test_net30_crosses_month(self):
        self.assertEqual(due_date(dt.date(2024, 1, 15)), dt.date(2024, 2, 14))

    def test_net60(self):
        self.assertEqual(due_date(dt.date(2024, 1, 15), net_days=60), dt.date(2024, 3, 15))

    def test_parse_then_due(self):
        self.assertEqual(due_date(parse_date("15.01.2024"), 14), dt.date(2024, 1, 29))

    @unittest.skip("leap-second handling not implemented")
    def test_leap_second(self):
        pass


class LedgerFileTests(unittest.TestCase):
    def test_reads_all_rows(self):
        rows = read_ledger(DATA / "ledger_2024.csv")
        self.assertEqual(len(rows), 4)

    def test_balance_of_rent(self):
        rows = read_ledger(DATA / "ledger_2024.csv")
        self.assertEqual(balance_by_account(rows)["rent"], Decimal("-2400.00"))

    def test_missing_file(self):
        with self.assertRaises(FileNotFoundError):
            read_ledger(DATA / "nope.csv")

    def test_balance_of_empty_ledger(self):
        self.assertEqual(balance_by_account([]), {})
PYEOF
  cat > "$P/tests/test_parse_bulk.py" <<'PYEOF'
import random
from decimal import Decimal

import pytest

from ledgerlite.money import parse_amount

random.seed(7)
CASES = []
for i in range(180):
    cents = random.randint(1, 5_000_000)
    value = Decimal(cents) / 100
    style = i % 4
    if style == 0:
        text = f"{value:.2f}"
    elif style == 1:
        text = f"{value:,.2f}"
    elif style == 2:
        text = f"${value:,.2f}"
        
    else:
        text = f"({value:,.2f})"
        value = -value
    CASES.append((text, value))
CASES.append(("€ 1.234,56", Decimal("1234.56")))
CASES.append(("£12.00", Decimal("12.00")))


@pytest.mark.parametrize("text,expected", CASES)
def test_parse_amount_bulk(text, expected):
    assert parse_amount(text) == expected
PYEOF
  cat > "$P/tests/test_reports.py" <<'PYEOF'
import time

import pytest

from ledgerlite.dates import parse_date


@pytest.mark.parametrize("year", [2021, 2022, 2023, 2024])
def test_yearly_report_generation(year):
    time.sleep(0.05 * (year - 2019))
    assert parse_date(f"{year}-12-31").year == year


def test_quarterly_rollup():
    time.sleep(0.9)
    assert True


def test_month_end_close():
    time.sleep(0.35)
    assert parse_date("2024-02-29").day == 29


@pytest.mark.skip(reason="needs the warehouse database")
def test_warehouse_sync():
    pass
PYEOF
  cat > "$P/pyproject.toml" <<'PYEOF'
[project]
name = "ledgerlite"
version = "0.4.1"

[tool.pytest.ini_options]
testpaths = ["tests"]
PYEOF
  ( cd "$P"
    $PY -m pytest -v -p no:cacheprovider > "$OUT/pytest_verbose.txt" 2>&1 || true
    $PY -m pytest -p no:cacheprovider > "$OUT/pytest_default.txt" 2>&1 || true
    $PY -m pytest -q -p no:cacheprovider --durations=10 tests/test_reports.py tests/test_dates.py tests/test_money.py > "$OUT/pytest_durations.txt" 2>&1 || true
    $PY -m unittest discover -v -s tests -t . > "$OUT/unittest_verbose.txt" 2>&1 || true
    $PY -m pytest -p no:cacheprovider --tb=long -l tests/test_invoice.py tests/test_csvio.py > "$OUT/pytest_tb_long.txt" 2>&1 || true
  )
}
want pytest && sec_pytest

###############################################################################
# Compiler output: gcc warnings + errors, a g++ template error, a make/link
# failure, and a Python traceback
###############################################################################
sec_compiler() {
  say compiler
  local C=$W/inventory
  mkdir -p "$C/src" "$C/include"
  cat > "$C/include/inventory.h" <<'CEOF'
#ifndef INVENTORY_H
#define INVENTORY_H
#include <stddef.h>
#include <stdint.h>

struct item {
    char sku[16];
    char name[64];
    int quantity;
    double unit_price;
    unsigned flags;
};

struct inventory {
    struct item *items;
    size_t count;
    size_t capacity;
    int error_count;
    char last_error[128];
};

int inventory_init(struct inventory *inv, size_t capacity);
int inventory_add(struct inventory *inv, const char *sku, const char *name, int qty, double price);
struct item *inventory_find(struct inventory *inv, const char *sku);
double inventory_value(const struct inventory *inv);
void inventory_report_error(struct inventory *inv, const char *msg);
uint32_t checksum_crc32(const void *data, size_t len);
int inventory_save(const struct inventory *inv, const char *path);
int inventory_load(struct inventory *inv, const char *path);
void inventory_free(struct inventory *inv);
#endif
CEOF
  cat > "$C/src/inventory.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inventory.h"

#define FLAG_DISCONTINUED 0x1
#define FLAG_BACKORDER    0x2

static int error_prone_count;

int inventory_init(struct inventory *inv, size_t capacity)
{
    int error_code;
    inv->items = calloc(capacity, sizeof *inv->items);
    if (!inv->items)
        return -1;
    inv->count = 0;
    inv->capacity = capacity;
    inv->error_count = 0;
    return 0;
}

void inventory_report_error(struct inventory *inv, const char *msg)
{
    inv->error_count++;
    strncpy(inv->last_error, msg, sizeof inv->last_error);
    fprintf(stderr, "inventory error #%d: %s\n", inv->error_count, msg);
}

int inventory_add(struct inventory *inv, const char *sku, const char *name, int qty, double price)
{
    int i;
    if (inv->count == inv->capacity) {
        inventory_report_error(inv, "inventory full");
        return -1;
    }
    for (i = 0; i < inv->count; i++) {
        if (strcmp(inv->items[i].sku, sku) == 0) {
            inv->items[i].quantity += qty;
            return 0;
        }
    }
    struct item *it = &inv->items[inv->count++];
    strncpy(it->sku, sku, sizeof it->sku);
    strncpy(it->name, name, sizeof it->name);
    it->quantity = qty;
    it->unit_price = price;
    return 0;
}

struct item *inventory_find(struct inventory *inv, const char *sku)
{
    for (size_t i = 0; i < inv->count; i++)
        if (strcmp(inv->items[i].sku, sku) == 0)
            return &inv->items[i];
}

double inventory_value(const struct inventory *inv)
{
    double total;
    for (size_t i = 0; i < inv->count; i++) {
        const struct item *it = &inv->items[i];
        if (it->flags & FLAG_DISCONTINUED)
            continue;
        total += it->quantity * it->unit_price;
    }
    return total;
}

static const char *status_name(unsigned flags)
{
    switch (flags) {
    case FLAG_DISCONTINUED:
        return "discontinued";
    case FLAG_BACKORDER:
        error_prone_count++;
    case 0:
        return "active";
    }
    return "unknown";
}

void inventory_print(const struct inventory *inv, FILE *out)
{
    for (size_t i = 0; i < inv->count; i++) {
        const struct item *it = &inv->items[i];
        fprintf(out, "%-15s %-40s %5ld %10.2f %s\n", it->sku, it->name,
                it->quantity, it->unit_price, status_name(it->flags));
    }
    fprintf(out, "items: %d, errors: %s\n", inv->count, inv->error_count);
}

int inventory_restock(struct inventory *inv, const char *sku, int amount)
{
    struct item *it = inventory_find(inv, sku);
    if (it == NULL) {
        inventory_report_error(inv, "unknown sku");
        return -1;
    }
    it->qty += amount;
    it->flags &= ~FLAG_BACKORDER;
    return 0;
}

int inventory_remove(struct inventory *inv, const char *sku, int on_error)
{
    struct item *it = inventory_find(inv, sku);
    if (!it)
        return -1;
    size_t idx = it - inv->items;
    memmove(&inv->items[idx], &inv->items[idx + 1], (inv->count - idx - 1) * sizeof *it);
    inv->count--;
    return 0;
}

int inventory_apply_discount(struct inventory *inv, double percent)
{
    if (percent < 0 || percent > 100) {
        inventory_report_error(inv, "discount out of range");
        return -1
    }
    for (size_t i = 0; i < inv->count; i++)
        inv->items[i].unit_price *= (1.0 - percent / 100.0);
    return 0;
}

void inventory_free(struct inventory *inv)
{
    free(inv->items);
    inv->items = NULL;
    inv->count = inv->capacity = 0;
}
CEOF
  ( cd "$C" && gcc -std=c11 -Wall -Wextra -Wimplicit-fallthrough -O2 -Iinclude -c src/inventory.c -o build_inventory.o \
      > "$OUT/gcc_warnings_errors.txt" 2>&1 || true )

  # g++: a std::set / std::sort of a type without operator<
  cat > "$C/route_planner.cpp" <<'CEOF'
#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

struct Stop {
    std::string code;
    double lat;
    double lon;
};

struct Leg {
    Stop from;
    Stop to;
    int minutes;
};

class RoutePlanner {
public:
    void add_leg(const Stop &a, const Stop &b, int minutes) {
        legs_.push_back({a, b, minutes});
        stops_.insert(a);
        stops_.insert(b);
    }

    std::vector<Leg> fastest(std::size_t n) const {
        std::vector<Leg> out(legs_.begin(), legs_.end());
        std::sort(out.begin(), out.end(),
                  [](const Leg &x, const Leg &y) { return x.minutes < y.minutes; });
        if (out.size() > n) out.resize(n);
        return out;
    }

    std::size_t stop_count() const { return stops_.size(); }

private:
    std::vector<Leg> legs_;
    std::set<Stop> stops_;
};

int main() {
    RoutePlanner p;
    p.add_leg({"AMS", 52.31, 4.76}, {"FRA", 50.03, 8.56}, 75);
    p.add_leg({"FRA", 50.03, 8.56}, {"VIE", 48.11, 16.57}, 80);
    for (const auto &leg : p.fastest(1))
        std::cout << leg.from.code << " -> " << leg.to.code << " " << leg.minutes << "\n";
    std::cout << p.stop_count() << " stops\n";
}
CEOF
  ( cd "$C" && g++ -std=c++17 -Wall -Wextra -c route_planner.cpp -o route_planner.o > "$OUT/gxx_template_error.txt" 2>&1 || true )

  # make: several translation units, warnings, and a link failure
  local M=$W/sensord
  mkdir -p "$M/src" "$M/include"
  cat > "$M/include/sensord.h" <<'CEOF'
#ifndef SENSORD_H
#define SENSORD_H
#include <stddef.h>
#include <stdint.h>
struct reading { uint32_t sensor_id; int64_t ts_ms; double value; };
int config_load(const char *path);
int config_get_int(const char *key, int fallback);
const char *config_get_str(const char *key, const char *fallback);
int ring_push(const struct reading *r);
int ring_pop(struct reading *r);
size_t ring_len(void);
uint32_t checksum_crc32(const void *data, size_t len);
int net_send(const void *buf, size_t len);
int net_connect(const char *host, int port);
void log_msg(int level, const char *fmt, ...);
double stats_mean(const double *xs, size_t n);
double stats_stddev(const double *xs, size_t n);
#endif
CEOF
  cat > "$M/src/config.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sensord.h"
static char keys[64][32];
static char vals[64][128];
static int nkeys;
int config_load(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[256];
    if (!f) return -1;
    while (fgets(line, sizeof line, f) && nkeys < 64) {
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        strncpy(keys[nkeys], line, sizeof keys[0] - 1);
        strncpy(vals[nkeys], eq + 1, sizeof vals[0] - 1);
        nkeys++;
    }
    fclose(f);
    return nkeys;
}
const char *config_get_str(const char *key, const char *fallback)
{
    for (int i = 0; i < nkeys; i++)
        if (strcmp(keys[i], key) == 0) return vals[i];
    return fallback;
}
int config_get_int(const char *key, int fallback)
{
    const char *v = config_get_str(key, NULL);
    unsigned len = strlen(v ? v : "");
    if (len < 0) return fallback;
    return v ? atoi(v) : fallback;
}
CEOF
  cat > "$M/src/ring.c" <<'CEOF'
#include "sensord.h"
#define RING_CAP 4096
static struct reading ring[RING_CAP];
static size_t head, tail;
int ring_push(const struct reading *r)
{
    size_t next = (head + 1) % RING_CAP;
    if (next == tail) return -1;
    ring[head] = *r;
    head = next;
    return 0;
}
int ring_pop(struct reading *r)
{
    if (head == tail) return -1;
    *r = ring[tail];
    tail = (tail + 1) % RING_CAP;
    return 0;
}
size_t ring_len(void) { return (head + RING_CAP - tail) % RING_CAP; }
CEOF
  cat > "$M/src/stats.c" <<'CEOF'
#include <math.h>
#include "sensord.h"
double stats_mean(const double *xs, size_t n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += xs[i];
    return n ? s / n : 0.0;
}
double stats_stddev(const double *xs, size_t n)
{
    double m = stats_mean(xs, n), acc;
    for (size_t i = 0; i < n; i++) acc += (xs[i] - m) * (xs[i] - m);
    return n > 1 ? sqrt(acc / (n - 1)) : 0.0;
}
CEOF
  cat > "$M/src/log.c" <<'CEOF'
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include "sensord.h"
static const char *names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
void log_msg(int level, const char *fmt, ...)
{
    va_list ap;
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", gmtime(&now));
    fprintf(stderr, "%s %-5s ", when, names[level]);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
CEOF
  cat > "$M/src/net.c" <<'CEOF'
#include <stdio.h>
#include <string.h>
#include "sensord.h"
static int sock = -1;
int net_connect(const char *host, int port)
{
    log_msg(1, "connecting to %s:%d", host, port);
    sock = 3;
    return 0;
}
int net_send(const void *buf, size_t len)
{
    uint32_t crc = checksum_crc32(buf, len);
    if (sock < 0) return -1;
    log_msg(0, "sent %zu bytes crc=%08x", len, crc);
    return (int)len;
}
CEOF
  cat > "$M/src/main.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include "sensord.h"
int main(int argc, char **argv)
{
    const char *conf = argc > 1 ? argv[1] : "/etc/sensord.conf";
    if (config_load(conf) < 0)
        log_msg(2, "no config at %s, using defaults", conf);
    int port = config_get_int("port", 9100);
    const char *host = config_get_str("collector", "127.0.0.1");
    net_connect(host, port);
    struct reading r = {7, 1700000000000LL, 21.5};
    ring_push(&r);
    double xs[3] = {1.0, 2.0, 4.0};
    printf("mean=%f sd=%f pending=%d\n", stats_mean(xs, 3), stats_stddev(xs, 3), ring_len());
    while (ring_pop(&r) == 0)
        net_send(&r, sizeof r);
    return 0;
}
CEOF
  cat > "$M/Makefile" <<'CEOF'
CC      = gcc
CFLAGS  = -std=c11 -O2 -Wall -Wextra -Iinclude
LDLIBS  = -lm
SRCS    = $(wildcard src/*.c)
OBJS    = $(patsubst src/%.c,build/%.o,$(SRCS))

all: build/sensord

build/%.o: src/%.c include/sensord.h | build
	$(CC) $(CFLAGS) -c $< -o $@

build/sensord: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build:
	mkdir -p build

clean:
	rm -rf build
CEOF
  ( cd "$M" && make > "$OUT/make_link_error.txt" 2>&1 || true )

  # Python traceback at the end of a report script's progress output
  local R=$W/reports
  mkdir -p "$R"
  $PY - "$R/orders.csv" <<'PYEOF'
import csv, random, sys
random.seed(11)
regions = ["north", "south", "east", "west", "central"]
with open(sys.argv[1], "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["order_id", "customer", "region", "order_date", "amount"])
    for i in range(1, 2001):
        w.writerow([f"A{100000+i}", f"C{random.randint(1000, 1999)}", random.choice(regions),
                    f"2024-{random.randint(1,12):02d}-{random.randint(1,28):02d}",
                    f"{random.uniform(5, 900):.2f}"])
PYEOF
  cat > "$R/monthly_report.py" <<'PYEOF'
import logging
import sys

import pandas as pd

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                    datefmt="%H:%M:%S", stream=sys.stdout)
log = logging.getLogger("monthly_report")


def load(path):
    df = pd.read_csv(path, parse_dates=["order_date"])
    log.info("loaded %d orders from %s", len(df), path)
    return df


def region_totals(df):
    for region, part in df.groupby("region"):
        log.info("region %-8s orders=%4d revenue=%10.2f", region, len(part), part["amount"].sum())
    return df.groupby("region")["amount"].sum()


def monthly_by_customer(df):
    df = df.assign(month=df["order_date"].dt.to_period("M"))
    for month, part in df.groupby("month"):
        log.info("month %s: %d orders, %d customers", month, len(part), part["customer"].nunique())
    return df.groupby(["month", "customer_id"])["amount"].sum()


def build_report(path):
    df = load(path)
    region_totals(df)
    per_customer = monthly_by_customer(df)
    return per_customer.unstack(fill_value=0)


if __name__ == "__main__":
    build_report(sys.argv[1])
PYEOF
  ( cd "$R" && $PY monthly_report.py orders.csv > "$OUT/python_traceback.txt" 2>&1 || true )
}
want compiler && sec_compiler

###############################################################################
# pandas: printed frames of seeded synthetic data
###############################################################################
sec_pandas() {
  say pandas
  mkdir -p "$W/pandas"
  cat > "$W/pandas/quakes.py" <<'PYEOF'
import sys
import numpy as np
import pandas as pd

# Synthetic earthquake catalogue, shaped like a USGS feed export.
REGIONS = [
    # name, lat, lon, typical depth (km), depth spread, deep-focus share
    ("Fiji Islands region", -17.9, -178.4, 420, 160, 0.7),
    ("Tonga", -20.6, -174.9, 150, 120, 0.3),
    ("Kermadec Islands, New Zealand", -30.1, -177.8, 60, 50, 0.1),
    ("near the coast of central Chile", -33.2, -71.9, 35, 20, 0.0),
    ("Hokkaido, Japan region", 42.6, 142.9, 55, 30, 0.0),
    ("off the east coast of Honshu, Japan", 37.9, 142.3, 35, 15, 0.0),
    ("southern Alaska", 60.1, -152.7, 90, 40, 0.0),
    ("Andreanof Islands, Aleutian Islands, Alaska", 51.5, -176.2, 40, 25, 0.0),
    ("Central California", 36.3, -120.8, 8, 4, 0.0),
    ("Southern California", 34.1, -117.3, 10, 5, 0.0),
    ("Hawaii region", 19.4, -155.3, 6, 3, 0.0),
    ("northern Sumatra, Indonesia", 3.2, 96.1, 30, 15, 0.0),
    ("Banda Sea", -6.8, 129.9, 140, 90, 0.2),
    ("Mindanao, Philippines", 7.1, 126.6, 60, 30, 0.0),
    ("central Italy", 42.8, 13.1, 9, 3, 0.0),
    ("western Turkey", 39.1, 28.2, 12, 5, 0.0),
    ("Hindu Kush region, Afghanistan", 36.5, 70.9, 200, 30, 0.0),
    ("Mid-Atlantic Ridge", 0.9, -29.4, 10, 0.5, 0.0),
    ("Vanuatu", -15.8, 167.6, 80, 60, 0.0),
    ("Peru-Brazil border region", -8.9, -71.4, 590, 20, 0.0),
]


def catalogue(n, seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(REGIONS), n)
    start = pd.Timestamp("2024-03-01T00:00:00Z")
    offsets = np.sort(rng.uniform(0, 30 * 86400, n))
    rows = []
    for k, (i, off) in enumerate(zip(idx, offsets)):
        name, lat, lon, depth, spread, deep = REGIONS[i]
        d = depth + rng.normal(0, spread)
        if rng.random() < deep:
            d = rng.uniform(520, 690)
        d = float(np.clip(d, 0.3, 700))
        mag = round(float(np.clip(rng.gumbel(4.5, 0.35), 2.5, 8.2)), 1)
        mtype = "mww" if mag >= 5.5 else ("mb" if d > 70 or mag >= 4.5 else "ml")
        net = "us" if i not in (8, 9, 10) else ["nc", "ci", "hv"][i - 8]
        rows.append({
            "time": (start + pd.Timedelta(seconds=float(off))).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "latitude": round(lat + rng.normal(0, 0.8), 4),
            "longitude": round(lon + rng.normal(0, 0.8), 4),
            "depth": round(d, 2),
            "mag": mag,
            "magType": mtype,
            "nst": int(rng.integers(8, 180)),
            "gap": round(float(rng.uniform(12, 220)), 1),
            "rms": round(float(rng.uniform(0.1, 1.4)), 2),
            "net": net,
            "id": f"{net}{7000 + seed * 1000 + k:04d}{chr(97 + k % 26)}{chr(97 + (k * 7) % 26)}",
            "place": name,
        })
    return pd.DataFrame(rows)


mode = sys.argv[1]
if mode == "tostring":
    df = catalogue(320, 1)
    print(df.to_string())
elif mode == "wrapped":
    df = catalogue(140, 2)
    df = df[["time", "place", "latitude", "longitude", "depth", "nst", "gap", "rms", "net", "id", "mag", "magType"]]
    pd.set_option("display.max_rows", None)
    pd.set_option("display.max_columns", None)
    print(df)
PYEOF
  cat > "$W/pandas/penguins.py" <<'PYEOF'
import sys
import numpy as np
import pandas as pd

# Penguin-like morphometrics (species means roughly like the Palmer data set).
SPEC = {
    "Adelie": dict(islands=["Torgersen", "Biscoe", "Dream"], n=152, bill=(38.8, 2.6), depth=(18.3, 1.2), flip=(190, 6.5), mass=(3700, 458)),
    "Chinstrap": dict(islands=["Dream"], n=68, bill=(48.8, 3.3), depth=(18.4, 1.1), flip=(196, 7.1), mass=(3733, 384)),
    "Gentoo": dict(islands=["Biscoe"], n=124, bill=(47.5, 3.1), depth=(15.0, 1.0), flip=(217, 6.5), mass=(5076, 504)),
}


def penguins(seed=3):
    rng = np.random.default_rng(seed)
    rows = []
    for sp, s in SPEC.items():
        for _ in range(s["n"]):
            sex = rng.choice(["male", "female"])
            shift = 1 if sex == "male" else -1
            row = {
                "species": sp,
                "island": rng.choice(s["islands"]),
                "bill_length_mm": round(rng.normal(*s["bill"]) + shift * 1.5, 1),
                "bill_depth_mm": round(rng.normal(*s["depth"]) + shift * 0.6, 1),
                "flipper_length_mm": float(round(rng.normal(*s["flip"]) + shift * 3)),
                "body_mass_g": float(round((rng.normal(*s["mass"]) + shift * 300) / 25) * 25),
                "sex": sex,
                "year": int(rng.choice([2007, 2008, 2009])),
            }
            if rng.random() < 0.02:
                row["sex"] = np.nan
            if rng.random() < 0.01:
                row["body_mass_g"] = np.nan
                row["flipper_length_mm"] = np.nan
            rows.append(row)
    return pd.DataFrame(rows)


df = penguins()
mode = sys.argv[1]
if mode == "full":
    print(df.to_string())
elif mode == "summary":
    print(df.head(10))
    print()
    print(df.describe())
    print()
    print(df.groupby(["species", "sex"]).agg(
        n=("body_mass_g", "size"),
        mass_mean=("body_mass_g", "mean"),
        mass_max=("body_mass_g", "max"),
        flipper_mean=("flipper_length_mm", "mean"),
        bill_mean=("bill_length_mm", "mean"),
    ).round(1))
    print()
    print(df.groupby(["island", "species"]).size().unstack(fill_value=0))
    print()
    print(df.isna().sum())
PYEOF
  cat > "$W/pandas/sales.py" <<'PYEOF'
import numpy as np
import pandas as pd

rng = np.random.default_rng(5)
cities = ["Lyon", "Marseille", "Toulouse", "Nantes", "Lille", "Bordeaux", "Nice", "Rennes",
          "Strasbourg", "Montpellier", "Grenoble", "Dijon", "Angers", "Reims", "Le Havre",
          "Brest", "Tours", "Limoges", "Metz", "Rouen", "Caen", "Nancy", "Orleans", "Amiens",
          "Perpignan", "Besancon", "Annecy", "Pau", "Poitiers", "La Rochelle", "Avignon",
          "Valence", "Clermont-Ferrand", "Mulhouse", "Troyes", "Chambery", "Lorient", "Bayonne",
          "Ajaccio", "Saint-Etienne"]
regions = {"Lyon": "Auvergne-RA", "Grenoble": "Auvergne-RA", "Annecy": "Auvergne-RA",
           "Valence": "Auvergne-RA", "Clermont-Ferrand": "Auvergne-RA", "Chambery": "Auvergne-RA",
           "Saint-Etienne": "Auvergne-RA", "Marseille": "PACA", "Nice": "PACA", "Avignon": "PACA",
           "Toulouse": "Occitanie", "Montpellier": "Occitanie", "Perpignan": "Occitanie",
           "Nantes": "Pays-Loire", "Angers": "Pays-Loire", "Lille": "Hauts-de-France",
           "Amiens": "Hauts-de-France", "Bordeaux": "Nouv-Aquitaine", "Limoges": "Nouv-Aquitaine",
           "Pau": "Nouv-Aquitaine", "Poitiers": "Nouv-Aquitaine", "La Rochelle": "Nouv-Aquitaine",
           "Bayonne": "Nouv-Aquitaine", "Rennes": "Bretagne", "Brest": "Bretagne",
           "Lorient": "Bretagne", "Strasbourg": "Grand-Est", "Reims": "Grand-Est",
           "Metz": "Grand-Est", "Nancy": "Grand-Est", "Mulhouse": "Grand-Est", "Troyes": "Grand-Est",
           "Dijon": "Bourgogne-FC", "Besancon": "Bourgogne-FC", "Le Havre": "Normandie",
           "Rouen": "Normandie", "Caen": "Normandie", "Tours": "Centre-VdL", "Orleans": "Centre-VdL",
           "Ajaccio": "Corse"}
months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
season = np.array([0.82, 0.78, 0.93, 0.97, 1.02, 1.05, 1.12, 1.08, 0.96, 1.0, 1.09, 1.38])
rows = {}
for i, c in enumerate(cities):
    base = rng.uniform(38_000, 160_000)
    monthly = base * season * rng.normal(1, 0.07, 12)
    rows[f"FR-{i + 1:03d} {c}"] = dict(region=regions[c], **{m: int(round(v, -1)) for m, v in zip(months, monthly)})
df = pd.DataFrame.from_dict(rows, orient="index")
df.index.name = "store"
df["total"] = df[months].sum(axis=1)
df["vs_2023_pct"] = np.round(rng.normal(3.5, 6.0, len(df)), 1)
pd.set_option("display.max_rows", None)
pd.set_option("display.max_columns", None)
print(df)
PYEOF
  cat > "$W/pandas/latency.py" <<'PYEOF'
import sys
import numpy as np
import pandas as pd

rng = np.random.default_rng(9)
services = {
    "api-gateway": ["/healthz", "/v1/login", "/v1/logout", "/v1/session/refresh"],
    "catalog": ["/v1/products", "/v1/products/{id}", "/v1/categories", "/v1/products/{id}/reviews"],
    "search": ["/v1/search", "/v1/search/suggest", "/v1/search/facets"],
    "cart": ["/v1/cart", "/v1/cart/items", "/v1/cart/items/{id}", "/v1/cart/merge"],
    "checkout": ["/v1/checkout", "/v1/checkout/shipping-options", "/v1/checkout/confirm"],
    "payments": ["/v1/payments/authorize", "/v1/payments/capture", "/v1/payments/refund", "/v1/payments/methods"],
    "orders": ["/v1/orders", "/v1/orders/{id}", "/v1/orders/{id}/cancel", "/v1/orders/export"],
    "inventory": ["/v1/stock/{sku}", "/v1/stock/reserve", "/v1/stock/release"],
    "users": ["/v1/users/me", "/v1/users/{id}", "/v1/users/me/addresses", "/v1/users/me/preferences"],
    "notifications": ["/v1/notify/email", "/v1/notify/sms", "/v1/notify/push"],
    "recommendations": ["/v1/recs/home", "/v1/recs/product/{id}", "/v1/recs/cart"],
    "media": ["/v1/images/{id}", "/v1/images/upload", "/v1/video/{id}/manifest"],
    "reviews": ["/v1/reviews", "/v1/reviews/{id}/vote"],
    "shipping": ["/v1/shipping/quote", "/v1/shipping/track/{id}", "/v1/shipping/labels"],
}
rows = []
for svc, eps in services.items():
    for ep in eps:
        method = "POST" if any(w in ep for w in ("login", "authorize", "capture", "refund", "confirm", "upload", "reserve", "release", "notify", "merge", "cancel", "labels", "vote")) else "GET"
        scale = rng.lognormal(3.3, 0.7)
        n = int(rng.integers(400, 1500))
        lat = rng.lognormal(np.log(scale), 0.45, n)
        if ep == "/v1/orders/export":
            lat = lat * 9.0
        if ep == "/v1/payments/authorize":
            lat = np.concatenate([lat, rng.uniform(1800, 3000, 14)])
        for v in lat:
            rows.append((svc, method, ep, v, rng.random() < (0.004 if svc != "shipping" else 0.03)))
raw = pd.DataFrame(rows, columns=["service", "method", "endpoint", "latency_ms", "error"])
mode = sys.argv[1]
if mode == "endpoints":
    g = raw.groupby(["service", "method", "endpoint"])
    stats = g["latency_ms"].agg(
        requests="size",
        p50=lambda s: s.quantile(0.5),
        p95=lambda s: s.quantile(0.95),
        p99=lambda s: s.quantile(0.99),
        max="max",
    ).round(1)
    stats["error_rate"] = g["error"].mean().round(4)
    print(stats.reset_index().to_string())
elif mode == "describe":
    wide = pd.DataFrame({svc: part["latency_ms"].reset_index(drop=True) for svc, part in raw.groupby("service")})
    pd.set_option("display.max_columns", None)
    print(wide.describe(percentiles=[0.25, 0.5, 0.75, 0.9, 0.95, 0.99]).round(2))
    print()
    print("error rate by service")
    print(raw.groupby("service")["error"].mean().round(4).to_string())
elif mode == "info":
    users = pd.DataFrame({
        "user_id": np.arange(1, 2001),
        "email": [f"user{i}@example.com" for i in range(1, 2001)],
        "signup_date": pd.date_range("2021-01-01", periods=2000, freq="11h").astype(str),
        "country": rng.choice(["FR", "DE", "US", "GB", "NL", None], 2000),
        "plan": pd.Categorical(rng.choice(["free", "pro", "team"], 2000)),
        "seats": rng.integers(1, 50, 2000),
        "mrr_eur": np.where(rng.random(2000) < 0.1, np.nan, rng.uniform(0, 900, 2000)),
        "last_login": pd.to_datetime("2024-06-01") - pd.to_timedelta(rng.integers(0, 400, 2000), unit="D"),
        "is_active": rng.random(2000) < 0.8,
        "referrer": np.where(rng.random(2000) < 0.6, None, "partner"),
        "sessions_30d": rng.poisson(12, 2000),
        "avg_session_min": rng.gamma(2.0, 6.0, 2000).astype("float32"),
        "nps": np.where(rng.random(2000) < 0.7, np.nan, rng.integers(0, 11, 2000)),
        "churned_at": pd.NaT,
    })
    users.info()
    print()
    pd.set_option("display.max_columns", None)
    print(users.head(12))
    print()
    print(users.memory_usage(deep=True))
PYEOF
  ( cd "$W/pandas"
    $PY quakes.py tostring > "$OUT/pandas_quakes_tostring.txt"
    $PY quakes.py wrapped > "$OUT/pandas_quakes_wrapped.txt"
    $PY penguins.py full > "$OUT/pandas_penguins_full.txt"
    $PY penguins.py summary > "$OUT/pandas_penguins_summary.txt"
    $PY sales.py > "$OUT/pandas_sales_wide.txt"
    $PY latency.py endpoints > "$OUT/pandas_latency_endpoints.txt"
    $PY latency.py describe > "$OUT/pandas_latency_describe.txt"
    $PY latency.py info > "$OUT/pandas_info.txt" 2>&1
  )
}
want pandas && sec_pandas

###############################################################################
# R: printed data.frames, summary(), str(), table(), lm summary
###############################################################################
sec_r() {
  say R
  mkdir -p "$W/r"
  cat > "$W/r/weather.R" <<'REOF'
set.seed(42)
stations <- c("OSLO-BLINDERN", "BERGEN-FLORIDA", "TROMSO", "TRONDHEIM-VOLL")
dates <- seq(as.Date("2024-01-01"), by = "day", length.out = 24)
df <- expand.grid(date = dates, station = stations, stringsAsFactors = FALSE)
df <- df[, c("station", "date")]
n <- nrow(df)
lat_shift <- c("OSLO-BLINDERN" = 0, "BERGEN-FLORIDA" = 3, "TROMSO" = -5, "TRONDHEIM-VOLL" = -2)[df$station]
df$tmin_c <- round(rnorm(n, -6, 4) + lat_shift, 1)
df$tmax_c <- round(df$tmin_c + runif(n, 2, 9), 1)
df$precip_mm <- round(ifelse(runif(n) < 0.45, 0, rgamma(n, 1.2, 0.25)), 1)
df$snow_cm <- round(ifelse(df$tmax_c < 1, df$precip_mm * runif(n, 0.8, 1.4), 0), 1)
df$wind_avg_ms <- round(rgamma(n, 3, 0.8), 1)
df$wind_gust_ms <- round(df$wind_avg_ms * runif(n, 1.4, 2.3), 1)
df$wind_dir_deg <- sample(seq(0, 350, 10), n, replace = TRUE)
df$humidity_pct <- round(runif(n, 62, 99))
df$pressure_hpa <- round(rnorm(n, 1008, 11), 1)
df$visibility_km <- round(pmin(50, rgamma(n, 3, 0.12)), 1)
df$cloud_okta <- sample(0:8, n, replace = TRUE)
df$sunshine_h <- round(pmax(0, rnorm(n, 1.2, 1.1)), 1)
df$qc_flag <- sample(c("ok", "ok", "ok", "ok", "est", "miss"), n, replace = TRUE)
options(width = 80)
print(df)
REOF
  cat > "$W/r/penguins.R" <<'REOF'
set.seed(7)
make <- function(sp, island, n, bill, depth, flip, mass) {
  sex <- sample(c("female", "male"), n, replace = TRUE)
  s <- ifelse(sex == "male", 1, -1)
  data.frame(
    species = sp,
    island = sample(island, n, replace = TRUE),
    bill_length_mm = round(rnorm(n, bill[1], bill[2]) + 1.5 * s, 1),
    bill_depth_mm = round(rnorm(n, depth[1], depth[2]) + 0.6 * s, 1),
    flipper_length_mm = as.integer(round(rnorm(n, flip[1], flip[2]) + 3 * s)),
    body_mass_g = as.integer(round((rnorm(n, mass[1], mass[2]) + 300 * s) / 25) * 25),
    sex = sex,
    year = sample(2007:2009, n, replace = TRUE),
    stringsAsFactors = FALSE
  )
}
df <- rbind(
  make("Adelie", c("Torgersen", "Biscoe", "Dream"), 152, c(38.8, 2.6), c(18.3, 1.2), c(190, 6.5), c(3700, 458)),
  make("Chinstrap", "Dream", 68, c(48.8, 3.3), c(18.4, 1.1), c(196, 7.1), c(3733, 384)),
  make("Gentoo", "Biscoe", 124, c(47.5, 3.1), c(15.0, 1.0), c(217, 6.5), c(5076, 504))
)
df$species <- factor(df$species)
df$island <- factor(df$island)
df$sex <- factor(df$sex)
miss <- sample(nrow(df), 9)
df$sex[miss] <- NA
df$body_mass_g[miss[1:2]] <- NA
df$flipper_length_mm[miss[1:2]] <- NA
df$tag_id <- sprintf("N%02dA%d", sample(1:99, nrow(df), replace = TRUE), sample(1:2, nrow(df), replace = TRUE))
df$date_egg <- as.Date("2007-11-01") + sample(0:40, nrow(df), replace = TRUE) + 365 * (df$year - 2007)
df$clutch_completion <- sample(c("Yes", "Yes", "Yes", "No"), nrow(df), replace = TRUE)
df$delta_15_n <- round(rnorm(nrow(df), 8.7, 0.55), 5)
df$delta_13_c <- round(rnorm(nrow(df), -25.7, 0.8), 5)
df$comments <- ifelse(runif(nrow(df)) < 0.05, "Nest never observed with full clutch.", NA)
options(width = 80)
mode <- commandArgs(trailingOnly = TRUE)[1]
if (mode == "summary") {
  print(summary(df))
  cat("\n")
  print(by(df[, c("bill_length_mm", "flipper_length_mm", "body_mass_g")], df$species, summary))
} else if (mode == "str") {
  str(df)
  cat("\n")
  str(split(df$body_mass_g, df$species))
  cat("\n")
  str(lapply(df[sapply(df, is.numeric)], range, na.rm = TRUE))
  cat("\n")
  fit <- lm(body_mass_g ~ flipper_length_mm + species, data = df)
  str(fit, max.level = 1, give.attr = FALSE)
} else if (mode == "table") {
  print(table(df$species, df$island))
  cat("\n")
  print(with(df, table(species, island, year)))
  cat("\n")
  print(round(prop.table(table(df$species, df$sex, useNA = "ifany"), 1), 3))
  cat("\n")
  print(with(df, table(clutch_completion, species, useNA = "ifany")))
  cat("\n")
  print(table(bill_length = cut(df$bill_length_mm, breaks = seq(30, 60, 2.5)), species = df$species))
  cat("\n")
  print(ftable(with(df, table(island, year, sex, species, useNA = "ifany"))))
} else if (mode == "lm") {
  fit <- lm(body_mass_g ~ flipper_length_mm + bill_length_mm + bill_depth_mm + species + sex, data = df)
  print(summary(fit))
  print(anova(fit))
  cat("\n")
  print(round(confint(fit), 3))
  cat("\n")
  fit2 <- glm(I(sex == "male") ~ body_mass_g + bill_depth_mm + species, data = df, family = binomial)
  print(summary(fit2))
}
REOF
  ( cd "$W/r"
    Rscript weather.R > "$OUT/r_weather_wide.txt" 2>&1
    Rscript penguins.R summary > "$OUT/r_penguins_summary.txt" 2>&1
    Rscript penguins.R str > "$OUT/r_penguins_str.txt" 2>&1
    Rscript penguins.R table > "$OUT/r_penguins_table.txt" 2>&1
    Rscript penguins.R lm > "$OUT/r_lm_summary.txt" 2>&1
  )
}
want r && sec_r

###############################################################################
# CSV and JSON: cat of exports, jq / json.tool pretty printing, NDJSON events
###############################################################################
sec_data() {
  say data
  mkdir -p "$W/data"
  cat > "$W/data/make_data.py" <<'PYEOF'
import csv
import datetime as dt
import json
import random

random.seed(2024)
FIRST = ["Ana", "Ben", "Chloe", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ivan", "Jonas", "Keiko",
         "Liam", "Mara", "Nico", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vera",
         "Wen", "Ximena", "Yusuf", "Zoe", "Aiko", "Bruno", "Carla", "Diego", "Emma", "Felix"]
LAST = ["Almeida", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Horvat", "Ito",
        "Jansen", "Kowalski", "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quispe", "Rossi",
        "Schmidt", "Tanaka", "Usman", "Varga", "Weber", "Yilmaz", "Zhang", "Nowak", "Silva"]

# 1. orders export
countries = ["FR", "DE", "ES", "IT", "NL", "BE", "PL", "SE", "PT", "AT", "IE", "DK"]
vat = {"FR": .2, "DE": .19, "ES": .21, "IT": .22, "NL": .21, "BE": .21, "PL": .23, "SE": .25,
       "PT": .23, "AT": .2, "IE": .23, "DK": .25}
statuses = ["paid"] * 12 + ["shipped"] * 20 + ["delivered"] * 40 + ["refunded", "cancelled", "pending"]
methods = ["card", "card", "card", "paypal", "sepa_debit", "klarna", "apple_pay"]
with open("orders.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["order_id", "created_at", "customer_email", "country", "items", "subtotal",
                "shipping", "tax", "total", "currency", "status", "payment_method"])
    t = dt.datetime(2024, 4, 1, 6, 0, 0)
    for i in range(1400):
        t += dt.timedelta(seconds=random.randint(30, 1800))
        c = random.choice(countries)
        items = random.choice([1, 1, 1, 2, 2, 3, 4, 5, 8])
        sub = round(sum(random.lognormvariate(3.4, 0.8) for _ in range(items)), 2)
        ship = 0.0 if sub > 60 else random.choice([4.9, 5.9, 7.5])
        tax = round((sub + ship) * vat[c], 2)
        fn, ln = random.choice(FIRST), random.choice(LAST)
        w.writerow([f"ORD-{240000 + i}", t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    f"{fn.lower()}.{ln.lower()}{random.randint(1, 99)}@example.org", c, items,
                    f"{sub:.2f}", f"{ship:.2f}", f"{tax:.2f}", f"{sub + ship + tax:.2f}", "EUR",
                    random.choice(statuses), random.choice(methods)])

# 2. employees directory
depts = {"Engineering": ["Software Engineer", "Senior Software Engineer", "Staff Engineer", "Engineering Manager", "SRE"],
         "Sales": ["Account Executive", "Sales Development Rep", "Sales Manager"],
         "Marketing": ["Content Marketer", "Growth Marketer", "Marketing Manager"],
         "Finance": ["Accountant", "Financial Analyst", "Controller"],
         "People": ["Recruiter", "People Partner"],
         "Support": ["Support Engineer", "Support Lead"],
         "Design": ["Product Designer", "UX Researcher"]}
offices = ["Berlin", "Lisbon", "Warsaw", "Remote", "Amsterdam"]
with open("employees.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["employee_id", "first_name", "last_name", "department", "title", "office",
                "hire_date", "salary_eur", "manager_id", "email"])
    for i in range(1, 241):
        d = random.choice(list(depts))
        title = random.choice(depts[d])
        hire = dt.date(2014, 1, 1) + dt.timedelta(days=random.randint(0, 3800))
        fn, ln = random.choice(FIRST), random.choice(LAST)
        base = {"Engineering": 78000, "Sales": 62000, "Marketing": 60000, "Finance": 66000,
                "People": 58000, "Support": 50000, "Design": 68000}[d]
        sal = int(round(base * random.uniform(0.8, 1.7), -2))
        mgr = "" if i <= 7 else random.randint(1, 40)
        w.writerow([f"E{i:04d}", fn, ln, d, title, random.choice(offices), hire.isoformat(), sal,
                    mgr if mgr == "" else f"E{mgr:04d}", f"{fn.lower()}.{ln.lower()}@corp.example"])

# 3. sensor readings
with open("sensors.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["timestamp", "sensor_id", "room", "temperature_c", "humidity_pct", "co2_ppm",
                "pm25_ugm3", "battery_v", "rssi_dbm"])
    rooms = {"s-101": "lobby", "s-102": "meeting-a", "s-103": "meeting-b", "s-104": "kitchen",
             "s-105": "open-space-1", "s-106": "open-space-2", "s-107": "server-room",
             "s-108": "storage", "s-109": "roof-terrace"}
    t = dt.datetime(2024, 7, 15, 0, 0)
    for step in range(200):
        for sid, room in rooms.items():
            hour = (t.hour + t.minute / 60)
            temp = 21 + 2.5 * (1 if 9 <= hour <= 18 else 0) + random.gauss(0, 0.6)
            if room == "server-room":
                temp = 19.5 + random.gauss(0, 0.4) + (9.0 if 410 <= step * 10 % 1440 // 1 <= 440 and step > 100 else 0)
            if room == "roof-terrace":
                temp = 24 + 8 * max(0, 1 - abs(hour - 15) / 6) + random.gauss(0, 1.0)
            co2 = 420 + (600 if room.startswith("meeting") and 10 <= hour <= 16 else 150) * random.random()
            w.writerow([t.strftime("%Y-%m-%d %H:%M"), sid, room, f"{temp:.1f}",
                        f"{random.uniform(35, 65):.0f}", f"{co2:.0f}", f"{random.lognormvariate(1.8, 0.5):.1f}",
                        f"{3.3 - step * 0.0004 - (0.25 if sid == 's-108' else 0) + random.gauss(0, 0.01):.2f}",
                        random.randint(-92, -48)])
        t += dt.timedelta(minutes=10)

# 4. GitHub-like repository listing (pretty printed later with jq)
langs = ["Python", "Go", "Rust", "TypeScript", "C", "Java", "Kotlin", "Shell", "R", "Julia"]
topics = ["cli", "parser", "database", "http", "async", "kubernetes", "data-science", "testing",
          "logging", "compression", "geospatial", "visualization", "security", "orm"]
licenses = [("mit", "MIT License", "MIT"), ("apache-2.0", "Apache License 2.0", "Apache-2.0"),
            ("bsd-3-clause", 'BSD 3-Clause "New" or "Revised" License', "BSD-3-Clause"),
            ("gpl-3.0", "GNU General Public License v3.0", "GPL-3.0")]
names = ["tidewater", "quickparse", "lumen-db", "httpkit", "asyncpool", "kubelint", "frameflow",
         "pytest-snapshots", "logfmt-rs", "zstd-stream", "geohashx", "plotline", "vaultcheck",
         "tinyorm", "csvkit-lite", "retry-ops", "jsonpath-ng2", "sqlfmt", "mdlinkcheck", "envguard",
         "cronparse", "ratelimitd", "tracewire", "blobsync", "schemawatch", "termgraph2", "dotcfg",
         "pkgaudit", "fuzzmatch", "imgslim"]
repos = []
for k, name in enumerate(names):
    owner = random.choice(["acme-labs", "openfield", "northwind-oss", "qbit", "dataforge"])
    lic = random.choice(licenses)
    created = dt.datetime(2015, 1, 1) + dt.timedelta(days=random.randint(0, 3000), seconds=random.randint(0, 86399))
    pushed = dt.datetime(2024, 5, 1) + dt.timedelta(days=random.randint(0, 60), seconds=random.randint(0, 86399))
    stars = int(random.lognormvariate(6.2, 1.3))
    repos.append({
        "id": 190000000 + k * 7919,
        "node_id": f"R_kgDO{k:04d}Xw",
        "name": name,
        "full_name": f"{owner}/{name}",
        "private": False,
        "owner": {"login": owner, "id": 5000 + hash(owner) % 1000 if False else 5000 + len(owner) * 37,
                  "type": "Organization", "site_admin": False},
        "html_url": f"https://github.example/{owner}/{name}",
        "description": f"{name.replace('-', ' ').title()}: a small {random.choice(langs)} library for {random.choice(topics).replace('-', ' ')}",
        "fork": False,
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "updated_at": pushed.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "pushed_at": pushed.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "homepage": None if random.random() < 0.5 else f"https://{name}.docs.example",
        "size": random.randint(80, 90000),
        "stargazers_count": stars,
        "watchers_count": stars,
        "language": random.choice(langs),
        "has_issues": True,
        "has_wiki": random.random() < 0.3,
        "forks_count": int(stars * random.uniform(0.03, 0.2)),
        "archived": random.random() < 0.08,
        "open_issues_count": random.randint(0, 240),
        "license": {"key": lic[0], "name": lic[1], "spdx_id": lic[2]},
        "topics": sorted(random.sample(topics, random.randint(1, 4))),
        "visibility": "public",
        "default_branch": random.choice(["main", "main", "main", "master"]),
    })
with open("repos.json", "w") as fh:
    json.dump(repos, fh, separators=(",", ":"))

# 5. services config (python -m json.tool later)
services = {}
for name, port, timeout in [("gateway", 8080, 3000), ("auth", 8081, 1500), ("catalog", 8082, 2000),
                            ("search", 8083, 1200), ("cart", 8084, 1000), ("payments", 8085, 4500),
                            ("orders", 8086, 2500), ("inventory", 8087, 800), ("shipping", 8088, 6000),
                            ("notifications", 8089, 10000), ("recommendations", 8090, 350)]:
    services[name] = {
        "image": f"registry.internal.example/shop/{name}:1.{random.randint(2, 19)}.{random.randint(0, 9)}",
        "port": port,
        "replicas": random.choice([2, 2, 3, 4, 6]),
        "resources": {"cpu": random.choice(["250m", "500m", "1", "2"]),
                      "memory": random.choice(["256Mi", "512Mi", "1Gi", "2Gi"])},
        "http": {"timeout_ms": timeout, "retries": random.choice([0, 1, 2, 3]),
                 "circuit_breaker": {"failure_threshold": random.choice([5, 10, 20]),
                                     "reset_after_s": random.choice([15, 30, 60])}},
        "env": {"LOG_LEVEL": random.choice(["info", "info", "debug", "warn"]),
                "OTEL_SAMPLING_RATIO": random.choice(["0.05", "0.1", "0.25", "1.0"])},
        "depends_on": sorted(random.sample(["auth", "catalog", "cart", "payments", "orders", "inventory"], random.randint(0, 3))),
        "healthcheck": {"path": "/healthz", "interval_s": random.choice([5, 10, 15]), "timeout_s": random.choice([1, 2, 3])},
    }
config = {"version": 3, "cluster": "prod-eu-west", "updated_by": "deploy-bot",
          "defaults": {"http": {"timeout_ms": 2000, "retries": 2}, "replicas": 2},
          "services": services,
          "feature_flags": {"new_checkout": True, "search_v2": False, "one_click_pay": True,
                            "recs_ab_test": "variant-b", "maintenance_banner": False}}
with open("services.json", "w") as fh:
    json.dump(config, fh, separators=(",", ":"))

# 6. NDJSON request log, one JSON object a line
paths = ["/v1/products", "/v1/products/{id}", "/v1/search", "/v1/cart", "/v1/cart/items",
         "/v1/checkout", "/v1/payments/authorize", "/v1/orders", "/v1/orders/{id}", "/v1/users/me",
         "/healthz"]
t = dt.datetime(2024, 6, 11, 9, 0, 0)
with open("requests.ndjson", "w") as fh:
    for i in range(900):
        t += dt.timedelta(milliseconds=random.randint(20, 4000))
        p = random.choice(paths)
        method = "POST" if p in ("/v1/cart/items", "/v1/checkout", "/v1/payments/authorize") else "GET"
        status = random.choices([200, 201, 204, 304, 400, 401, 404, 429],
                                [70, 5, 3, 6, 3, 2, 4, 1])[0]
        dur = round(random.lognormvariate(3.2, 0.6), 1)
        ev = {"ts": t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z",
              "level": "info", "msg": "request completed", "method": method,
              "path": p.replace("{id}", str(random.randint(1000, 9999))), "status": status,
              "duration_ms": dur, "bytes": random.randint(120, 48000),
              "request_id": f"{random.getrandbits(64):016x}",
              "user_id": None if p == "/healthz" else f"u_{random.randint(10000, 99999)}",
              "client_ip": f"10.{random.randint(0, 3)}.{random.randint(0, 255)}.{random.randint(1, 254)}"}
        if i == 611:
            ev.update(level="error", msg="upstream error", method="POST", path="/v1/payments/authorize",
                      status=502, duration_ms=30001.4, error="payment provider timeout after 30000 ms")
        elif status >= 400:
            ev["level"] = "warn"
        print(json.dumps(ev), file=fh)
PYEOF
  ( cd "$W/data"
    $PY make_data.py
    cat orders.csv > "$OUT/csv_orders.txt"
    cat employees.csv > "$OUT/csv_employees.txt"
    cat sensors.csv > "$OUT/csv_sensors.txt"
    jq . repos.json > "$OUT/json_repos_jq.txt"
    $PY -m json.tool services.json > "$OUT/json_services_tool.txt"
    cat requests.ndjson > "$OUT/ndjson_requests.txt"
  )
}
want data && sec_data

###############################################################################
# git: a throwaway repository with 60+ commits (fixed authors and dates)
###############################################################################
sec_git() {
  say git
  local G=$W/tripplanner
  mkdir -p "$G"
  cat > "$W/make_repo.py" <<'PYEOF'
import os
import random
import subprocess
import sys

random.seed(99)
repo = sys.argv[1]
AUTHORS = [("Maya Lindqvist", "maya.lindqvist@tripplanner.example"),
           ("Tomás Herrera", "tomas.herrera@tripplanner.example"),
           ("Priya Raman", "priya.raman@tripplanner.example"),
           ("Jonas Weber", "jonas.weber@tripplanner.example"),
           ("Aiko Tanaka", "aiko.tanaka@tripplanner.example"),
           ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")]

# (author index, subject, body, {path: lines to append})
C = [
    (0, "Initial project skeleton", "", {"README.md": 12, "pyproject.toml": 20, "src/tripplanner/__init__.py": 2, ".gitignore": 8}),
    (0, "Add Trip and Stop models", "", {"src/tripplanner/models.py": 60, "tests/test_models.py": 35}),
    (1, "Add SQLite storage layer", "Plain sqlite3 for now; we can move to Postgres later.", {"src/tripplanner/storage.py": 90, "tests/test_storage.py": 40}),
    (0, "Add CLI entry point with `trip new` and `trip list`", "", {"src/tripplanner/cli.py": 75, "pyproject.toml": 3}),
    (2, "Set up GitHub Actions CI", "", {".github/workflows/ci.yml": 34}),
    (1, "Add first database migration for trips table", "", {"migrations/0001_create_trips.sql": 22}),
    (3, "Geocode stops with Nominatim", "Results are cached in the stops table.", {"src/tripplanner/geocode.py": 55, "src/tripplanner/models.py": 6}),
    (2, "Add ruff and pre-commit config", "", {".pre-commit-config.yaml": 18, "pyproject.toml": 12}),
    (0, "Compute driving distance between stops", "", {"src/tripplanner/routing.py": 80, "tests/test_routing.py": 44}),
    (4, "Add Japanese translation of the CLI messages", "", {"src/tripplanner/locale/ja.po": 120}),
    (1, "Fix off-by-one in itinerary day numbering", "Day 1 was shown as day 0 when the trip started at midnight.\n\nFixes #14", {"src/tripplanner/itinerary.py": 4, "tests/test_itinerary.py": 18}),
    (3, "Add budget tracking per trip", "", {"src/tripplanner/budget.py": 70, "migrations/0002_add_budget.sql": 15, "tests/test_budget.py": 30}),
    (5, "Bump requests from 2.31.0 to 2.32.0", "Bumps [requests](https://github.com/psf/requests) from 2.31.0 to 2.32.0.", {"requirements.txt": 1}),
    (2, "Export itinerary to iCalendar", "", {"src/tripplanner/export_ics.py": 65, "tests/test_export_ics.py": 28}),
    (0, "Refactor storage into repository classes", "No behaviour change. Splits TripRepository and StopRepository.", {"src/tripplanner/storage.py": 120, "src/tripplanner/cli.py": 14, "tests/test_storage.py": 22}),
    (4, "Show currency symbols in budget report", "", {"src/tripplanner/budget.py": 12}),
    (1, "Fix session timeout when the geocoder is slow", "The HTTP session used a 2 s timeout, so long Nominatim responses\nkilled the whole import. Use 10 s and retry twice with backoff.\n\nFixes #31", {"src/tripplanner/geocode.py": 16, "tests/test_geocode.py": 25}),
    (3, "Add weather forecast for each stop", "", {"src/tripplanner/weather.py": 85, "tests/test_weather.py": 33}),
    (2, "Document configuration options", "", {"docs/configuration.md": 64, "README.md": 6}),
    (0, "Add packing list generator", "", {"src/tripplanner/packing.py": 58, "tests/test_packing.py": 20}),
    (5, "Bump pytest from 7.4.0 to 8.0.0", "", {"requirements-dev.txt": 1}),
    (4, "Handle time zones for stops across the date line", "Stops in Fiji and Samoa were sorted before stops on the previous\nday. Store all times as UTC and convert at display time.", {"src/tripplanner/itinerary.py": 30, "src/tripplanner/models.py": 10, "tests/test_itinerary.py": 26}),
    (1, "Add migration for stop opening hours", "", {"migrations/0003_stop_opening_hours.sql": 18, "src/tripplanner/models.py": 8}),
    (3, "Speed up route computation with a distance cache", "", {"src/tripplanner/routing.py": 40, "src/tripplanner/cache.py": 45}),
    (0, "Release 1.0.0", "", {"CHANGELOG.md": 30, "pyproject.toml": 1}),
    (2, "Add `trip share` command that makes a read-only link", "", {"src/tripplanner/share.py": 50, "src/tripplanner/cli.py": 20}),
    (4, "Fix crash when a stop has no coordinates", "geocode() returns None for unknown places; routing assumed a tuple.\n\nFixes #48", {"src/tripplanner/routing.py": 6, "tests/test_routing.py": 12}),
    (1, "Move settings to pydantic-settings", "", {"src/tripplanner/settings.py": 48, "src/tripplanner/cli.py": 9, "pyproject.toml": 2}),
    (3, "Add PDF export of the itinerary", "", {"src/tripplanner/export_pdf.py": 110, "pyproject.toml": 1}),
    (5, "Bump jinja2 from 3.1.2 to 3.1.4", "", {"requirements.txt": 1}),
    (0, "Validate budget amounts are not negative", "", {"src/tripplanner/budget.py": 8, "tests/test_budget.py": 14}),
    (2, "Switch storage from SQLite to PostgreSQL", "Adds psycopg 3 and a connection pool. SQLite is still used by the\ntests through the same repository interface.", {"src/tripplanner/storage.py": 95, "src/tripplanner/settings.py": 6, "migrations/0004_postgres_types.sql": 40, "pyproject.toml": 2, "docs/configuration.md": 12}),
    (1, "Fix flaky weather test that depended on today's date", "", {"tests/test_weather.py": 9}),
    (4, "Add German and French translations", "", {"src/tripplanner/locale/de.po": 118, "src/tripplanner/locale/fr.po": 121}),
    (3, "Log slow SQL queries above 200 ms", "", {"src/tripplanner/storage.py": 14, "src/tripplanner/settings.py": 2}),
    (0, "Add accommodation bookings", "", {"src/tripplanner/bookings.py": 88, "migrations/0005_create_bookings.sql": 26, "tests/test_bookings.py": 41}),
    (2, "Fix double-booking check ignoring check-out day", "Two bookings on the same night were allowed when one checked out\nand the other checked in on the same day in different time zones.\n\nFixes #63", {"src/tripplanner/bookings.py": 10, "tests/test_bookings.py": 22}),
    (5, "Bump cryptography from 41.0.7 to 42.0.4", "", {"requirements.txt": 1}),
    (1, "Add index on bookings(trip_id, check_in)", "", {"migrations/0006_bookings_index.sql": 4}),
    (3, "Rate-limit calls to the weather API", "", {"src/tripplanner/weather.py": 22, "src/tripplanner/ratelimit.py": 35}),
    (4, "Fix wrong currency conversion for JPY budgets", "JPY has no minor unit; we divided by 100 twice.\n\nFixes #71", {"src/tripplanner/budget.py": 5, "tests/test_budget.py": 10}),
    (0, "Release 1.1.0", "", {"CHANGELOG.md": 18, "pyproject.toml": 1}),
    (2, "Add REST API with FastAPI", "", {"src/tripplanner/api/__init__.py": 3, "src/tripplanner/api/app.py": 95, "src/tripplanner/api/routes.py": 140, "tests/test_api.py": 60, "pyproject.toml": 3}),
    (1, "Add authentication with API tokens", "", {"src/tripplanner/api/auth.py": 70, "migrations/0007_api_tokens.sql": 14, "tests/test_auth.py": 35}),
    (3, "Fix session expiry being reset on every request", "Tokens were refreshed by the middleware even for expired sessions,\nso sessions never timed out.\n\nFixes #80", {"src/tripplanner/api/auth.py": 12, "tests/test_auth.py": 16}),
    (4, "Paginate GET /trips", "", {"src/tripplanner/api/routes.py": 25, "tests/test_api.py": 20}),
    (5, "Bump fastapi from 0.110.0 to 0.111.0", "", {"requirements.txt": 1}),
    (0, "Add OpenAPI examples for trip endpoints", "", {"src/tripplanner/api/routes.py": 40}),
    (2, "Run the test suite against PostgreSQL 16 in CI", "", {".github/workflows/ci.yml": 22}),
    (1, "Add Dockerfile and compose file", "", {"Dockerfile": 28, "compose.yaml": 35, ".dockerignore": 9}),
    (3, "Cache geocoding results in Redis", "", {"src/tripplanner/geocode.py": 20, "src/tripplanner/cache.py": 30, "compose.yaml": 8}),
    (4, "Fix N+1 queries when listing trips with stops", "", {"src/tripplanner/storage.py": 28, "src/tripplanner/api/routes.py": 6}),
    (0, "Drop Python 3.9 support", "", {"pyproject.toml": 3, ".github/workflows/ci.yml": 2, "README.md": 1}),
    (2, "Add migration to split name into first and last name", "", {"migrations/0008_split_user_name.sql": 31, "src/tripplanner/models.py": 12}),
    (1, "Fix timezone bug in iCalendar export", "DTSTART was written without TZID, so calendars showed events in UTC.", {"src/tripplanner/export_ics.py": 9, "tests/test_export_ics.py": 14}),
    (3, "Add metrics endpoint for Prometheus", "", {"src/tripplanner/api/metrics.py": 48, "src/tripplanner/api/app.py": 4}),
    (5, "Bump uvicorn from 0.29.0 to 0.30.1", "", {"requirements.txt": 1}),
    (4, "Improve error messages for invalid dates", "", {"src/tripplanner/cli.py": 18, "src/tripplanner/api/routes.py": 12}),
    (0, "Remove deprecated `trip export --legacy` flag", "", {"src/tripplanner/cli.py": 3, "docs/configuration.md": 2}),
    (2, "Bump version to 2.0.0", "Breaking: the CLI now talks to the REST API instead of the database.", {"CHANGELOG.md": 40, "pyproject.toml": 1, "src/tripplanner/__init__.py": 1}),
    (1, "Fix 500 on /trips/{id} for deleted trips", "Return 404 instead.\n\nFixes #97", {"src/tripplanner/api/routes.py": 7, "tests/test_api.py": 11}),
    (3, "Add offline mode for the mobile export", "", {"src/tripplanner/export_pdf.py": 30, "src/tripplanner/offline.py": 66}),
    (4, "Update README screenshots and quick start", "", {"README.md": 25}),
]

words = ("trip stop route budget cache date zone user token booking weather export "
         "price total day night city hotel flight train limit retry query index").split()


def touch(path, n):
    full = os.path.join(repo, path)
    os.makedirs(os.path.dirname(full) or repo, exist_ok=True)
    with open(full, "a", encoding="utf-8") as fh:
        for _ in range(n):
            fh.write(" ".join(random.choice(words) for _ in range(random.randint(3, 9))) + "\n")


def git(*args, env=None):
    subprocess.run(["git", *args], cwd=repo, check=True, env=env, stdout=subprocess.DEVNULL)


git("init", "-q", "-b", "main")
git("config", "user.name", "placeholder")
git("config", "user.email", "placeholder@example.invalid")
ts = 1704103200  # 2024-01-01 10:00 UTC
for a, subject, body, files in C:
    ts += random.randint(3, 70) * 3600 + random.randint(0, 3599)
    for path, n in files.items():
        touch(path, n)
    git("add", "-A")
    name, email = AUTHORS[a]
    tz = ["+0100", "-0300", "+0530", "+0200", "+0900", "+0000"][a]
    env = dict(os.environ, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
               GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email,
               GIT_AUTHOR_DATE=f"{ts} {tz}", GIT_COMMITTER_DATE=f"{ts} {tz}")
    msg = subject + ("\n\n" + body if body else "")
    git("commit", "-q", "-m", msg, env=env)
    if subject in ("Release 1.0.0", "Release 1.1.0", "Bump version to 2.0.0"):
        tag = {"Release 1.0.0": "v1.0.0", "Release 1.1.0": "v1.1.0"}.get(subject, "v2.0.0")
        git("tag", "-a", tag, "-m", subject, env=env)
PYEOF
  $PY "$W/make_repo.py" "$G"
  ( cd "$G"
    git --no-pager log > "$OUT/git_log.txt"
    git --no-pager log --stat > "$OUT/git_log_stat.txt"
    git --no-pager log --oneline --decorate > "$OUT/git_log_oneline.txt"
    git --no-pager log --pretty=format:'%h %ad %<(16,trunc)%an %s' --date=iso > "$OUT/git_log_format.txt"
    echo >> "$OUT/git_log_format.txt"
  )
}
want git && sec_git

###############################################################################
# Server logs: a scratch PostgreSQL 15 cluster's log, and a Python worker's log
###############################################################################
sec_logs() {
  say logs
  local PGB=${PGBIN:-/usr/lib/postgresql/15/bin}
  local D=$W/pg
  mkdir -p "$D"
  chown postgres "$D"
  local SOCK=$D/sock
  runuser -u postgres -- mkdir -p "$SOCK"
  runuser -u postgres -- "$PGB/initdb" -D "$D/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 > /dev/null
  cat >> "$D/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$SOCK'
port = 54329
logging_collector = off
log_line_prefix = '%m [%p] %q%u@%d '
log_connections = on
log_disconnections = on
log_statement = 'ddl'
log_min_duration_statement = 250
log_checkpoints = on
log_lock_waits = on
deadlock_timeout = 500ms
log_autovacuum_min_duration = 0
autovacuum_naptime = 2s
CONF
  runuser -u postgres -- "$PGB/pg_ctl" -D "$D/data" -l "$D/server.log" -w start > /dev/null
  local PSQL="runuser -u postgres -- $PGB/psql -h $SOCK -p 54329 -X -q"
  $PSQL -d postgres -c "CREATE ROLE app LOGIN" -c "CREATE DATABASE shop OWNER app" > /dev/null
  $PSQL -U app -d shop > /dev/null 2>&1 <<'SQL'
CREATE TABLE customers (id serial PRIMARY KEY, email text UNIQUE NOT NULL, name text, created_at timestamptz DEFAULT now());
CREATE TABLE orders (id serial PRIMARY KEY, customer_id int REFERENCES customers(id), total numeric(10,2) CHECK (total >= 0), status text NOT NULL DEFAULT 'new', created_at timestamptz DEFAULT now());
CREATE INDEX orders_customer_idx ON orders(customer_id);
INSERT INTO customers (email, name) SELECT 'user' || g || '@example.com', 'User ' || g FROM generate_series(1, 5000) g;
INSERT INTO orders (customer_id, total, status) SELECT 1 + (g % 5000), (g % 997) * 1.37, (ARRAY['new','paid','shipped'])[1 + g % 3] FROM generate_series(1, 200000) g;
SELECT pg_sleep(0.3);
INSERT INTO customers (email, name) VALUES ('user42@example.com', 'Duplicate Person');
INSERT INTO orders (customer_id, total) VALUES (999999, 10.00);
INSERT INTO orders (customer_id, total) VALUES (7, -5.00);
SELECT customer_id, sum(total) FROM orders GROUP BY customer_id ORDER BY 2 DESC LIMIT 5;
SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.email LIKE '%9%@example.com';
UPDATE orders SET status = 'archived' WHERE created_at < now() - interval '1 year';
SELEC * FROM orders LIMIT 1;
SELECT amount FROM orders LIMIT 1;
ALTER TABLE orders ADD COLUMN shipped_at timestamptz;
DELETE FROM orders WHERE status = 'new' AND id % 10 = 0;
SQL
  # a deadlock between two sessions
  $PSQL -U app -d shop > /dev/null 2>&1 <<'SQL' &
BEGIN;
UPDATE customers SET name = 'A' WHERE id = 1;
SELECT pg_sleep(1);
UPDATE customers SET name = 'A' WHERE id = 2;
COMMIT;
SQL
  local bg=$!
  sleep 0.3
  $PSQL -U app -d shop > /dev/null 2>&1 <<'SQL' || true
BEGIN;
UPDATE customers SET name = 'B' WHERE id = 2;
SELECT pg_sleep(1);
UPDATE customers SET name = 'B' WHERE id = 1;
COMMIT;
SQL
  wait $bg || true
  $PSQL -U app -d reporting -c "SELECT 1" > /dev/null 2>&1 || true
  $PSQL -U analyst -d shop -c "SELECT 1" > /dev/null 2>&1 || true
  $PSQL -U app -d shop > /dev/null 2>&1 <<'SQL' || true
VACUUM ANALYZE orders;
CREATE MATERIALIZED VIEW daily_revenue AS SELECT date_trunc('day', created_at) AS day, sum(total) FROM orders GROUP BY 1;
SELECT pg_sleep(3);
SQL
  $PSQL -d postgres -c "CHECKPOINT" > /dev/null
  runuser -u postgres -- "$PGB/pg_ctl" -D "$D/data" -m fast -w stop > /dev/null
  cat "$D/server.log" > "$OUT/postgres_server_log.txt"

  # A worker service's log (Python logging, simulated clock so the file is repeatable)
  cat > "$W/worker.py" <<'PYEOF'
import logging
import random
import sys

random.seed(31)
clock = [1718096400.0]  # 2024-06-11 09:00:00 UTC
factory = logging.getLogRecordFactory()


def record_factory(*args, **kwargs):
    rec = factory(*args, **kwargs)
    clock[0] += random.expovariate(1 / 2.4)
    rec.created = clock[0]
    rec.msecs = (clock[0] % 1) * 1000
    rec.process = 4127
    return rec


logging.setLogRecordFactory(record_factory)
logging.basicConfig(stream=sys.stdout, level=logging.DEBUG,
                    format="%(asctime)s.%(msecs)03d %(levelname)-7s [%(process)d] %(name)s: %(message)s",
                    datefmt="%Y-%m-%d %H:%M:%S")
import time
logging.Formatter.converter = time.gmtime

log = logging.getLogger("syncworker")
db = logging.getLogger("syncworker.db")
http = logging.getLogger("syncworker.http")
sched = logging.getLogger("apscheduler.scheduler")

log.info("starting syncworker 3.8.2 (python 3.11.7, pid 4127)")
log.info("config: batch_size=200 concurrency=4 upstream=https://erp.example.net/api")
db.info("connection pool created: host=db-primary.internal port=5432 size=10")
sched.info("Added job \"sync_orders\" to job store \"default\"")
sched.info("Added job \"sync_inventory\" to job store \"default\"")
sched.info("Scheduler started")
batch = 0
db_down_from, db_down_to = 118, 131
for step in range(420):
    batch += 1
    kind = random.choice(["orders", "orders", "inventory", "customers"])
    n = random.randint(20, 200)
    log.debug("batch %d: fetching %s page %d", batch, kind, random.randint(1, 90))
    ms = random.randint(80, 900)
    if random.random() < 0.05:
        http.warning("GET /api/%s?page=%d took %d ms (slow upstream)", kind, random.randint(1, 90), random.randint(2500, 6000))
    if random.random() < 0.02:
        http.warning("GET /api/%s returned 429 Too Many Requests, retrying in %ds", kind, random.choice([2, 4, 8]))
    if db_down_from <= step < db_down_to:
        if step == db_down_from:
            db.error("could not execute batch %d: psycopg.OperationalError: connection to server at \"db-primary.internal\" (10.20.0.5), port 5432 failed: Connection timed out", batch)
            db.warning("marking db-primary.internal unhealthy, failing over to db-replica-1.internal")
        else:
            db.error("could not execute batch %d: psycopg.OperationalError: connection pool exhausted (10/10 in use, waited 30.0 s)", batch)
            log.warning("batch %d requeued (attempt %d/5)", batch, min(5, step - db_down_from + 1))
        continue
    if step == db_down_to:
        db.info("connection to db-primary.internal restored after %d failed batches", db_down_to - db_down_from)
    if random.random() < 0.01:
        log.error("batch %d: record %s-%d rejected by upstream: 422 Unprocessable Entity {\"field\": \"vat_id\", \"error\": \"invalid format\"}", batch, kind, random.randint(10000, 99999))
    db.debug("upserted %d %s rows in %d ms", n, kind, ms)
    log.info("batch %d done: %s synced=%d skipped=%d in %.2fs", batch, kind, n, random.randint(0, 5), ms / 1000 + random.random())
    if step % 60 == 59:
        log.info("heartbeat: queue_depth=%d lag=%ds rss=%dMiB", random.randint(0, 40), random.randint(0, 90), 180 + step // 4)
log.info("received SIGTERM, draining")
sched.info("Scheduler has been shut down")
db.info("connection pool closed")
log.info("stopped")
PYEOF
  $PY "$W/worker.py" > "$OUT/app_worker_log.txt"
}
want logs && sec_logs

###############################################################################
# Process tables: ps aux and top -b -n1 of a small workload in its own PID and
# network namespace (so nothing of the host's own processes shows up)
###############################################################################
sec_procs() {
  say procs
  local PGB=${PGBIN:-/usr/lib/postgresql/15/bin}
  local D=$W/procs
  mkdir -p "$D"
  cat > "$D/api_server.py" <<'PYEOF'
import multiprocessing as mp
import sys
import time


def worker(n):
    cache = [bytes(1024) * (40 + 9 * n) for _ in range(1024)]  # 40-80 MiB each
    while True:
        time.sleep(1)


if __name__ == "__main__":
    workers = int(sys.argv[sys.argv.index("--workers") + 1])
    procs = [mp.Process(target=worker, args=(i,)) for i in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
PYEOF
  cat > "$D/etl_nightly.py" <<'PYEOF'
import time
frames = [bytearray(b"x" * (64 << 20)) for _ in range(22)]  # ~1.4 GiB resident
open("etl.ready", "w").close()
while True:
    time.sleep(1)
PYEOF
  cat > "$D/thumbnailer.py" <<'PYEOF'
import hashlib
x = b"img"
while True:
    x = hashlib.sha256(x).digest()
PYEOF
  cat > "$D/workload.sh" <<SHEOF
set -e
ip link set lo up 2>/dev/null || true
cd "$D"
export PATH=/usr/bin:/bin:/usr/sbin:/sbin
runuser -u postgres -- mkdir -p "$D/pgsock"
runuser -u postgres -- "$PGB/initdb" -D "$D/pgdata" -U postgres --auth=trust > /dev/null
runuser -u postgres -- "$PGB/pg_ctl" -D "$D/pgdata" -o "-k $D/pgsock -c listen_addresses=''" -l "$D/pg.log" -w start > /dev/null
python3 api_server.py --bind 127.0.0.1:8000 --workers 4 &
python3 etl_nightly.py --date 2024-06-11 --source warehouse/exports &
python3 thumbnailer.py --queue images --concurrency 1 &
python3 -m http.server 9000 --bind 127.0.0.1 > /dev/null 2>&1 &
bash -c 'while true; do sleep 5; done' &
sleep infinity &
tail -f /dev/null &
for i in \$(seq 1 120); do [ -e etl.ready ] && break; sleep 0.5; done
sleep 4
ps auxww > "$OUT/ps_aux.txt"
top -b -n1 -c -w 180 > "$OUT/top_batch.txt"
runuser -u postgres -- "$PGB/pg_ctl" -D "$D/pgdata" -m fast -w stop > /dev/null
SHEOF
  chown postgres "$D"
  unshare --pid --fork --mount-proc --net bash "$D/workload.sh"
}
want procs && [[ $MACHINE == --machine ]] && sec_procs

###############################################################################
# df -hT of a set of tmpfs volumes mounted in a private mount namespace (the
# volumes are filled to different levels; only their mount points are listed)
###############################################################################
sec_df() {
  say df
  cat > "$W/df.sh" <<'SHEOF'
set -e
mount --make-rprivate /
mount -t tmpfs -o size=64M tmpfs /srv
vol() {  # mountpoint size fill_MiB
  mkdir -p "$1"
  mount -t tmpfs -o "size=$2" tmpfs "$1"
  if [ "$3" -gt 0 ]; then head -c "$(( $3 * 1048576 ))" /dev/zero > "$1/.fill"; fi
  echo "$1"
}
M=()
M+=("$(vol /srv/data 819M 295)")
M+=("$(vol /srv/postgres 614M 211)")
M+=("$(vol /srv/postgres-wal 204M 38)")
M+=("$(vol /srv/backups 153M 149)")
M+=("$(vol /srv/uploads 409M 123)")
M+=("$(vol /srv/logs 102M 61)")
M+=("$(vol /srv/cache/pip 51M 9)")
M+=("$(vol /srv/cache/npm 51M 14)")
M+=("$(vol /srv/cache/ccache 204M 102)")
M+=("$(vol /srv/ci/workspace 307M 87)")
M+=("$(vol /srv/ci/artifacts 204M 129)")
M+=("$(vol /srv/registry 614M 337)")
M+=("$(vol /srv/grafana 25M 4)")
M+=("$(vol /srv/prometheus 409M 238)")
M+=("$(vol /srv/minio/bucket-a 204M 32)")
M+=("$(vol /srv/minio/bucket-b 204M 1)")
M+=("$(vol /srv/home/maya 102M 23)")
M+=("$(vol /srv/home/tomas 102M 61)")
M+=("$(vol /srv/home/priya 102M 8)")
M+=("$(vol /srv/scratch 819M 0)")
M+=("$(vol /srv/tmp 102M 1)")
M+=("$(vol /srv/kubelet/pods/3f1c2a9e-8d4b-4c1e-9a77-52b0f6e1d3a1/volumes/kubernetes.io~empty-dir/cache 25M 1)")
M+=("$(vol /srv/kubelet/pods/b7e40c12-61f3-4f0a-8c5d-0d9e2a4b7f66/volumes/kubernetes.io~empty-dir/tmp 16M 0)")
M+=("$(vol /srv/kubelet/pods/e29d8f04-2b7a-4d6c-b1e3-7a5c9f0d2e18/volumes/kubernetes.io~empty-dir/data 51M 13)")
M+=("$(vol /srv/kubelet/pods/5a0e7b3c-9f12-4e8d-a6c4-1b2d3e4f5a6b/volumes/kubernetes.io~empty-dir/spool 102M 37)")
M+=("$(vol /srv/kubelet/pods/91c4d2e7-3a5b-4f60-8e1d-c2b3a4f5e6d7/volumes/kubernetes.io~empty-dir/cache 25M 16)")
M+=("$(vol /srv/elasticsearch 614M 399)")
M+=("$(vol /srv/redis 51M 20)")
M+=("$(vol /srv/mail-queue 25M 2)")
M+=("$(vol /srv/jupyter 204M 45)")
df -hT / /dev/shm "${M[@]}"
SHEOF
  unshare --mount bash "$W/df.sh" > "$OUT/df_volumes.txt"
}
want df && [[ $MACHINE == --machine ]] && sec_df

###############################################################################
# Listings that need no machine state: env of a container-like process,
# column -t of an inventory
###############################################################################
sec_listings() {
  say listings
  env -i HOSTNAME=shop-api-7d9f8c6b5-x2kqp HOME=/home/app LANG=C.UTF-8 \
    PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHON_VERSION=3.11.9 PYTHON_SHA256=9b1e896523fc510691126c864406d9360a3d1e986acbda59cda57b5abda45b87 \
    PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 \
    APP_ENV=production APP_VERSION=2.14.3 APP_COMMIT=9f41c2e LOG_LEVEL=info LOG_FORMAT=json \
    GUNICORN_CMD_ARGS="--workers=4 --threads=2 --timeout=60 --bind=0.0.0.0:8000" \
    DATABASE_HOST=pg-main.shop.svc.cluster.local DATABASE_PORT=5432 DATABASE_NAME=shop DATABASE_USER=shop_api \
    DATABASE_POOL_SIZE=20 DATABASE_SSLMODE=require \
    REDIS_URL=redis://redis-master.shop.svc.cluster.local:6379/2 \
    CELERY_BROKER_URL=amqp://rabbitmq.shop.svc.cluster.local:5672/shop \
    S3_BUCKET=shop-prod-media S3_REGION=eu-west-3 CDN_BASE_URL=https://cdn.shop.example \
    SENTRY_ENVIRONMENT=production SENTRY_TRACES_SAMPLE_RATE=0.05 \
    OTEL_SERVICE_NAME=shop-api OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector.observability:4317 \
    FEATURE_NEW_CHECKOUT=true FEATURE_SEARCH_V2=false SESSION_TTL_SECONDS=1800 \
    MAX_UPLOAD_MB=25 TZ=Europe/Paris \
    KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 KUBERNETES_SERVICE_PORT_HTTPS=443 \
    KUBERNETES_PORT=tcp://10.96.0.1:443 KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443 \
    KUBERNETES_PORT_443_TCP_PROTO=tcp KUBERNETES_PORT_443_TCP_PORT=443 KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1 \
    SHOP_API_SERVICE_HOST=10.104.12.7 SHOP_API_SERVICE_PORT=8000 SHOP_API_PORT=tcp://10.104.12.7:8000 \
    SHOP_API_PORT_8000_TCP=tcp://10.104.12.7:8000 SHOP_API_PORT_8000_TCP_PROTO=tcp SHOP_API_PORT_8000_TCP_PORT=8000 SHOP_API_PORT_8000_TCP_ADDR=10.104.12.7 \
    SHOP_WEB_SERVICE_HOST=10.104.40.19 SHOP_WEB_SERVICE_PORT=3000 SHOP_WEB_PORT=tcp://10.104.40.19:3000 \
    SHOP_WEB_PORT_3000_TCP=tcp://10.104.40.19:3000 SHOP_WEB_PORT_3000_TCP_PROTO=tcp SHOP_WEB_PORT_3000_TCP_PORT=3000 SHOP_WEB_PORT_3000_TCP_ADDR=10.104.40.19 \
    REDIS_MASTER_SERVICE_HOST=10.104.77.3 REDIS_MASTER_SERVICE_PORT=6379 REDIS_MASTER_PORT=tcp://10.104.77.3:6379 \
    REDIS_MASTER_PORT_6379_TCP=tcp://10.104.77.3:6379 REDIS_MASTER_PORT_6379_TCP_PROTO=tcp REDIS_MASTER_PORT_6379_TCP_PORT=6379 REDIS_MASTER_PORT_6379_TCP_ADDR=10.104.77.3 \
    RABBITMQ_SERVICE_HOST=10.104.90.44 RABBITMQ_SERVICE_PORT=5672 RABBITMQ_PORT=tcp://10.104.90.44:5672 \
    RABBITMQ_PORT_5672_TCP=tcp://10.104.90.44:5672 RABBITMQ_PORT_5672_TCP_PROTO=tcp RABBITMQ_PORT_5672_TCP_PORT=5672 RABBITMQ_PORT_5672_TCP_ADDR=10.104.90.44 \
    PG_MAIN_SERVICE_HOST=10.104.3.250 PG_MAIN_SERVICE_PORT=5432 PG_MAIN_PORT=tcp://10.104.3.250:5432 \
    PG_MAIN_PORT_5432_TCP=tcp://10.104.3.250:5432 PG_MAIN_PORT_5432_TCP_PROTO=tcp PG_MAIN_PORT_5432_TCP_PORT=5432 PG_MAIN_PORT_5432_TCP_ADDR=10.104.3.250 \
    env > "$OUT/env_container.txt"

  $PY - "$W/vms.csv" <<'PYEOF'
import csv, random, sys
random.seed(17)
types = {"e2-small": (2, 2), "e2-medium": (2, 4), "n2-standard-4": (4, 16), "n2-standard-8": (8, 32),
         "n2-highmem-8": (8, 64), "n2-highmem-16": (16, 128), "c3-standard-22": (22, 88),
         "n2-highmem-32": (32, 256), "t2d-standard-4": (4, 16)}
roles = ["web", "api", "worker", "db", "cache", "ci-runner", "bastion", "etl", "search", "kafka"]
zones = ["europe-west1-b", "europe-west1-c", "europe-west4-a", "us-central1-a", "us-east1-d"]
owners = ["platform", "data", "payments", "search", "growth", "infra"]
with open(sys.argv[1], "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["NAME", "ZONE", "MACHINE_TYPE", "VCPUS", "MEMORY_GB", "DISK_GB", "STATUS", "INTERNAL_IP", "CREATED", "OWNER"])
    n = 0
    for role in roles:
        for k in range(random.randint(6, 16)):
            t = random.choice(list(types))
            if role == "db" and k == 2:
                t = "n2-highmem-32"
            elif t == "n2-highmem-32":
                t = "n2-highmem-16"
            vc, mem = types[t]
            n += 1
            w.writerow([f"{role}-{random.choice(['prod', 'prod', 'staging'])}-{k + 1:02d}", random.choice(zones), t, vc, mem,
                        random.choice([20, 50, 100, 200, 500, 1000, 2000]),
                        random.choice(["RUNNING"] * 8 + ["TERMINATED", "STOPPING"]),
                        f"10.{random.randint(10, 40)}.{random.randint(0, 255)}.{random.randint(2, 254)}",
                        f"2023-{random.randint(1, 12):02d}-{random.randint(1, 28):02d}",
                        random.choice(owners)])
PYEOF
  column -s, -t < "$W/vms.csv" > "$OUT/column_vms.txt"
}
want listings && sec_listings

###############################################################################
# Rust and Go: a borrow-checker error, go test and cargo test runs with
# failures; and ls -la of a folder of rotated logs
###############################################################################
sec_more() {
  say more
  local RS=$W/rust
  mkdir -p "$RS"
  cat > "$RS/stock.rs" <<'RSEOF'
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};

const MAX_ERRORS: usize = 10;

#[derive(Debug, Clone)]
struct Order {
    id: u32,
    sku: String,
    qty: u32,
}

fn reserve(stock: &mut HashMap<String, u32>, order: &Order) -> Result<(), String> {
    let available = stock.get_mut(&order.sku).ok_or(format!("unknown sku {}", order.sku))?;
    if *available < order.qty {
        return Err(format!("order {}: only {} left of {}", order.id, available, order.sku));
    }
    *available -= order.qty;
    Ok(())
}

fn error_rate(failed: u32, total: u32) -> f64 {
    let mut rate = failed as f64 / total as f64;
    rate
}

fn summarize(orders: Vec<Order>) -> u32 {
    orders.iter().map(|o| o.qty).sum()
}

fn main() {
    let mut error_count = 0;
    let mut stock: HashMap<String, u32> = HashMap::new();
    stock.insert("SKU-1".to_string(), 10);
    stock.insert("SKU-2".to_string(), 3);
    let unused_limit = 100;
    let orders = vec![
        Order { id: 1, sku: "SKU-1".into(), qty: 4 },
        Order { id: 2, sku: "SKU-2".into(), qty: 5 },
    ];
    let total = summarize(orders);
    for order in &orders {
        if let Err(e) = reserve(&mut stock, order) {
            eprintln!("{}", e);
        }
    }
    let first = stock.get("SKU-1");
    stock.clear();
    println!("reserved {} units, SKU-1 left: {:?}", total, first);
}
RSEOF
  ( cd "$RS" && rustc --edition 2021 -W unused stock.rs -o stock > "$OUT/rustc_borrow_error.txt" 2>&1 || true )

  export GOCACHE=$W/go/cache GOPATH=$W/go/path GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off
  local GT=$W/go/durations
  mkdir -p "$GT"
  cat > "$GT/go.mod" <<'GOEOF'
module example.com/durations

go 1.19
GOEOF
  cat > "$GT/parse.go" <<'GOEOF'
// Package durations parses human durations like "1h30m", "2 days", "90s".
package durations

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

var units = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// Parse parses s into a time.Duration.
func Parse(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	fields := strings.Fields(s)
	if len(fields) != 2 {
		return 0, fmt.Errorf("cannot parse %q", s)
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0, fmt.Errorf("bad number in %q: %w", s, err)
	}
	u, ok := units[fields[1]]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", fields[1])
	}
	return time.Duration(n) * u, nil
}

// Human formats d the way people write it.
func Human(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	case d >= time.Hour:
		return fmt.Sprintf("%dh%dm", d/time.Hour, (d%time.Hour)/time.Minute)
	default:
		return d.String()
	}
}
GOEOF
  cat > "$GT/parse_test.go" <<'GOEOF'
package durations

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want time.Duration
	}{
		{"go-style", "1h30m", 90 * time.Minute},
		{"seconds", "90s", 90 * time.Second},
		{"words-days", "2 days", 48 * time.Hour},
		{"words-minutes", "15 minutes", 15 * time.Minute},
		{"week", "1 week", 7 * 24 * time.Hour},
		{"weeks-plural", "2 weeks", 14 * 24 * time.Hour},
		{"upper-case", "3 HOURS", 3 * time.Hour},
		{"padded", "  45 min ", 45 * time.Minute},
		{"negative", "-5 minutes", -5 * time.Minute},
		{"fraction", "1.5 hours", 90 * time.Minute},
		{"one-second", "1 second", time.Second},
		{"sec-abbrev", "30 sec", 30 * time.Second},
		{"minutes-go", "45m", 45 * time.Minute},
		{"hours-go", "12h", 12 * time.Hour},
		{"ms", "250ms", 250 * time.Millisecond},
		{"compound-go", "2h45m30s", 2*time.Hour + 45*time.Minute + 30*time.Second},
		{"one-day", "1 day", 24 * time.Hour},
		{"d-abbrev", "3 d", 72 * time.Hour},
		{"w-abbrev", "2 w", 14 * 24 * time.Hour},
		{"hour-singular", "1 hour", time.Hour},
		{"min-abbrev", "5 min", 5 * time.Minute},
		{"tab-separated", "10\tminutes", 10 * time.Minute},
		{"big-number", "10000 seconds", 10000 * time.Second},
		{"zero", "0 minutes", 0},
		{"us", "1500us", 1500 * time.Microsecond},
		{"mixed-case-unit", "4 Days", 96 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q) returned error: %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "abc", "5 fortnights", "1 2 3"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) should fail", in)
		}
	}
}

func TestHuman(t *testing.T) {
	cases := map[time.Duration]string{
		90 * time.Minute: "1h30m",
		3 * 24 * time.Hour: "3 days",
		45 * time.Second: "45s",
		36 * time.Hour: "1 days 12h",
		2 * time.Hour: "2h0m",
		150 * time.Minute: "2h30m",
		10 * time.Second: "10s",
		7 * 24 * time.Hour: "7 days",
	}
	for d, want := range cases {
		if got := Human(d); got != want {
			t.Errorf("Human(%v) = %q, want %q", d, got, want)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Parse("15 minutes")
	}
}
GOEOF
  ( cd "$GT" && go test -v -count=1 ./... > "$OUT/go_test_verbose.txt" 2>&1 || true )

  local CT=$W/rust/ratelimit
  mkdir -p "$CT/src"
  cat > "$CT/Cargo.toml" <<'RSEOF'
[package]
name = "ratelimit"
version = "0.3.0"
edition = "2021"

[dependencies]
RSEOF
  cat > "$CT/src/lib.rs" <<'RSEOF'
//! A token-bucket rate limiter.

#[derive(Debug)]
pub struct Bucket {
    capacity: u32,
    tokens: f64,
    refill_per_sec: f64,
    last_ms: u64,
}

impl Bucket {
    pub fn new(capacity: u32, refill_per_sec: f64) -> Self {
        Bucket { capacity, tokens: capacity as f64, refill_per_sec, last_ms: 0 }
    }

    fn refill(&mut self, now_ms: u64) {
        let elapsed = now_ms.saturating_sub(self.last_ms) as f64 / 1000.0;
        self.tokens = (self.tokens + elapsed * self.refill_per_sec).min(self.capacity as f64);
        self.last_ms = now_ms;
    }

    pub fn try_take(&mut self, n: u32, now_ms: u64) -> bool {
        self.refill(now_ms);
        if self.tokens >= n as f64 {
            self.tokens -= n as f64;
            true
        } else {
            false
        }
    }

    pub fn available(&self) -> u32 {
        self.tokens.round() as u32
    }

    pub fn wait_time_ms(&self, n: u32) -> u64 {
        if self.tokens >= n as f64 {
            return 0;
        }
        ((n as f64 - self.tokens) / self.refill_per_sec * 1000.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_full() {
        assert_eq!(Bucket::new(10, 1.0).available(), 10);
    }

    #[test]
    fn take_reduces_tokens() {
        let mut b = Bucket::new(10, 1.0);
        assert!(b.try_take(3, 0));
        assert_eq!(b.available(), 7);
    }

    #[test]
    fn cannot_take_more_than_capacity() {
        let mut b = Bucket::new(5, 1.0);
        assert!(!b.try_take(6, 0));
    }

    #[test]
    fn refills_over_time() {
        let mut b = Bucket::new(10, 2.0);
        assert!(b.try_take(10, 0));
        assert!(b.try_take(4, 2000));
    }

    #[test]
    fn refill_is_capped() {
        let mut b = Bucket::new(10, 5.0);
        b.try_take(1, 0);
        b.refill(60_000);
        assert_eq!(b.available(), 10);
    }

    #[test]
    fn wait_time_when_empty() {
        let mut b = Bucket::new(4, 2.0);
        assert!(b.try_take(4, 0));
        assert_eq!(b.wait_time_ms(1), 500);
    }

    #[test]
    fn wait_time_rounds_up() {
        let mut b = Bucket::new(3, 3.0);
        assert!(b.try_take(3, 0));
        assert_eq!(b.wait_time_ms(2), 667);
    }

    #[test]
    fn clock_going_backwards_does_not_refill() {
        let mut b = Bucket::new(10, 1.0);
        assert!(b.try_take(10, 5_000));
        assert!(!b.try_take(1, 4_000));
    }

    #[test]
    fn zero_refill_rate_never_refills() {
        let mut b = Bucket::new(2, 0.0);
        assert!(b.try_take(2, 0));
        assert_eq!(b.wait_time_ms(1), u64::MAX);
    }

    #[test]
    fn many_small_takes() {
        let mut b = Bucket::new(100, 10.0);
        for i in 0..100 {
            assert!(b.try_take(1, i), "take {} failed", i);
        }
    }
}
RSEOF
  ( cd "$CT" && RUST_BACKTRACE=1 CARGO_TARGET_DIR=$W/rust/target CARGO_TERM_COLOR=never cargo test --offline > "$OUT/cargo_test.txt" 2>&1 || true )

  # ls -la of a folder of rotated logs and exports (sizes and dates fixed)
  local L=$W/var-log-shop
  mkdir -p "$L/archive"
  $PY - "$L" <<'PYEOF'
import datetime as dt
import os
import random
import sys

random.seed(5)
root = sys.argv[1]
start = dt.datetime(2024, 3, 1, 0, 5)
files = []
for day in range(92):
    d = start + dt.timedelta(days=day)
    for svc in ("api", "worker", "nginx-access"):
        size = int(random.lognormvariate(14.2 if svc == "nginx-access" else 13.0, 0.35))
        if svc == "worker" and day == 71:
            size = 912_337_408  # the day the retry loop went wild
        name = f"{svc}-{d:%Y-%m-%d}.log.gz" if day < 85 else f"{svc}-{d:%Y-%m-%d}.log"
        mtime = d + dt.timedelta(days=1, minutes=random.randint(0, 50))
        files.append((name, size, mtime))
files.append(("api.log", 48_213_911, dt.datetime(2024, 6, 1, 9, 41)))
files.append(("worker.log", 7_730_102, dt.datetime(2024, 6, 1, 9, 42)))
files.append(("nginx-access.log", 130_944_227, dt.datetime(2024, 6, 1, 9, 42)))
files.append(("nginx-error.log", 88_412, dt.datetime(2024, 6, 1, 8, 13)))
files.append(("logrotate.status", 2_311, dt.datetime(2024, 6, 1, 0, 5)))
for name, size, mtime in files:
    p = os.path.join(root, name)
    with open(p, "wb") as fh:
        fh.truncate(size)
    ts = mtime.replace(tzinfo=dt.timezone.utc).timestamp()
    os.utime(p, (ts, ts))
ts = dt.datetime(2024, 2, 29, 23, 59, tzinfo=dt.timezone.utc).timestamp()
os.utime(os.path.join(root, "archive"), (ts, ts))
PYEOF
  ( cd "$L" && touch -d '2024-06-01 09:42' . && ls -la --time-style=long-iso > "$OUT/ls_la_logs.txt" )
}
want more && sec_more

###############################################################################
# Machine state: package logs and listings of the machine the set was captured
# on. Committed as captured; re-running this section on another machine gives
# other files (and the needles of these cases would no longer match).
###############################################################################
sec_machine() {
  say machine
  # dpkg.log is ~420 KB here; two slices of it, by date
  awk '$1 >= "2026-05-09" && $1 <= "2026-05-20"' /var/log/dpkg.log > "$OUT/dpkg_log_may.txt"
  awk '$1 >= "2026-12-07"' /var/log/dpkg.log > "$OUT/dpkg_log_dec.txt"
  cat /var/log/apt/history.log > "$OUT/apt_history.txt"
  # term.log is ~220 KB; the sessions from 2026-05-20 up to the language runtimes of 2026-12-07
  awk '/^Log started: 2026-05-20/ {on=1} /^Log started: 2026-12-07  15:13:48/ {on=0} on' /var/log/apt/term.log > "$OUT/apt_term_log.txt"
  cat /var/log/alternatives.log > "$OUT/alternatives_log.txt"
  dpkg -l > "$OUT/dpkg_l.txt"
  apt-cache policy postgresql-15 nodejs git python3 gcc-12 libssl3 r-base-core chromium openssh-server curl tzdata > "$OUT/apt_cache_policy.txt"
  "$PY" -m pip list --exclude-editable 2>/dev/null > "$OUT/pip_list.txt"
  "$PY" -m pip show -f pytest 2>/dev/null > "$OUT/pip_show_pytest.txt"
  ls -la /usr/bin > "$OUT/ls_usr_bin.txt"
  du -h -d 2 /usr/share 2>/dev/null > "$OUT/du_usr_share.txt"
}
want machine && [[ $MACHINE == --machine ]] && sec_machine

say "done: $(ls "$OUT" | wc -l) files in $OUT"

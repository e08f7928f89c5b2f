"""Build the PostgreSQL-docs corpus of the blind search evaluation.

Converts a fixed, coherent subset of the PostgreSQL 15 HTML manual (Debian
package ``postgresql-doc-15``) to Markdown with ``html2text``, one ``.md``
file per page, into the directory given on the command line.

    apt-get install -y postgresql-doc-15
    pip install html2text==2025.4.15
    python build_corpus.py OUT_DIR [--html DIR] [--check manifest.json]

The conversion is deterministic: fixed page list, fixed html2text options, no
line wrapping (``body_width=0``), links reduced to their text, the navigation
header and footer of each page removed.  ``manifest.json`` beside this script
lists every produced file with its sha256; ``--check`` compares against it
(the hashes hold for the html2text version and the postgresql-doc-15 version
named in the manifest).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

DEFAULT_HTML = "/usr/share/doc/postgresql-doc-15/html"

# Page-name prefixes (chapters) and single pages that make up the corpus.
PREFIXES = [
    "runtime-config",  # Chapter 20: server configuration (settings)
    "functions",  # Chapter 9: functions and operators
    "datatype",  # Chapter 8: data types
    "indexes",  # Chapter 11: indexes
    "ddl",  # Chapter 5: data definition
    "queries",  # Chapter 7: queries
    "plpgsql",  # Chapter 43: PL/pgSQL
    "backup",  # Chapter 26: backup and restore
    "wal",  # Chapter 30: reliability and the WAL
    "routine",  # Chapter 25: routine maintenance
    "auth-",  # Chapter 21: client authentication
    "client-auth",
]
PAGES = [
    # Chapter 13: concurrency control
    "mvcc", "mvcc-intro", "transaction-iso", "explicit-locking",
    "applevel-consistency", "mvcc-serialization-failure-handling",
    "mvcc-caveats", "locking-indexes",
    # Chapter 14: performance tips
    "performance-tips", "using-explain", "planner-stats", "explicit-joins",
    "populate", "non-durability",
    # Appendix A: error codes
    "errcodes-appendix",
    # Selected SQL commands
    "sql-createindex", "sql-createtable", "sql-altertable", "sql-select",
    "sql-insert", "sql-update", "sql-delete", "sql-vacuum", "sql-analyze",
    "sql-explain", "sql-copy", "sql-createrole", "sql-grant", "sql-revoke",
    "sql-createfunction", "sql-createtrigger", "sql-altersystem", "sql-set",
    "sql-show", "sql-reindex", "sql-cluster", "sql-lock", "sql-begin",
    "sql-savepoint", "sql-createview", "sql-creatematerializedview",
    "sql-refreshmaterializedview", "sql-truncate", "sql-createextension",
    "sql-createsequence", "sql-createpolicy", "sql-createdatabase",
    "sql-set-transaction", "sql-prepare", "sql-declare",
]

NAV_RE = re.compile(
    r'<div class="nav(?:header|footer)">.*?</table>(?:<hr />)?</div>', re.S
)


def select_pages(html_dir: Path) -> list[Path]:
    names = sorted(p.name for p in html_dir.glob("*.html"))
    chosen = set()
    for name in names:
        stem = name[: -len(".html")]
        if stem in PAGES or any(stem.startswith(px) for px in PREFIXES):
            chosen.add(name)
    missing = [p for p in PAGES if p + ".html" not in names]
    if missing:
        sys.exit(f"pages missing from {html_dir}: {missing}")
    return [html_dir / n for n in sorted(chosen)]


def converter():
    import html2text

    h = html2text.HTML2Text()
    h.body_width = 0  # no wrapping: answer spans stay on one line
    h.ignore_links = True
    h.ignore_images = True
    h.unicode_snob = True
    h.mark_code = False
    return h


def convert(path: Path) -> str:
    raw = path.read_text(encoding="utf-8")
    raw = NAV_RE.sub("", raw)
    text = converter().handle(raw)
    # Trailing spaces and runs of blank lines are noise of the converter.
    lines = [ln.rstrip() for ln in text.splitlines()]
    out, blank = [], 0
    for ln in lines:
        blank = blank + 1 if not ln else 0
        if blank <= 1:
            out.append(ln)
    return "\n".join(out).strip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="target directory for the .md files")
    ap.add_argument("--html", default=DEFAULT_HTML, help="PostgreSQL HTML docs")
    ap.add_argument("--check", help="manifest.json to verify the result against")
    ap.add_argument("--write-manifest", help="write a manifest.json here")
    args = ap.parse_args()

    import html2text

    html_dir = Path(args.html)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for page in select_pages(html_dir):
        name = page.stem + ".md"
        data = convert(page).encode("utf-8")
        (out / name).write_bytes(data)
        files[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    total = sum(f["bytes"] for f in files.values())
    print(f"{len(files)} files, {total} bytes in {out}")

    version = ""
    m = re.search(r"PostgreSQL ([0-9.]+) Documentation",
                  (html_dir / "index.html").read_text(encoding="utf-8"))
    if m:
        version = m.group(1)
    manifest = {
        "corpus": "PostgreSQL documentation (Debian postgresql-doc-15), Markdown",
        "postgresql_docs_version": version,
        "converter": f"html2text {'.'.join(map(str, html2text.__version__))}",
        "files": files,
    }
    if args.write_manifest:
        Path(args.write_manifest).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if args.check:
        want = json.loads(Path(args.check).read_text())
        bad = [n for n in sorted(set(want["files"]) | set(files))
               if want["files"].get(n, {}).get("sha256") != files.get(n, {}).get("sha256")]
        if bad:
            print(f"{len(bad)} files differ from the manifest, e.g. {bad[:5]}")
            print(f"manifest: {want.get('converter')}, docs {want.get('postgresql_docs_version')}; "
                  f"here: {manifest['converter']}, docs {version}")
            return 1
        print("all files match the manifest")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Rebuild the html-sphinx-rustdoc corpus (static HTML documentation pages).

The corpus is a verbatim copy of generator-written .html pages from two
Debian 12 (bookworm) documentation packages; nothing is converted or edited:

  * sphinx/...   <- python3.11-doc 3.11.2-6+deb12u9   (Sphinx HTML of the Python docs,
                    /usr/share/doc/python3.11/html/...)
  * rustdoc/...  <- rust-doc 1.63.0+dfsg1-2           (rustdoc HTML of the Rust std lib,
                    /usr/share/doc/rust-doc/html/...)

Relative paths below those html/ roots are preserved, so intra-site links between
the selected pages keep working when OUTDIR is served by `python3 -m http.server`.
Only .html pages are copied (no CSS/JS/fonts/images).

Getting the packages (either way works; (a) is what was used):

    # a) download the two .debs without installing them, let build.py unpack them
    #    (needs dpkg-deb, present on every Debian system):
    apt-get -o DPkg::Lock::Timeout=600 update
    mkdir -p /tmp/debs && cd /tmp/debs && apt-get -o DPkg::Lock::Timeout=600 download \
        python3.11-doc=3.11.2-6+deb12u9 rust-doc=1.63.0+dfsg1-2
    python3 build.py OUTDIR --debs /tmp/debs
    #   sha256 python3.11-doc_3.11.2-6+deb12u9_all.deb
    #          5b3594189d6ef9a6963ce0347fd307a1cc67620ad697e144db366070e2e146be
    #   sha256 rust-doc_1.63.0+dfsg1-2_all.deb
    #          96ef96fe6df87d939ca713bd7df3d15c2b778ccb892eca025c4ee504146f697b

    # b) or install them (rust-doc unpacks ~520 MB; needs a dpkg without a
    #    path-exclude for /usr/share/doc) and read them from /:
    apt-get -o DPkg::Lock::Timeout=600 install -y \
        python3.11-doc=3.11.2-6+deb12u9 rust-doc=1.63.0+dfsg1-2
    python3 build.py OUTDIR

    # (--root DIR reads an already unpacked tree: DIR/usr/share/doc/...)

`python3 build.py OUTDIR --check` additionally compares every written file against
manifest.json (sha256) and fails if anything differs, is missing or is extra.
`--write-manifest` regenerates manifest.json from the written files (maintainer use).

Selection (deterministic rules, applied to the package contents):
  sphinx:  tutorial/*.html, howto/*.html, faq/*.html, using/*.html, and from library/
           the "File and Directory Access" chapter (filesys.html and the 11 module
           pages it lists) plus subprocess.html.
  rustdoc: every non-redirect .html page under std/fs, std/io, std/env, std/process,
           std/path, std/string (recursively), plus std/collections/index.html and
           std/vec/index.html.  Redirect stubs ("<title>Redirection</title>") are skipped.

Standard library only (plus dpkg-deb/apt-get for fetching, outside this script).
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")

PY_HTML = "usr/share/doc/python3.11/html"
RUST_HTML = "usr/share/doc/rust-doc/html"

SPHINX_DIRS = ["tutorial", "howto", "faq", "using"]
SPHINX_LIBRARY = [
    "filesys", "pathlib", "os.path", "fileinput", "stat", "filecmp", "tempfile",
    "glob", "fnmatch", "linecache", "shutil", "subprocess",
]
RUST_DIRS = ["std/fs", "std/io", "std/env", "std/process", "std/path", "std/string"]
RUST_EXTRA = ["std/collections/index.html", "std/vec/index.html"]

SOURCE = ("Verbatim .html pages from Debian 12 packages python3.11-doc 3.11.2-6+deb12u9 "
          "(Sphinx: Python tutorial, HOWTOs, FAQ, 'Python Setup and Usage', library "
          "'File and Directory Access' chapter + subprocess) under sphinx/, and rust-doc "
          "1.63.0+dfsg1-2 (rustdoc: std::fs, std::io, std::env, std::process, std::path, "
          "std::string pages + std::collections and std::vec module index pages) under "
          "rustdoc/; site-relative paths preserved; redirect stubs skipped; built by build.py")


def is_redirect(path):
    with open(path, "rb") as f:
        head = f.read(600)
    return b"<title>Redirection</title>" in head


def select(root):
    """Return sorted list of (corpus_relpath, source_abspath)."""
    out = []
    py = os.path.join(root, PY_HTML)
    rs = os.path.join(root, RUST_HTML)
    for need in (py, rs):
        if not os.path.isdir(need):
            sys.exit(f"missing {need}: install/unpack python3.11-doc and rust-doc (see docstring)")
    for d in SPHINX_DIRS:
        for name in sorted(os.listdir(os.path.join(py, d))):
            if name.endswith(".html"):
                out.append((f"sphinx/{d}/{name}", os.path.join(py, d, name)))
    for m in SPHINX_LIBRARY:
        out.append((f"sphinx/library/{m}.html", os.path.join(py, "library", m + ".html")))
    for d in RUST_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(rs, d)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".html"):
                    continue
                src = os.path.join(dirpath, name)
                if is_redirect(src):
                    continue
                rel = os.path.relpath(src, rs).replace(os.sep, "/")
                out.append((f"rustdoc/{rel}", src))
    for rel in RUST_EXTRA:
        out.append((f"rustdoc/{rel}", os.path.join(rs, rel)))
    out.sort()
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--root", default="/", help="filesystem root holding usr/share/doc/... (default /)")
    ap.add_argument("--debs", help="directory holding python3.11-doc_*.deb and rust-doc_*.deb to unpack")
    ap.add_argument("--check", action="store_true", help="compare written files with manifest.json")
    ap.add_argument("--write-manifest", action="store_true", help="rewrite manifest.json")
    a = ap.parse_args()

    tmp = None
    if a.debs:
        tmp = tempfile.mkdtemp(prefix="html-sphinx-rustdoc-debs-")
        for pat in ("python3.11-doc_*.deb", "rust-doc_*.deb"):
            found = sorted(glob.glob(os.path.join(a.debs, pat)))
            if len(found) != 1:
                sys.exit(f"expected exactly one {pat} in {a.debs}, found {found}")
            print(f"unpacking {found[0]}")
            subprocess.run(["dpkg-deb", "-x", found[0], tmp], check=True)
        a.root = tmp
    try:
        files = select(a.root)
        write(a, files)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def write(a, files):
    written = {}
    total = 0
    for rel, src in files:
        dst = os.path.join(a.outdir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
        written[rel] = sha256(dst)
        total += os.path.getsize(dst)
    print(f"wrote {len(written)} files, {total} bytes to {a.outdir}")

    if a.write_manifest:
        with open(MANIFEST, "w", encoding="utf-8") as f:
            json.dump({"source": SOURCE, "files": written}, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {MANIFEST}")

    if a.check:
        with open(MANIFEST, encoding="utf-8") as f:
            man = json.load(f)["files"]
        bad = 0
        for rel, h in sorted(man.items()):
            if rel not in written:
                print(f"MISSING {rel}")
                bad += 1
            elif written[rel] != h:
                print(f"DIFFERS {rel}")
                bad += 1
        for rel in sorted(set(written) - set(man)):
            print(f"EXTRA {rel}")
            bad += 1
        if bad:
            print(f"check FAILED: {bad} problem(s)")
            sys.exit(1)
        print(f"check OK: {len(man)} files match manifest.json")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Rebuild the html-texinfo corpus: the flex manual as GNU Texinfo's split HTML.

The corpus is a verbatim copy of the one-page-per-node HTML manual that
`makeinfo --html` (GNU Texinfo 6.8) wrote for "Lexical Analysis With Flex,
for Flex 2.6.4", as shipped by one Debian 12 (bookworm, main) package:

    flex-doc 2.6.4-8.2 (all)       /usr/share/doc/flex-doc/html/*.html
    license: the flex (BSD-style) license, see the package's copyright file
    sha256 flex-doc_2.6.4-8.2_all.deb
           abd9911c21991db1af5afe88313fc13df2018cb8d60b69b8cca20f1f42d04970

Every .html page is copied byte for byte to OUTDIR/flex/<same name>, except
the 49 pages that are only a node-redirection stub (makeinfo writes one per
@anchor, e.g. option_002d7bit.html, whose whole body is "The node you are
looking for is at ..." with <meta http-equiv="Refresh">). Nothing else is
copied (the package has no CSS/JS/images; flex.pdf.gz is not used). The
index pages (Concept-Index.html, Index-of-*.html) and the odd FAQ nodes such
as deleteme00.html and ERASEME53.html are kept: they are part of the manual.

Getting the package (not installed; build.py unpacks it with dpkg-deb):

    apt-get -o DPkg::Lock::Timeout=600 update
    mkdir -p /tmp/debs && cd /tmp/debs && \
        apt-get -o DPkg::Lock::Timeout=600 download flex-doc=2.6.4-8.2
    python3 build.py OUTDIR --deb /tmp/debs/flex-doc_2.6.4-8.2_all.deb --check

Without --deb, build.py runs that `apt-get download` itself in a temporary
directory (apt-get update must have been run once). The .deb's sha256 is
checked either way.

Usage:
  python3 build.py OUTDIR                   build the corpus into OUTDIR
  python3 build.py OUTDIR --check           build, then compare with manifest.json
  python3 build.py OUTDIR --write-manifest  build and (re)write manifest.json
Standard library only (plus dpkg-deb, and apt-get when --deb is not given).
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")

PACKAGE = "flex-doc"
VERSION = "2.6.4-8.2"
DEB_NAME = "flex-doc_2.6.4-8.2_all.deb"
DEB_SHA256 = "abd9911c21991db1af5afe88313fc13df2018cb8d60b69b8cca20f1f42d04970"
HTML_DIR = "usr/share/doc/flex-doc/html"
PREFIX = "flex"

SOURCE = ("GNU Texinfo 6.8 split HTML (one page per node) of the flex manual, "
          "'Lexical Analysis With Flex, for Flex 2.6.4', copied byte for byte from "
          "the Debian 12 package flex-doc 2.6.4-8.2 (/usr/share/doc/flex-doc/html) "
          "into flex/, without the node-redirection stub pages; built by build.py")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def is_redirect_stub(path):
    with open(path, "rb") as f:
        head = f.read(4096).lower()
    return b'http-equiv="refresh"' in head


def get_deb(deb, tmp):
    if not deb:
        dl = os.path.join(tmp, "dl")
        os.makedirs(dl)
        subprocess.run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "download",
                        f"{PACKAGE}={VERSION}"], cwd=dl, check=True)
        deb = os.path.join(dl, DEB_NAME)
    if not os.path.isfile(deb):
        sys.exit(f"missing {deb}")
    got = sha256_file(deb)
    if got != DEB_SHA256:
        sys.exit(f"{deb}: sha256 {got} differs from {DEB_SHA256}")
    return deb


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--deb", help=f"{DEB_NAME} (default: apt-get download it)")
    ap.add_argument("--check", action="store_true",
                    help="compare written files with manifest.json")
    ap.add_argument("--write-manifest", action="store_true",
                    help="rewrite manifest.json (maintainer use)")
    a = ap.parse_args()

    outdir = os.path.abspath(a.outdir)
    shutil.rmtree(os.path.join(outdir, PREFIX), ignore_errors=True)
    os.makedirs(os.path.join(outdir, PREFIX), exist_ok=True)
    written = {}
    skipped = 0
    with tempfile.TemporaryDirectory(prefix="html-texinfo-") as tmp:
        deb = get_deb(a.deb and os.path.abspath(a.deb), tmp)
        root = os.path.join(tmp, "root")
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        html = os.path.join(root, HTML_DIR)
        if not os.path.isdir(html):
            sys.exit(f"{deb} has no {HTML_DIR}")
        for name in sorted(os.listdir(html)):
            src = os.path.join(html, name)
            if not name.endswith(".html") or not os.path.isfile(src):
                continue
            if is_redirect_stub(src):
                skipped += 1
                continue
            rel = f"{PREFIX}/{name}"
            dst = os.path.join(outdir, rel)
            shutil.copyfile(src, dst)
            written[rel] = sha256_file(dst)
    total = sum(os.path.getsize(os.path.join(outdir, r)) for r in written)
    print(f"wrote {len(written)} files, {total} bytes into {outdir} "
          f"({skipped} redirect stubs skipped)")

    if a.write_manifest:
        with open(MANIFEST, "w", encoding="utf-8") as f:
            json.dump({"source": SOURCE, "files": written}, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {MANIFEST}")
    if a.check:
        with open(MANIFEST, encoding="utf-8") as f:
            want = json.load(f)["files"]
        bad = 0
        for rel in sorted(set(want) | set(written)):
            if rel not in written:
                print(f"MISSING {rel}"); bad += 1
            elif rel not in want:
                print(f"EXTRA   {rel}"); bad += 1
            elif want[rel] != written[rel]:
                print(f"DIFFERS {rel}"); bad += 1
        if bad:
            sys.exit(f"check failed: {bad} of {len(want)} files")
        print(f"check ok: {len(want)} files match manifest.json")


if __name__ == "__main__":
    main()

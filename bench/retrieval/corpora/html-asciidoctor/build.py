#!/usr/bin/env python3
"""Rebuild the html-asciidoctor corpus: WeeChat's English docs as Asciidoctor HTML.

The corpus is a verbatim copy of the seven English single-page HTML documents
that Asciidoctor 2.0.18 wrote for WeeChat 3.8 (user's guide, FAQ, quick start,
scripting guide, plugin API reference, relay protocol, developer's guide), as
shipped by one Debian 12 (bookworm, main) package:

    weechat-doc 3.8-1 (all)        /usr/share/doc/weechat-doc/html/*.en.html
    license: GPL-3+ (see the package's copyright file)
    sha256 weechat-doc_3.8-1_all.deb
           c818a3ee6efc02b58b7a5e30dc262d22f0c3ee20d19e37f1a5acb85a955f768e

Every page whose name ends in ".en.html" is copied byte for byte to
OUTDIR/weechat/<same name>. The translations (.cs .de .es .fr .it .ja .pl
.ru .sr) are left out; the package has no other HTML, CSS, JS or images
(Asciidoctor inlined its stylesheet into every page; the admonition <img>
tags point at ./images/icons/*.text files that the package does not ship).

Getting the package (not installed; build.py unpacks it with dpkg-deb):

    apt-get -o DPkg::Lock::Timeout=600 update
    mkdir -p /tmp/debs && cd /tmp/debs && \
        apt-get -o DPkg::Lock::Timeout=600 download weechat-doc=3.8-1
    python3 build.py OUTDIR --deb /tmp/debs/weechat-doc_3.8-1_all.deb --check

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

PACKAGE = "weechat-doc"
VERSION = "3.8-1"
DEB_NAME = "weechat-doc_3.8-1_all.deb"
DEB_SHA256 = "c818a3ee6efc02b58b7a5e30dc262d22f0c3ee20d19e37f1a5acb85a955f768e"
HTML_DIR = "usr/share/doc/weechat-doc/html"
SUFFIX = ".en.html"
PREFIX = "weechat"

SOURCE = ("Asciidoctor 2.0.18 HTML of WeeChat 3.8's English documentation (user's guide, "
          "FAQ, quick start, scripting guide, plugin API reference, relay protocol, "
          "developer's guide), copied byte for byte from the Debian 12 package "
          "weechat-doc 3.8-1 (/usr/share/doc/weechat-doc/html/*.en.html) into weechat/; "
          "built by build.py")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


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
    skipped = 0  # pages in other languages
    with tempfile.TemporaryDirectory(prefix="html-asciidoctor-") as tmp:
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
            if not name.endswith(SUFFIX):
                skipped += 1
                continue
            rel = f"{PREFIX}/{name}"
            dst = os.path.join(outdir, rel)
            shutil.copyfile(src, dst)
            written[rel] = sha256_file(dst)
    total = sum(os.path.getsize(os.path.join(outdir, r)) for r in written)
    print(f"wrote {len(written)} files, {total} bytes into {outdir} "
          f"({skipped} non-English pages skipped)")

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

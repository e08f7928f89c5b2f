#!/usr/bin/env python3
"""Rebuild the html-mdbook-mkdocs corpus: static HTML documentation pages
exactly as two site generators wrote them.

Layout written into OUTDIR (only .html pages; no CSS/JS/fonts, no search
indexes, no 404 pages, no mdBook print.html, no mdBook redirect stubs):

  mdbook/rustc/...                 The rustc book           (mdBook)
  mdbook/edition-guide/...         The Rust Edition Guide   (mdBook)
  mkdocs/pymdown-extensions/...    PyMdown Extensions docs  (MkDocs + Material)

Part (a), mdBook: copied byte for byte from the Debian package
    rust-doc 1.63.0+dfsg1-2 (Debian 12 "bookworm", main; MIT or Apache-2.0)
    files under /usr/share/doc/rust-doc/html/{rustc,edition-guide}/.
  Install:  apt-get -o DPkg::Lock::Timeout=600 update
            apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends rust-doc
  Skipped: print.html (whole book on one page) and pages that are only a
  <meta http-equiv="refresh"> redirect stub (86 in the edition guide).

Part (b), MkDocs: built here with `mkdocs build` from the sdist
    pymdown_extensions-10.16.1.tar.gz (PyPI; MIT;
    sha256 aace82bcccba3efc03e25d584e6a22d27a8e17caa3f4dd9f207e49b787aa9a91),
  which contains mkdocs.yml, docs/src/markdown/**.md, docs/theme/ and tools/.
  Tools (a venv of their own; these exact versions are checked at run time):
    python3 -m venv VENV
    VENV/bin/pip install \
        mkdocs==1.6.1 mkdocs-material==9.6.16 pymdown-extensions==10.16.1 \
        Markdown==3.8.2 Pygments==2.19.2
  which resolved (python 3.11.7) to: babel==2.19.0 backrefs==5.9 click==8.5.1
  colorama==0.4.6 ghp-import==2.1.0 Jinja2==3.1.6 MarkupSafe==3.0.4
  mergedeep==1.3.4 mkdocs-get-deps==0.2.2 mkdocs-material-extensions==1.3.1
  packaging==26.4 paginate==0.5.7 pathspec==1.1.1 platformdirs==4.14.9
  python-dateutil==4.0.0 PyYAML==6.0.4 pyyaml_env_tag==1.1 requests==2.34.2
  watchdog==7.1.1 (none of these affects the page text).
  The build runs from the unpacked sdist root, so the `pymdownx` package and
  `tools.pymdownx_md_render` used to render the pages are the sdist's own.
  Changes to a copy of mkdocs.yml (nothing else is changed):
    * plugins `git-revision-date-localized` and `minify` dropped (not needed,
      and the first would stamp the build date into every page);
    * markdown extension `tools.collapse_code` dropped (its module is not in
      the sdist);
    * pymdownx.snippets `check_paths: true` -> `false` (SECURITY.md, which
      about/security.md includes, is not in the sdist; that page therefore
      lacks the included text).
  Not installed either: pymdown_lexers (a git-only package; code blocks in
  those few lexers fall back to plain text).
  Skipped from the output: 404.html, search/, sitemap.xml*, assets/, images/.

Usage:
  python3 build.py OUTDIR                 build the corpus into OUTDIR
  python3 build.py OUTDIR --check         build, then compare with manifest.json
  python3 build.py OUTDIR --write-manifest  build and (re)write manifest.json
Options:
  --python PY     python of the venv with mkdocs (default: $MKDOCS_PYTHON or
                  python3 on PATH)
  --sdist FILE    pymdown_extensions-10.16.1.tar.gz (default: downloaded with
                  `PY -m pip download --no-deps --no-binary :all:`)
  --rust-doc DIR  default /usr/share/doc/rust-doc/html
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")

RUST_DOC_VERSION = "1.63.0+dfsg1-2"
MDBOOKS = ["rustc", "edition-guide"]

SDIST_NAME = "pymdown_extensions-10.16.1.tar.gz"
SDIST_SHA256 = "aace82bcccba3efc03e25d584e6a22d27a8e17caa3f4dd9f207e49b787aa9a91"
SDIST_ROOT = "pymdown_extensions-10.16.1"
PINNED = {
    "mkdocs": "1.6.1",
    "mkdocs-material": "9.6.16",
    "pymdown-extensions": "10.16.1",
    "Markdown": "3.8.2",
    "Pygments": "2.19.2",
}

YML_EDITS = [
    ("  - git-revision-date-localized:\n      fallback_to_build_date: true\n"
     "  - minify:\n      minify_html: true\n", ""),
    ("  - tools.collapse_code:\n      expand_text: ''\n      collapse_text: ''\n", ""),
    ("      check_paths: true\n", "      check_paths: false\n"),
]

SOURCE = (
    "HTML documentation sites as their generators wrote them. "
    "mdbook/: The rustc book and The Rust Edition Guide (mdBook) from Debian "
    "rust-doc " + RUST_DOC_VERSION + " (/usr/share/doc/rust-doc/html), copied "
    "byte for byte, without print.html and redirect stubs. "
    "mkdocs/pymdown-extensions/: PyMdown Extensions documentation built with "
    "mkdocs 1.6.1 + mkdocs-material 9.6.16 from the PyPI sdist " + SDIST_NAME +
    " (git-revision-date-localized and minify plugins and tools.collapse_code "
    "dropped, snippets check_paths off), without 404.html. Only .html pages."
)


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


def copy_mdbooks(rust_doc, outdir, files):
    try:
        ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "rust-doc"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        ver = ""
    if ver != RUST_DOC_VERSION:
        print(f"warning: rust-doc version is {ver!r}, expected {RUST_DOC_VERSION}",
              file=sys.stderr)
    for book in MDBOOKS:
        root = os.path.join(rust_doc, book)
        if not os.path.isdir(root):
            sys.exit(f"missing {root}: install the Debian package rust-doc")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".html"):
                    continue
                src = os.path.join(dirpath, name)
                rel_in_book = os.path.relpath(src, root).replace(os.sep, "/")
                if rel_in_book in ("print.html", "404.html") or is_redirect_stub(src):
                    continue
                rel = f"mdbook/{book}/{rel_in_book}"
                dst = os.path.join(outdir, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)
                files.append(rel)


def check_versions(python):
    code = ("import importlib.metadata as m, json, sys; "
            "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))")
    out = subprocess.run([python, "-c", code, *PINNED], capture_output=True,
                         text=True, check=True).stdout
    got = json.loads(out)
    bad = {n: (got.get(n), v) for n, v in PINNED.items() if got.get(n) != v}
    if bad:
        sys.exit(f"wrong tool versions in {python}: {bad} (installed, wanted)")


def build_mkdocs(python, sdist, outdir, files, tmp):
    check_versions(python)
    if not sdist:
        dl = os.path.join(tmp, "dl")
        subprocess.run([python, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", "-d", dl,
                        "pymdown-extensions==10.16.1"], check=True)
        sdist = os.path.join(dl, SDIST_NAME)
    if sha256_file(sdist) != SDIST_SHA256:
        sys.exit(f"{sdist}: sha256 differs from {SDIST_SHA256}")
    src = os.path.join(tmp, "src")
    with tarfile.open(sdist) as tf:
        tf.extractall(src)
    root = os.path.join(src, SDIST_ROOT)
    yml_path = os.path.join(root, "mkdocs.yml")
    with open(yml_path, encoding="utf-8") as f:
        yml = f.read()
    for old, new in YML_EDITS:
        if yml.count(old) != 1:
            sys.exit(f"mkdocs.yml edit not applicable: {old!r}")
        yml = yml.replace(old, new)
    with open(yml_path, "w", encoding="utf-8") as f:
        f.write(yml)
    site = os.path.join(tmp, "site")
    env = dict(os.environ, SOURCE_DATE_EPOCH="1752000000", PYTHONHASHSEED="0")
    subprocess.run([python, "-m", "mkdocs", "build", "-q", "-d", site],
                   cwd=root, env=env, check=True)
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".html"):
                continue
            p = os.path.join(dirpath, name)
            rel_in_site = os.path.relpath(p, site).replace(os.sep, "/")
            if rel_in_site == "404.html" or rel_in_site.startswith(("search/", "assets/")):
                continue
            rel = f"mkdocs/pymdown-extensions/{rel_in_site}"
            dst = os.path.join(outdir, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(p, dst)
            files.append(rel)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--write-manifest", action="store_true")
    ap.add_argument("--python", default=os.environ.get(
        "MKDOCS_PYTHON", "python3"))
    ap.add_argument("--sdist")
    ap.add_argument("--rust-doc", default="/usr/share/doc/rust-doc/html")
    a = ap.parse_args()

    outdir = os.path.abspath(a.outdir)
    for sub in ("mdbook", "mkdocs"):
        shutil.rmtree(os.path.join(outdir, sub), ignore_errors=True)
    os.makedirs(outdir, exist_ok=True)
    files = []
    copy_mdbooks(a.rust_doc, outdir, files)
    with tempfile.TemporaryDirectory(prefix="html-mdbook-mkdocs-") as tmp:
        build_mkdocs(a.python, a.sdist and os.path.abspath(a.sdist), outdir, files, tmp)

    digests = {rel: sha256_file(os.path.join(outdir, rel)) for rel in sorted(files)}
    total = sum(os.path.getsize(os.path.join(outdir, r)) for r in files)
    print(f"wrote {len(files)} files, {total} bytes into {outdir}")

    if a.write_manifest:
        with open(MANIFEST, "w", encoding="utf-8") as f:
            json.dump({"source": SOURCE, "files": digests}, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {MANIFEST}")
    if a.check:
        with open(MANIFEST, encoding="utf-8") as f:
            want = json.load(f)["files"]
        bad = 0
        for rel in sorted(set(want) | set(digests)):
            if rel not in digests:
                print(f"MISSING {rel}"); bad += 1
            elif rel not in want:
                print(f"EXTRA   {rel}"); bad += 1
            elif want[rel] != digests[rel]:
                print(f"DIFFERS {rel}"); bad += 1
        if bad:
            sys.exit(f"check failed: {bad} of {len(want)} files")
        print(f"check ok: {len(want)} files match manifest.json")


if __name__ == "__main__":
    main()

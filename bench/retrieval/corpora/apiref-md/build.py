#!/usr/bin/env python3
"""Rebuild the `apiref-md` corpus: Bun's documentation as shipped in the npm package
`bun-types` 1.4.5 (MIT, https://github.com/oven-sh/bun, directory packages/bun-types).

The package carries Bun's whole documentation site source under `docs/` (Mintlify MDX pages:
Markdown plus a few JSX-style tags such as <Note>, <CodeGroup>, <ParamField>). The corpus is
every `docs/**/*.md` and `docs/**/*.mdx` file EXCEPT `docs/lint/rules/**` (1,051 generated
lint-rule pages, not API reference), copied byte for byte. Only the extension changes:
`.mdx` is written as `.md` (so `docs/runtime/http/server.mdx` -> `runtime/http/server.md`),
because the corpus is indexed from a directory of `.md` files. Paths are relative to `docs/`.
Result: 347 files, 2,294,564 bytes.

Tools: python3 (standard library) and `npm` (any recent npm client) to fetch the tarball:

    npm pack bun-types@1.4.5            # -> bun-types-1.4.5.tgz, sha1 61ea56d313ebfa4a399334c6ddc34cd79dc54488

Usage:

    python3 build.py OUTDIR                       # runs `npm pack bun-types@1.4.5` in a temp dir
    python3 build.py OUTDIR --tarball bun-types-1.4.5.tgz   # use an already downloaded tarball
    python3 build.py OUTDIR --check               # also compare every file with manifest.json
    python3 build.py OUTDIR --write-manifest      # (maintainer) rewrite manifest.json

Files are written (overwritten) into OUTDIR; nothing else there is removed, so use a fresh or
empty directory. Exit status is non-zero when the tarball's sha1 differs or --check fails.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "bun-types"
VERSION = "1.4.5"
TARBALL_SHA1 = "61ea56d313ebfa4a399334c6ddc34cd79dc54488"
HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")
PREFIX = "package/docs/"
EXCLUDE_PREFIX = "lint/rules/"


def fetch_tarball(tmpdir):
    subprocess.run(["npm", "pack", f"{PACKAGE}@{VERSION}", "--silent"], cwd=tmpdir, check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(tmpdir, f"{PACKAGE}-{VERSION}.tgz")


def sha1_file(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def select(tarball):
    """Yield (relative output path, bytes) in sorted order."""
    out = {}
    with tarfile.open(tarball, "r:gz") as tf:
        for m in tf.getmembers():
            if not m.isfile() or not m.name.startswith(PREFIX):
                continue
            rel = m.name[len(PREFIX):]
            if rel.startswith(EXCLUDE_PREFIX):
                continue
            if rel.endswith(".mdx"):
                rel = rel[:-4] + ".md"
            elif not rel.endswith(".md"):
                continue
            if rel in out:
                raise SystemExit(f"name clash after renaming: {rel}")
            out[rel] = tf.extractfile(m).read()
    for rel in sorted(out):
        yield rel, out[rel]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--tarball", help="path to bun-types-1.4.5.tgz (default: npm pack it)")
    ap.add_argument("--check", action="store_true", help="compare with manifest.json")
    ap.add_argument("--write-manifest", action="store_true")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tarball = args.tarball or fetch_tarball(tmp)
        got = sha1_file(tarball)
        if got != TARBALL_SHA1:
            print(f"tarball sha1 {got} != expected {TARBALL_SHA1}", file=sys.stderr)
            return 1
        files = {}
        total = 0
        for rel, data in select(tarball):
            dest = os.path.join(args.outdir, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(data)
            files[rel] = hashlib.sha256(data).hexdigest()
            total += len(data)
    print(f"wrote {len(files)} files, {total} bytes to {args.outdir}")

    if args.write_manifest:
        manifest = {
            "source": (f"npm package {PACKAGE}@{VERSION} (MIT; tarball sha1 {TARBALL_SHA1}): "
                       "package/docs/**/*.md(x) except docs/lint/rules/**, copied byte for byte, "
                       ".mdx renamed to .md, paths relative to docs/; built by build.py"),
            "package": PACKAGE, "version": VERSION, "license": "MIT",
            "file_count": len(files), "total_bytes": total,
            "files": files,
        }
        with open(MANIFEST, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, sort_keys=False)
            f.write("\n")
        print(f"wrote {MANIFEST}")

    if args.check:
        with open(MANIFEST, encoding="utf-8") as f:
            want = json.load(f)["files"]
        bad = 0
        for rel in sorted(set(want) | set(files)):
            if want.get(rel) != files.get(rel):
                bad += 1
                print(f"MISMATCH {rel}: manifest {want.get(rel)} built {files.get(rel)}")
        if bad:
            print(f"check failed: {bad} differences", file=sys.stderr)
            return 1
        print(f"check ok: {len(files)} files match manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

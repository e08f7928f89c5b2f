#!/usr/bin/env python3
"""Build the chat-logs corpus into OUTDIR.

Usage:
    python3 build.py OUTDIR            copy corpus/ to OUTDIR
    python3 build.py OUTDIR --check    copy, then compare every file with manifest.json
    python3 build.py --write-manifest  (maintainers) recompute manifest.json from corpus/

Standard library only; no packages need to be installed.

The corpus is committed in this folder under corpus/ (about 1.6 MB), as the
task allows for this corpus, because its two parts cannot be regenerated
byte for byte:

* corpus/chats/ - 30 long assistant/user chat sessions written for this set
  (markdown, plain text and JSON Lines).  Two of them (s29, s30) embed real
  tool output captured on the authoring machine.
* corpus/logs/  - real build/test/install logs captured by running the
  commands in capture.sh (pip, pytest, make, cmake/ninja, cargo, go, npm,
  apt-get -s) on Debian 12 with Python 3.11.7.  They contain timings, temp
  paths and download sizes that differ on every run; capture.sh shows how
  to produce equivalent (not identical) logs.

So "building" is a verified copy: build.py copies corpus/ to OUTDIR and,
with --check, verifies the sha256 of every file against manifest.json and
that OUTDIR holds no file missing from the manifest.
"""
import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "corpus"
MANIFEST = HERE / "manifest.json"
SOURCE_NOTE = (
    "chats/: 30 chat sessions written for this evaluation set (s29 and s30 embed real "
    "command output); logs/: real logs captured with capture.sh on Debian 12 / Python 3.11.7 "
    "(pip, pytest, make, cmake+ninja, cargo, go, npm, apt-get -s). Committed under corpus/; "
    "build.py copies it."
)


def sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def files_under(root: Path):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def write_manifest() -> None:
    files = {rel: sha256(SRC / rel) for rel in files_under(SRC)}
    MANIFEST.write_text(json.dumps({"source": SOURCE_NOTE, "files": files}, indent=1, sort_keys=False) + "\n")
    print(f"wrote {MANIFEST} with {len(files)} files")


def build(outdir: Path) -> int:
    n = 0
    for rel in files_under(SRC):
        dst = outdir / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SRC / rel, dst)
        n += 1
    return n


def check(outdir: Path) -> int:
    man = json.loads(MANIFEST.read_text())["files"]
    bad = 0
    for rel, digest in man.items():
        p = outdir / rel
        if not p.is_file():
            print(f"MISSING {rel}")
            bad += 1
        elif sha256(p) != digest:
            print(f"DIFFERS {rel}")
            bad += 1
    extra = set(files_under(outdir)) - set(man)
    for rel in sorted(extra):
        print(f"EXTRA   {rel}")
        bad += 1
    print(f"checked {len(man)} files: {'OK' if not bad else str(bad) + ' problem(s)'}")
    return 1 if bad else 0


def main(argv) -> int:
    if argv[1:] == ["--write-manifest"]:
        write_manifest()
        return 0
    args = [a for a in argv[1:] if not a.startswith("--")]
    flags = [a for a in argv[1:] if a.startswith("--")]
    if len(args) != 1 or any(f != "--check" for f in flags):
        print(__doc__)
        return 2
    outdir = Path(args[0])
    outdir.mkdir(parents=True, exist_ok=True)
    n = build(outdir)
    total = sum((outdir / rel).stat().st_size for rel in files_under(SRC))
    print(f"copied {n} files ({total} bytes) to {outdir}")
    if "--check" in flags:
        return check(outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Build the `manual-text` corpus: Debian man pages rendered to plain text.

Usage:
    python3 build.py OUTDIR            # render every selected page into OUTDIR
    python3 build.py OUTDIR --check    # ... and compare each file with manifest.json
    python3 build.py OUTDIR --write-manifest   # (maintainers) rewrite manifest.json

Standard library only.  External tools (all from Debian 12 "bookworm"):

    man   (man-db 2.11.2-2)            renders a page file:  man --nh --nj -l FILE
    groff (groff-base 1.22.4-10)       used by man (nroff -Tutf8, tbl)
    col   (bsdextrautils 2.38.1-5+deb12u3)   col -bx strips overstrike / tabs
    dpkg-query, dpkg -L                list the pages a package ships

Source packages, exact versions the manifest was made with (Debian 12
bookworm + bookworm-security/updates as of 2025-12; PACKAGES below also says
which pages of each are kept):

    coreutils 9.1-1, findutils 4.9.0-4, grep 3.8-5, sed 4.9-1,
    tar 1.34+dfsg-1.2+deb12u1, gzip 1.12-1, xz-utils 5.4.1-1,
    bzip2 1.0.8-5+b1, zstd 1.5.4+dfsg2-5, rsync 3.5.0+ds1-0+deb12u1,
    openssh-client 1:9.2p1-2+deb12u10, curl 7.88.1-10+deb12u14,
    wget 1.21.3-1+deb12u1, procps 2:4.0.2-3, util-linux 2.38.1-5+deb12u3,
    mount 2.38.1-5+deb12u3, apt 2.6.1, dpkg 1.21.22, less 590-2.1~deb12u2,
    make 4.3-4.1, bash 5.2.15-2+b8, sqlite3 3.40.1-2+deb12u2,
    jq 1.6-2.1+deb12u1, diffutils 1:3.8-4, patch 2.7.6-7, file 1:5.44-3,
    psmisc 23.6-1, strace 6.1-0.1, tmux 3.3a-3, iproute2 6.1.0-3,
    systemd 252.38-1~deb12u1

Install:

    apt-get -o DPkg::Lock::Timeout=600 update
    apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends \
        man-db groff-base bsdextrautils \
        coreutils findutils grep sed tar gzip xz-utils bzip2 zstd rsync \
        openssh-client curl wget iproute2 procps util-linux systemd apt dpkg \
        less make bash sqlite3 jq diffutils patch file psmisc strace tmux mount

The pages must actually be on disk: Debian Docker images often carry
/etc/dpkg/dpkg.cfg.d/docker with `path-exclude /usr/share/man/*`; remove that
line and reinstall the packages (apt-get install --reinstall ...) if pages are
missing.  build.py stops with an error when a selected page file is absent.

Rendering (deterministic): for every non-symlink page under
/usr/share/man/man<N>/ (English pages only; localised trees are skipped) that
is not a bare `.so` alias, run

    LC_ALL=C.UTF-8 MANWIDTH=80 man --nh --nj -l FILE | col -bx

(--nh: no hyphenation, --nj: no justification, so words are never split or
padded), strip trailing blanks on every line, drop leading/trailing empty lines,
squeeze runs of empty lines to one, and write `<N>/<name>.<ext>.txt`, e.g.
`1/rsync.1.txt`, `8/ip-route.8.txt`, `5/systemd.service.5.txt`.
"""

import hashlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")

TOOLS = {
    "man-db": "2.11.2-2",
    "groff-base": "1.22.4-10",
    "bsdextrautils": "2.38.1-5+deb12u3",
}

# package -> (version, selection[, exclude]).  selection None = every page the
# package ships; otherwise the set of page basenames (without .gz) to keep.
# exclude = page basenames to drop (copies of another page).
PACKAGES = {
    # dir.1 and vdir.1 are ls.1 with another name
    "coreutils": ("9.1-1", None, {"dir.1", "vdir.1"}),
    "findutils": ("4.9.0-4", None),
    "grep": ("3.8-5", None),
    "sed": ("4.9-1", None),
    "tar": ("1.34+dfsg-1.2+deb12u1", None),
    "gzip": ("1.12-1", None),
    "xz-utils": ("5.4.1-1", None),
    "bzip2": ("1.0.8-5+b1", None),
    # zstdcat.1, unzstd.1 and zstdmt.1 are byte-identical copies of zstd.1
    "zstd": ("1.5.4+dfsg2-5", None, {"zstdcat.1", "unzstd.1", "zstdmt.1"}),
    "rsync": ("3.5.0+ds1-0+deb12u1", None),
    "openssh-client": ("1:9.2p1-2+deb12u10", None),
    "curl": ("7.88.1-10+deb12u14", None),
    "wget": ("1.21.3-1+deb12u1", None),
    "procps": ("2:4.0.2-3", None),
    "util-linux": ("2.38.1-5+deb12u3", None),
    "mount": ("2.38.1-5+deb12u3", None),
    "apt": ("2.6.1", None),
    "dpkg": ("1.21.22", None),
    "less": ("590-2.1~deb12u2", None),
    "make": ("4.3-4.1", None),
    # bash-builtins.7 repeats the SHELL BUILTIN COMMANDS part of bash.1
    # word for word, so it is left out (one home per fact).
    "bash": ("5.2.15-2+b8", {"bash.1", "bashbug.1", "rbash.1", "clear_console.1"}),
    "sqlite3": ("3.40.1-2+deb12u2", None),
    "jq": ("1.6-2.1+deb12u1", None),
    "diffutils": ("1:3.8-4", None),
    "patch": ("2.7.6-7", None),
    "file": ("1:5.44-3", None),
    "psmisc": ("23.6-1", None),
    "strace": ("6.1-0.1", None),
    "tmux": ("3.3a-3", None),
    "iproute2": ("6.1.0-3", {
        "ip.8", "ip-address.8", "ip-route.8", "ip-link.8", "ip-rule.8",
        "ip-neighbour.8", "ip-netns.8", "ip-monitor.8", "ip-tunnel.8",
        "ss.8", "bridge.8", "tc.8", "tc-netem.8", "tc-tbf.8", "tc-htb.8",
    }),
    "systemd": ("252.38-1~deb12u1", {
        "systemctl.1", "journalctl.1", "hostnamectl.1", "timedatectl.1",
        "loginctl.1", "systemd-run.1", "systemd-escape.1", "systemd-cat.1",
        "systemd-delta.1", "systemd-notify.1",
        "systemd.unit.5", "systemd.service.5", "systemd.timer.5",
        "systemd.path.5", "systemd.target.5", "systemd.kill.5",
        "journald.conf.5", "logind.conf.5", "sysctl.d.5", "machine-id.5",
        "systemd.time.7",
    }),
}

PAGE_RE = re.compile(r"^/usr/share/man/man([0-9])/([^/]+)\.gz$")
SAFE_NAME = re.compile(r"^[A-Za-z0-9_.@+-]+$")


def env():
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("MAN", "GROFF", "LC_", "LANG"))}
    e.update({
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        "MANWIDTH": "80",
        "MANPAGER": "cat",
        "PAGER": "cat",
        "MANOPT": "",
        "TZ": "UTC",
        "SOURCE_DATE_EPOCH": "0",
    })
    return e


def installed_version(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", pkg],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    state = r.stdout.split("\t")[0].split()
    if len(state) < 3 or state[2] not in ("installed", "triggers-pending", "triggers-awaited"):
        return None
    return r.stdout.split("\t")[1]


def is_so_alias(path):
    import gzip
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = [ln.strip() for ln in f]
    lines = [ln for ln in lines if ln and not ln.startswith(('.\\"', "'\\\"", '\\"'))]
    return len(lines) == 1 and lines[0].startswith(".so ")


def package_pages(pkg, selection, exclude=frozenset()):
    r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True, check=True)
    pages = []
    for line in r.stdout.splitlines():
        m = PAGE_RE.match(line)
        if not m:
            continue
        if os.path.islink(line):
            continue
        base = m.group(2)
        if selection is not None and base not in selection:
            continue
        if base in exclude:
            continue
        if not os.path.exists(line):
            sys.exit(f"error: {line} ({pkg}) is listed by dpkg but not on disk "
                     "(man pages excluded by dpkg config?)")
        if is_so_alias(line):
            continue
        if not SAFE_NAME.match(base):
            continue
        pages.append((m.group(1), base, line))
    if selection is not None:
        missing = selection - {b for _, b, _ in pages}
        if missing:
            sys.exit(f"error: {pkg}: selected pages not found: {sorted(missing)}")
    return pages


def clean(text):
    lines = [ln.rstrip() for ln in text.split("\n")]
    out = []
    for ln in lines:
        if ln == "" and (not out or out[-1] == ""):
            continue
        out.append(ln)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def render(path):
    e = env()
    man = subprocess.run(["man", "--nh", "--nj", "-l", path], capture_output=True, env=e)
    if man.returncode != 0 or not man.stdout.strip():
        sys.exit(f"error: man failed on {path}: {man.stderr.decode(errors='replace')}")
    col = subprocess.run(["col", "-bx"], input=man.stdout, capture_output=True, env=e,
                         check=True)
    return clean(col.stdout.decode("utf-8"))


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    outdir = args[0]
    check = "--check" in args
    write_manifest = "--write-manifest" in args

    mismatch = []
    for pkg, want in list(TOOLS.items()) + [(p, e[0]) for p, e in PACKAGES.items()]:
        have = installed_version(pkg)
        if have is None:
            sys.exit(f"error: package {pkg} is not installed (want {want})")
        if have != want:
            mismatch.append(f"{pkg}: installed {have}, manifest made with {want}")
    for m in mismatch:
        print("warning: version differs:", m, file=sys.stderr)

    files = {}
    owner = {}
    for pkg, entry in PACKAGES.items():
        for sec, base, path in package_pages(pkg, *entry[1:]):
            rel = f"{sec}/{base}.txt"
            if rel in owner:
                sys.exit(f"error: {rel} from both {owner[rel]} and {pkg}")
            owner[rel] = pkg
            files[rel] = render(path)

    seen = {}
    for rel, text in sorted(files.items()):
        if text in seen:
            sys.exit(f"error: {rel} renders byte-identical to {seen[text]}; exclude one")
        seen[text] = rel

    for rel, text in sorted(files.items()):
        dest = os.path.join(outdir, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    stale = []
    for dirpath, _, names in os.walk(outdir):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), outdir).replace(os.sep, "/")
            if rel not in files:
                stale.append(rel)
    for rel in sorted(stale):
        print(f"warning: {rel} in {outdir} is not part of the corpus", file=sys.stderr)
    total = sum(len(t.encode("utf-8")) for t in files.values())
    print(f"wrote {len(files)} files, {total} bytes to {outdir}")

    hashes = {rel: hashlib.sha256(t.encode("utf-8")).hexdigest()
              for rel, t in sorted(files.items())}
    if write_manifest:
        man = {
            "source": ("Debian 12 (bookworm) man pages from the packages and versions "
                       "listed in build.py, rendered with `LC_ALL=C.UTF-8 MANWIDTH=80 "
                       "man --nh --nj -l FILE | col -bx` (man-db 2.11.2-2, groff-base "
                       "1.22.4-10, bsdextrautils 2.38.1-5+deb12u3), trailing blanks stripped, "
                       "blank-line runs squeezed; packages: "
                       + ", ".join(f"{p} {e[0]}" for p, e in PACKAGES.items())),
            "files": hashes,
        }
        with open(MANIFEST, "w", encoding="utf-8") as f:
            json.dump(man, f, indent=1, sort_keys=False)
            f.write("\n")
        print(f"manifest written: {MANIFEST}")
    if check:
        with open(MANIFEST, encoding="utf-8") as f:
            want = json.load(f)["files"]
        bad = 0
        for rel in sorted(set(want) | set(hashes)):
            if want.get(rel) != hashes.get(rel):
                bad += 1
                state = ("missing" if rel not in hashes else
                         "extra" if rel not in want else "differs")
                print(f"MISMATCH {state}: {rel}", file=sys.stderr)
        bad += len(stale)
        if bad:
            sys.exit(f"check failed: {bad} file(s) differ from manifest.json")
        print(f"check ok: {len(want)} files match manifest.json")


if __name__ == "__main__":
    main()

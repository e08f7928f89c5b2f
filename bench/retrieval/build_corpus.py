"""Build the retrieval benchmark corpus from documentation that exists offline on this machine.

The corpus is a FIXED selection of real documents, copied verbatim into `bench/retrieval/corpus/`:
  * the long description (the README) in `*.dist-info/METADATA` of Python packages installed in
    the project's venv (`py-<name>.md` or `.rst`, after the package's Description-Content-Type);
  * README.md files of npm packages installed on the machine (npm's bundled dependencies under
    /usr/lib/node_modules/npm/node_modules, and the venv-local `typescript`) plus one API page
    of undici (`npm-<name>.md`);
  * a few Node.js API reference pages from the installed `nodejs` deb (`node-api-<module>.md`).

The copies are committed, so the benchmark stays reproducible when installed versions change:
run this script only to regenerate the corpus (and then re-check `questions.jsonl` with
`python bench/retrieval/check_questions.py`). It writes `corpus/SOURCES.md` listing every file's
origin package, version, license, original path, size and sha256.

Nothing is stripped except obvious binary junk: NUL/control characters (other than tab and
newline) are dropped and CRLF/CR line ends become LF.

Usage (repo root, venv active):
    python bench/retrieval/build_corpus.py            # (re)write corpus/ from installed packages
    python bench/retrieval/build_corpus.py --check    # only report differences with corpus/
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as md
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
REPO = HERE.parent.parent
VENV_NPM = REPO / ".venv" / "share" / "context-kernel" / "npm" / "node_modules"
NPM_BUNDLED = Path("/usr/lib/node_modules/npm/node_modules")
NODE_API = Path("/usr/share/doc/nodejs/api")

# Python distributions whose METADATA long description is copied (name as in importlib.metadata).
PYTHON_PACKAGES = [
    "pydantic", "httpx", "httpcore", "h11", "sqlalchemy", "anyio", "jupyter_client", "nbclient",
    "hypothesis", "starlette", "uvicorn", "sse-starlette", "pytest", "pytest-timeout", "psutil",
    "wcwidth", "jedi", "ruff", "stack-data", "annotated-types", "sortedcontainers", "attrs",
    "traitlets", "python-dateutil", "prompt_toolkit", "jsonschema", "mcp", "platformdirs",
]  # fmt: skip

# npm packages: (stem, package directory, file inside it).
NPM_FILES = [
    ("npm-semver", NPM_BUNDLED / "semver", "README.md"),
    ("npm-npmcli-arborist", NPM_BUNDLED / "@npmcli" / "arborist", "README.md"),
    ("npm-pacote", NPM_BUNDLED / "pacote", "README.md"),
    ("npm-node-gyp", NPM_BUNDLED / "node-gyp", "README.md"),
    ("npm-nopt", NPM_BUNDLED / "nopt", "README.md"),
    ("npm-typescript", VENV_NPM / "typescript", "README.md"),
    ("npm-undici-client", NPM_BUNDLED / "undici", "docs/docs/api/Client.md"),
]

# Node.js API reference pages (the installed `nodejs` deb, NodeSource build; MIT).
NODE_API_PAGES = ["child_process", "readline", "worker_threads", "zlib", "events", "dns", "url", "stream"]

# Licenses that allow redistributing the documents verbatim (with attribution, listed in SOURCES.md).
ALLOWED_LICENSES = re.compile(r"\b(MIT|BSD|Apache|ISC|MPL|PSF)", re.IGNORECASE)

_JUNK = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class Doc:
    stem: str
    ext: str
    text: str
    package: str
    version: str
    license: str
    origin: str


def clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _JUNK.sub("", text)
    return text.strip("\n") + "\n"


def _python_license(meta: md.PackageMetadata) -> str:
    lic = (meta.get("License-Expression") or "").strip()
    if not lic:
        # The License field is sometimes the whole license text: keep its first line when short.
        first = (meta.get("License") or "").strip().splitlines()[:1]
        if first and len(first[0]) <= 40 and first[0].upper() != "UNKNOWN":
            lic = first[0].strip()
    if not lic:
        classifiers = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
        lic = classifiers[-1].split("::")[-1].strip() if classifiers else ""
    return lic


def _looks_like_rst(text: str) -> bool:
    underlined = re.search(r"^(={3,}|-{3,}|~{3,}|#{3,}|\*{3,})\s*$", text, re.MULTILINE)
    return bool(underlined) and not re.search(r"^#{1,3} \S", text, re.MULTILINE)


def python_doc(name: str) -> Doc:
    dist = md.distribution(name)
    meta = dist.metadata
    body = meta.get_payload() if hasattr(meta, "get_payload") else None  # type: ignore[attr-defined]
    text = body if body and body.strip() else (meta.get("Description") or "")
    if not text.strip():
        raise SystemExit(f"{name}: no long description in METADATA")
    ctype = (meta.get("Description-Content-Type") or "").lower()
    if "markdown" in ctype:
        ext = "md"
    elif "rst" in ctype:
        ext = "rst"
    else:
        ext = "rst" if _looks_like_rst(text) else "md"
    stem = "py-" + meta["Name"].lower().replace("_", "-")
    path = Path(str(dist.locate_file(""))) / f"{dist._path.name}/METADATA"  # type: ignore[attr-defined]
    return Doc(stem, ext, clean(text), meta["Name"], meta["Version"], _python_license(meta),
               f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path} (long description)")  # fmt: skip


def npm_doc(stem: str, pkg_dir: Path, rel: str) -> Doc:
    pkg = json.loads((pkg_dir / "package.json").read_text(encoding="utf-8"))
    lic = pkg.get("license") or ""
    if isinstance(lic, dict):
        lic = lic.get("type", "")
    path = pkg_dir / rel
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    text = path.read_text(encoding="utf-8", errors="replace")
    return Doc(stem, "md", clean(text), pkg["name"], pkg["version"], lic, str(shown))


def node_version() -> str:
    # The docs' own version: node's doc pages do not carry it; use the Debian changelog entry.
    import gzip

    changelog = Path("/usr/share/doc/nodejs/changelog.Debian.gz")
    if changelog.exists():
        with gzip.open(changelog, "rt", encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
        m = re.search(r"\(([^)]+)\)", first)
        if m:
            return m.group(1)
    import subprocess

    try:
        return subprocess.run(["node", "--version"], check=False, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def node_doc(module: str, version: str) -> Doc:
    path = NODE_API / f"{module}.md"
    text = path.read_text(encoding="utf-8", errors="replace")
    return Doc(f"node-api-{module.replace('_', '-')}", "md", clean(text),
               "nodejs (doc/api)", version, "MIT", str(path))  # fmt: skip


def collect() -> list[Doc]:
    docs = [python_doc(n) for n in PYTHON_PACKAGES]
    docs += [npm_doc(*entry) for entry in NPM_FILES]
    version = node_version()
    docs += [node_doc(m, version) for m in NODE_API_PAGES]
    for d in docs:
        if not ALLOWED_LICENSES.search(d.license):
            raise SystemExit(f"{d.stem}: license {d.license!r} not in the redistributable list")
    return docs


def sources_md(docs: list[Doc]) -> str:
    total = sum(len(d.text.encode()) for d in docs)
    lines = [
        "# Sources of the retrieval benchmark corpus",
        "",
        "Real documentation copied verbatim (only NUL/control characters dropped and line ends",
        "normalised to LF) by `bench/retrieval/build_corpus.py` from packages installed on the",
        "machine it ran on. Every document is under a license that allows redistributing it",
        "(MIT, BSD, Apache-2.0, ISC, MPL-2.0); copyright stays with its authors, see each package.",
        "",
        f"{len(docs)} files, {total:,} bytes in all.",
        "",
        "| file | bytes | package | version | license | copied from | sha256 (first 16) |",
        "|---|---:|---|---|---|---|---|",
    ]
    for d in docs:
        data = d.text.encode()
        lines.append(
            f"| `{d.stem}.{d.ext}` | {len(data):,} | {d.package} | {d.version} | {d.license} "
            f"| `{d.origin}` | `{hashlib.sha256(data).hexdigest()[:16]}` |"
        )
    lines += [
        "",
        "Python documents are the long description (README) in each distribution's",
        "`*.dist-info/METADATA`; the extension follows its `Description-Content-Type` (`.rst` for",
        "reStructuredText, sniffed when the field is missing). `hypothesis` is MPL-2.0: its README is",
        "redistributed unmodified, the source form is the file itself. The Node.js pages come from",
        "the installed `nodejs` deb (NodeSource build, `/usr/share/doc/nodejs/api`, MIT).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only compare installed docs with corpus/")
    args = ap.parse_args()
    docs = collect()
    if args.check:
        differ = 0
        for d in docs:
            target = CORPUS / f"{d.stem}.{d.ext}"
            current = target.read_text(encoding="utf-8") if target.exists() else None
            if current != d.text:
                differ += 1
                print(f"differs: {target.name} (installed {d.package} {d.version})")
        print(f"{len(docs) - differ}/{len(docs)} corpus files match the installed packages")
        return 0
    CORPUS.mkdir(parents=True, exist_ok=True)
    wanted = {f"{d.stem}.{d.ext}" for d in docs} | {"SOURCES.md"}
    for stale in CORPUS.iterdir():
        if stale.name not in wanted:
            print(f"removing stale {stale.name}", file=sys.stderr)
            stale.unlink()
    for d in docs:
        (CORPUS / f"{d.stem}.{d.ext}").write_text(d.text, encoding="utf-8")
    (CORPUS / "SOURCES.md").write_text(sources_md(docs), encoding="utf-8")
    total = sum(len(d.text.encode()) for d in docs)
    print(f"wrote {len(docs)} documents, {total:,} bytes, to {CORPUS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Check the search-evaluation data.

    python validate.py questions CORPUS_DIR
        every question is well-formed, the kinds are balanced, dev and test do
        not overlap, and each answer span occurs (after whitespace
        normalisation) in its corpus file.
    python validate.py needles [--split dev|test|both] [--write-manifest]
        generates the needle cases into a temporary directory and checks them:
        sizes, kinds, every needle line present exactly once in its file, the
        intent wordings of dev and test differ, and the files are byte-identical
        to the ones recorded in needles-manifest.json (sha256), so that a change
        of the generator cannot go unnoticed.

Exit status 0 when everything holds.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ["paraphrase", "identifier", "code", "typo", "multi-concept", "error-code"]


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def load(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def check_questions(corpus: Path) -> list[str]:
    errs = []
    splits = {s: load(HERE / f"questions-{s}.jsonl") for s in ("dev", "test")}
    ids = collections.Counter(q["id"] for qs in splits.values() for q in qs)
    errs += [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    texts = collections.Counter(norm(q["question"]).lower() for qs in splits.values() for q in qs)
    errs += [f"duplicate question {t!r}" for t, n in texts.items() if n > 1]
    cache: dict[str, str] = {}
    total = collections.Counter()
    for split, qs in splits.items():
        per = collections.Counter(q["kind"] for q in qs)
        print(f"{split}: {len(qs)} questions, " + ", ".join(f"{k} {per[k]}" for k in KINDS))
        for q in qs:
            if set(q) != {"id", "kind", "question", "answer", "file"}:
                errs.append(f"{q.get('id')}: fields {sorted(q)}")
                continue
            total[q["kind"]] += 1
            if q["kind"] not in KINDS:
                errs.append(f"{q['id']}: unknown kind {q['kind']}")
            if not 10 <= len(q["answer"]) <= 200:
                errs.append(f"{q['id']}: answer length {len(q['answer'])}")
            f = corpus / q["file"]
            if not f.is_file():
                errs.append(f"{q['id']}: no file {q['file']}")
                continue
            if q["file"] not in cache:
                cache[q["file"]] = norm(f.read_text(encoding="utf-8"))
            n = cache[q["file"]].count(norm(q["answer"]))
            if n == 0:
                errs.append(f"{q['id']}: answer not found in {q['file']}")
            elif n > 1:
                errs.append(f"{q['id']}: answer occurs {n} times in {q['file']}")
    for k in KINDS:
        if total[k] < 20:
            errs.append(f"kind {k}: only {total[k]} questions")
        d = sum(q["kind"] == k for q in splits["dev"])
        if not 0.3 <= d / max(total[k], 1) <= 0.5:
            errs.append(f"kind {k}: dev share {d}/{total[k]}")
    print(f"total: {sum(total.values())} questions")
    return errs


def check_needles(splits: list[str], write_manifest: bool = False) -> list[str]:
    errs = []
    intents = {}
    manifest_path = HERE / "needles-manifest.json"
    recorded = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    hashes: dict[str, str] = {}
    for split in splits:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, str(HERE / "needles.py"), "--out", tmp, "--split", split],
                           check=True)
            cases = load(Path(tmp) / "cases.jsonl")
            key = f"{split}/cases.jsonl"
            hashes[key] = hashlib.sha256((Path(tmp) / "cases.jsonl").read_bytes()).hexdigest()
            if not write_manifest and recorded and recorded.get(key) != hashes[key]:
                errs.append(f"{key} differs from needles-manifest.json")
            kinds = collections.Counter(c["kind"] for c in cases)
            print(f"{split}: {len(cases)} cases of {len(kinds)} kinds")
            if len(kinds) < 12:
                errs.append(f"{split}: only {len(kinds)} kinds")
            errs += [f"{split}: kind {k} has {n} case(s)" for k, n in kinds.items() if n < 2]
            for c in cases:
                if set(c) != {"id", "kind", "file", "intent", "needles"}:
                    errs.append(f"{c.get('id')}: fields {sorted(c)}")
                    continue
                data = (Path(tmp) / c["file"]).read_bytes()
                hashes[c["file"]] = hashlib.sha256(data).hexdigest()
                if not write_manifest and recorded and recorded.get(c["file"]) != hashes[c["file"]]:
                    errs.append(f"{c['id']}: file differs from needles-manifest.json")
                if not 20_000 <= len(data) <= 600_000:
                    errs.append(f"{c['id']}: size {len(data)}")
                lines = data.decode("utf-8").splitlines()
                if not 1 <= len(c["needles"]) <= 5:
                    errs.append(f"{c['id']}: {len(c['needles'])} needles")
                for nd in c["needles"]:
                    n = lines.count(nd)
                    if n != 1:
                        errs.append(f"{c['id']}: needle present {n} times: {nd[:80]!r}")
                intents[(split, c["id"])] = norm(c["intent"]).lower()
    if write_manifest:
        recorded.update(hashes)
        manifest_path.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(hashes)} hashes to {manifest_path.name}")
    elif not recorded:
        errs.append("no needles-manifest.json to compare with")
    if len(splits) == 2:
        common = set(v for (s, _), v in intents.items() if s == "dev") & \
            set(v for (s, _), v in intents.items() if s == "test")
        errs += [f"intent used in dev and test: {t!r}" for t in sorted(common)]
    return errs


def main() -> int:
    ap = argparse.ArgumentParser(description="Check the search-evaluation data.")
    sub = ap.add_subparsers(dest="what", required=True)
    q = sub.add_parser("questions")
    q.add_argument("corpus", help="directory written by build_corpus.py")
    n = sub.add_parser("needles")
    n.add_argument("--split", choices=["dev", "test", "both"], default="both")
    n.add_argument("--write-manifest", action="store_true", help="record the sha256 of every generated file")
    args = ap.parse_args()
    if args.what == "questions":
        errs = check_questions(Path(args.corpus))
    else:
        errs = check_needles(["dev", "test"] if args.split == "both" else [args.split], args.write_manifest)
    for e in errs:
        print("FAIL", e)
    print("OK" if not errs else f"{len(errs)} problem(s)")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check the intent evaluation set (standard library only).

    python bench/intent_eval/validate.py

Checks that every case file exists and is within the size limits, that every needle and
also_ok entry is a full line of its file (byte-identical, without the line ending: the file is
split at "\n", and a "\r" right before it is part of the ending), that ids are
unique and the splits share no id, that a file/intent pair is not in both splits, and that
every kind with two or more cases appears in both splits. Prints counts per kind and split.
Exits 1 on any error.
"""
import collections
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SPLITS = ("dev", "test")
FIELDS = {"id", "kind", "file", "language", "intent", "needles", "also_ok"}
MIN_BYTES, MAX_BYTES = 2 * 1024, 300 * 1024
MAX_FOLDER = 4 * 1024 * 1024


def main():
    errors = []
    cases = {}
    line_cache = {}

    def lines_of(rel):
        if rel not in line_cache:
            path = HERE / rel
            if not path.is_file():
                errors.append(f"missing file {rel}")
                line_cache[rel] = None
            else:
                data = path.read_bytes()
                if not MIN_BYTES <= len(data) <= MAX_BYTES:
                    errors.append(f"{rel}: {len(data)} bytes, outside {MIN_BYTES}..{MAX_BYTES}")
                text = data.decode("utf-8")
                # Lines end at "\n"; a "\r" just before it (CRLF) belongs to the line ending.
                line_cache[rel] = {ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")}
        return line_cache[rel]

    for split in SPLITS:
        path = HERE / f"cases-{split}.jsonl"
        cases[split] = []
        for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not raw.strip():
                continue
            where = f"{path.name}:{n}"
            try:
                case = json.loads(raw)
            except json.JSONDecodeError as exc:
                errors.append(f"{where}: bad JSON: {exc}")
                continue
            missing = FIELDS - case.keys()
            if missing:
                errors.append(f"{where}: missing fields {sorted(missing)}")
                continue
            cases[split].append(case)
            if not case["file"].startswith("cases/") or ".." in case["file"]:
                errors.append(f"{where}: file must be a relative path under cases/")
                continue
            if not isinstance(case["needles"], list) or not 1 <= len(case["needles"]) <= 5:
                errors.append(f"{where}: needs 1 to 5 needles")
            if not isinstance(case["also_ok"], list):
                errors.append(f"{where}: also_ok must be a list")
            if not case["intent"].strip():
                errors.append(f"{where}: empty intent")
            lines = lines_of(case["file"])
            if lines is None:
                continue
            for field in ("needles", "also_ok"):
                for item in case[field]:
                    if not isinstance(item, str) or "\n" in item:
                        errors.append(f"{where} [{case['id']}]: {field} entry must be one line")
                    elif not item.strip():
                        errors.append(f"{where} [{case['id']}]: blank {field} entry")
                    elif item not in lines:
                        errors.append(f"{where} [{case['id']}]: {field} entry is not a full line "
                                      f"of {case['file']}: {item[:80]!r}")

    ids = collections.Counter(c["id"] for s in SPLITS for c in cases[s])
    for cid, count in ids.items():
        if count > 1:
            errors.append(f"id {cid!r} used {count} times")
    shared = {c["id"] for c in cases["dev"]} & {c["id"] for c in cases["test"]}
    if shared:
        errors.append(f"ids in both splits: {sorted(shared)}")
    pairs = {(c["file"], c["intent"].strip().lower()) for c in cases["dev"]}
    for c in cases["test"]:
        if (c["file"], c["intent"].strip().lower()) in pairs:
            errors.append(f"{c['id']}: same file and intent as a dev case")

    per_kind = collections.defaultdict(collections.Counter)
    for split in SPLITS:
        for c in cases[split]:
            per_kind[c["kind"]][split] += 1
    for kind, counts in per_kind.items():
        if sum(counts.values()) >= 2 and not all(counts[s] for s in SPLITS):
            errors.append(f"kind {kind!r} has {sum(counts.values())} cases but is missing from a split")

    case_files = sorted((HERE / "cases").glob("*.txt"))
    for f in case_files:
        lines_of(f"cases/{f.name}")
    total = sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file())
    if total > MAX_FOLDER:
        errors.append(f"folder is {total} bytes, over {MAX_FOLDER}")

    width = max(len(k) for k in per_kind) if per_kind else 4
    print(f"{'kind':<{width}}  {'dev':>4}  {'test':>4}  {'all':>4}")
    for kind in sorted(per_kind):
        d, t = per_kind[kind]["dev"], per_kind[kind]["test"]
        print(f"{kind:<{width}}  {d:>4}  {t:>4}  {d + t:>4}")
    nd, nt = len(cases["dev"]), len(cases["test"])
    print(f"{'total':<{width}}  {nd:>4}  {nt:>4}  {nd + nt:>4}   "
          f"(dev {100 * nd / max(1, nd + nt):.0f} %)")
    used = {c["file"] for s in SPLITS for c in cases[s]}
    print(f"case files: {len(case_files)} ({len(used)} used by cases), folder size {total / 1024:.0f} KiB")
    unused = sorted(f"cases/{f.name}" for f in case_files if f"cases/{f.name}" not in used)
    if unused:
        print("files with no case: " + ", ".join(unused))

    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

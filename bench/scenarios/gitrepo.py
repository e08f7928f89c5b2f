"""A git repository with a few hundred commits by several authors, built with `git fast-import` (one process,
fixed dates, so the history and its hashes are the same on every run)."""

from __future__ import annotations

import random
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .words import sentence

AUTHORS = [("Ada Lovelace", "ada@example.com", 34), ("Grace Hopper", "grace@example.com", 22),
           ("Linus Example", "linus@example.com", 16), ("Margaret Hamilton", "margaret@example.com", 14),
           ("Ken Thompson", "ken@example.com", 9), ("Barbara Liskov", "barbara@example.com", 5)]
FILES = [f"src/{pkg}/{mod}.py" for pkg in ("billing", "accounts", "search", "shipping", "reports")
         for mod in ("models", "service", "api", "jobs", "tests")] + ["README.md", "pyproject.toml", "Makefile"]
KINDS = [("fix", 30), ("feat", 25), ("refactor", 15), ("docs", 10), ("test", 12), ("chore", 8)]


@dataclass(frozen=True)
class RepoFacts:
    commits: int
    top_author: str
    top_author_commits: int
    fix_commits: int


def git_repo(root: Path, rng: random.Random, commits: int = 400) -> RepoFacts:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    stream: list[bytes] = []
    authors: Counter[str] = Counter()
    fixes = 0
    when = 1_700_000_000
    contents: dict[str, str] = {}
    for n in range(1, commits + 1):
        name, email, _ = rng.choices(AUTHORS, weights=[a[2] for a in AUTHORS])[0]
        kind = rng.choices([k for k, _ in KINDS], weights=[w for _, w in KINDS])[0]
        path = rng.choice(FILES)
        scope = path.split("/")[1] if path.startswith("src/") else "repo"
        subject = f"{kind}({scope}): {sentence(rng).rstrip('.').lower()}"
        body = f"{subject}\n\n{sentence(rng)} {sentence(rng)}\n\nRefs: #{rng.randint(100, 4000)}\n"
        when += rng.randint(600, 40_000)
        contents[path] = contents.get(path, "") + f"# change {n}: {sentence(rng)}\n"
        data = contents[path].encode()
        msg = body.encode()
        stream += [b"commit refs/heads/main\n", f"mark :{n}\n".encode(),
                   f"author {name} <{email}> {when} +0000\n".encode(),
                   f"committer {name} <{email}> {when} +0000\n".encode(),
                   f"data {len(msg)}\n".encode(), msg]
        if n > 1:
            stream.append(f"from :{n - 1}\n".encode())
        stream += [f"M 100644 inline {path}\n".encode(), f"data {len(data)}\n".encode(), data, b"\n"]
        authors[name] += 1
        fixes += kind == "fix"
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "-f", "main"], check=True)
    top, top_n = authors.most_common(1)[0]
    return RepoFacts(commits, top, top_n, fixes)

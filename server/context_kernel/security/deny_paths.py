"""Read and Edit deny rules' path patterns, matched as Claude Code matches them: a path is tried as given, made
absolute, against the project's and the home directory's real paths, and globs (`*`, `**`, `?`, `[...]`) anchor
at the project root unless they start with `/`, `~/` or `**`. Split from deny.py, which holds the rules.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path


def real_roots(directory: Path) -> tuple[str, ...]:
    """The directory as given (absolute, lexically normalised) and its real path."""
    lexical = os.path.normpath(os.path.abspath(directory))
    return tuple(dict.fromkeys((lexical, os.path.realpath(lexical))))


def path_candidates(path: str, project_dir: Path, home: Path | None) -> list[str]:
    """The spellings of `path` a rule is tried on: raw, lexically resolved, real."""
    raw = path.replace("\\", "/") if os.sep == "\\" else path
    if raw.startswith("~/") or raw == "~":
        if home is None:
            return [raw]  # matched textually against ~/ rules only
        raw = str(home) + raw[1:]
    base = os.path.abspath(project_dir)
    joined = raw if raw.startswith("/") else base.rstrip("/") + "/" + raw
    lexical = os.path.normpath(joined)
    candidates = [joined, lexical, os.path.realpath(lexical)]
    return list(dict.fromkeys(candidates))


def path_matches(spec: str, candidate: str, roots: tuple[str, ...], homes: tuple[str, ...]) -> bool:
    if spec.startswith("//"):
        return _anchored(spec[2:], candidate, ("/",))
    if spec.startswith("~/"):
        if candidate.startswith("~/"):
            return _anchored(spec[2:], candidate[2:], ("",))
        return bool(homes) and _anchored(spec[2:], candidate, homes)
    if spec.startswith("./"):
        return _anchored(spec[2:], candidate, roots)
    if spec.startswith("/"):
        return _anchored(spec[1:], candidate, roots)
    if "/" in spec.rstrip("/"):  # gitignore: a slash inside anchors the pattern at the root
        return _anchored(spec, candidate, roots)
    if candidate.startswith("~/"):
        candidate = candidate[1:]
    return _glob_regex(spec.rstrip("/"), anchored=False).search(candidate) is not None


def _anchored(glob: str, candidate: str, roots: tuple[str, ...]) -> bool:
    pattern = _glob_regex(glob.rstrip("/"), anchored=True)
    for root in roots:
        if root in ("", "/"):
            rel = candidate.lstrip("/") if root == "/" else candidate
        elif candidate == root:
            rel = ""
        elif candidate.startswith(root.rstrip("/") + "/"):
            rel = candidate[len(root.rstrip("/")) + 1:]
        else:
            continue
        if pattern.fullmatch(rel):
            return True
    return False


@lru_cache(maxsize=512)
def _glob_regex(glob: str, anchored: bool) -> re.Pattern[str]:
    """A gitignore glob as a regex; the match also covers everything under a matching directory."""
    body = _translate_glob(glob)
    if anchored:
        return re.compile(body + r"(?:/.*)?", re.DOTALL)
    return re.compile(r"(?:^|/)" + body + r"(?:/.*)?\Z", re.DOTALL)


def _translate_glob(glob: str) -> str:
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**", i):
            at_start = i == 0 or glob[i - 1] == "/"
            after = i + 2
            if at_start and glob.startswith("/", after):  # `**/` any leading directories
                out.append(r"(?:.*/)?")
                i = after + 1
                continue
            if at_start and after == n:  # trailing `/**` (or a lone `**`): everything
                out.append(r".*")
                i = after
                continue
            out.append(r"[^/]*")  # other `**` are ordinary stars
            i = after
            continue
        if c == "*":
            out.append(r"[^/]*")
        elif c == "?":
            out.append(r"[^/]")
        elif c == "[":
            end = glob.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                inner = glob[i + 1:end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = end
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 1
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)

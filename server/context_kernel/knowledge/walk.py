"""Which files of a directory tree get indexed: default excludes, .gitignore, include/exclude globs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tox", ".nox", ".idea", ".vscode", "dist", "build", ".next", "target", ".DS_Store",
)
MAX_FILE_BYTES = 5 * 1024 * 1024


@dataclass
class WalkResult:
    files: list[Path] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    """reason → count (binary, too large, over max_files)."""

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def walk(root: Path, *, include: list[str] | None = None, exclude: list[str] | None = None,
         max_depth: int | None = None, max_files: int = 1000, respect_gitignore: bool = True) -> WalkResult:
    """Text files under `root`, in a stable order; globs use .gitignore syntax relative to `root`."""
    result = WalkResult()
    inc = pathspec.GitIgnoreSpec.from_lines(include) if include else None
    exc = pathspec.GitIgnoreSpec.from_lines(list(exclude or []))
    ignores: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        depth = len(here.relative_to(root).parts)
        if respect_gitignore and (here / ".gitignore").is_file():
            lines = (here / ".gitignore").read_text(errors="replace").splitlines()
            ignores.append((here, pathspec.GitIgnoreSpec.from_lines(lines)))
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in DEFAULT_EXCLUDES and not _ignored(here / d, ignores, is_dir=True)
            and not exc.match_file(str((here / d).relative_to(root)) + "/")
        )
        if max_depth is not None and depth >= max_depth:
            dirnames[:] = []
        for name in sorted(filenames):
            path = here / name
            rel = str(path.relative_to(root))
            if name in DEFAULT_EXCLUDES or exc.match_file(rel) or _ignored(path, ignores, is_dir=False):
                continue
            if inc is not None and not inc.match_file(rel):
                continue
            if len(result.files) >= max_files:
                result.skip(f"over max_files={max_files}")
                continue
            if not path.is_file() or path.is_symlink():
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                result.skip("larger than 5 MB")
                continue
            if _is_binary(path):
                result.skip("binary")
                continue
            result.files.append(path)
    return result


def _ignored(path: Path, ignores: list[tuple[Path, pathspec.GitIgnoreSpec]], *, is_dir: bool) -> bool:
    for base, spec in ignores:
        if base == path or base in path.parents:
            rel = str(path.relative_to(base)) + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
    return False


def _is_binary(path: Path) -> bool:
    with open(path, "rb") as fh:
        return b"\x00" in fh.read(8192)

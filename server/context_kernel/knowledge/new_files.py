"""Files added to an indexed directory since it was indexed, picked up at search time.

ctx_index remembers each directory it walked and how (store/indexed_dirs.py). A search walks each of the
project's directories again — at most once every RESCAN_S seconds per directory, only directories of at most
MAX_WATCHED_FILES files, with the walk's own options — on a worker thread while the search runs, and the files
no source holds yet are indexed under the labels ctx_index would have given them. Changed and deleted files are
freshness.py's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..store.indexed_dirs import IndexedDir
from .walk import walk

# A directory is walked again at most this often (a burst of searches pays for one walk).
RESCAN_S = 10.0
# Directories of more files than this are not walked at search time (a walk of 1,000 files costs ~10 ms).
MAX_WATCHED_FILES = 1000


class NewFiles:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._walked: dict[tuple[str, str], float] = {}
        self._clock = clock

    def due(self, dirs: Iterable[IndexedDir]) -> list[IndexedDir]:
        """The directories whose last walk is older than RESCAN_S (each is then marked walked now)."""
        now = self._clock()
        found = []
        for d in dirs:
            key = (d.root, d.source)
            if now - self._walked.get(key, -RESCAN_S - 1) >= RESCAN_S:
                self._walked[key] = now
                found.append(d)
        return found

    def mark_walked(self, d: IndexedDir) -> None:
        """ctx_index just walked it."""
        self._walked[(d.root, d.source)] = self._clock()


def added_files(dirs: list[IndexedDir], known: set[str], project_dir: Path) -> list[tuple[Path, str, IndexedDir]]:
    """(path, label, its directory) of each file under `dirs` that no source holds (`known`: their paths).
    Blocking: a worker thread."""
    added = []
    for d in dirs:
        root = Path(d.root)
        if not root.is_dir():
            continue
        options = {k: d.options.get(k) for k in ("include", "exclude", "max_depth")}
        found = walk(root, **options, max_files=MAX_WATCHED_FILES,
                     respect_gitignore=bool(d.options.get("respect_gitignore", True)))
        for path in found.files:
            if str(path) not in known:
                label = f"{d.source}/{path.relative_to(root)}" if d.source else _relative(path, project_dir)
                added.append((path, label, d))
    return added


def _relative(path: Path, project_dir: Path) -> str:
    try:
        return str(path.relative_to(project_dir.resolve()))
    except ValueError:
        return str(path)

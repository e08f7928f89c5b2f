"""What a cell read and wrote, as a reviewer needs it: each file's path (project-relative when inside the
project), size and sha256, so replay can say which input of a diverging cell changed.

Hashed at the cell's end, for reads and writes alike (a file the cell read and then changed has its changed
hash). A file is hashed once per version: a cache keyed by (path, size, mtime) spares a warm session re-reading
its 500 MB CSV after every cell. Past HASH_MAX_BYTES only size and modification time are kept: hashing a
gigabyte would add about a second to the reply.
"""

from __future__ import annotations

import base64
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import anyio

from .collector import image_key
from .files import file_hash
from .shell_files import shell_files

HASH_MAX_BYTES = 64 * 1024 * 1024
CACHE_ENTRIES = 1024
# Figures a cell saved (`plt.savefig("mass.png")`): recorded as the cell's outputs, so the notebook shows them,
# and named in the reply. Past the size limit only named.
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".svg": "image/svg+xml"}
MAX_IMAGE_BYTES = 2 * 1024 * 1024
# How the notebook marks such an output: not printed by the code, so replay does not compare it.
WRITTEN_FILE_KEY = "written_file"


class FileHashes:
    """sha256 of file versions, remembered by (path, size, mtime_ns)."""

    def __init__(self) -> None:
        self._known: OrderedDict[tuple[str, int, int], str] = OrderedDict()

    async def of(self, files: dict[str, str], project_dir: Path, code: str = "",
                 cwd: str | None = None) -> list[dict[str, Any]] | None:
        """`describe`, off the event loop, of the files the kernel reported, or else (a shell cell: `cwd` is
        where it started) of those its command line names; None for a cell that opened no file."""
        if not files and cwd is not None:
            files = await anyio.to_thread.run_sync(shell_files, code, cwd)
        return await anyio.to_thread.run_sync(self.describe, files, project_dir) if files else None

    def describe(self, files: dict[str, str], project_dir: Path) -> list[dict[str, Any]]:
        """Each file the cell opened as {path, mode ("read"/"written"), size, sha256 or mtime}, in the order
        opened; a file gone since (a temporary one) says so."""
        return [self._one(path, mode, project_dir) for path, mode in files.items()]

    def _one(self, path: str, mode: str, project_dir: Path) -> dict[str, Any]:
        entry: dict[str, Any] = {"path": _shown(path, project_dir), "mode": "written" if mode == "w" else "read"}
        try:
            found = os.stat(path)
        except OSError:
            return entry | {"gone": True}
        entry["size"] = found.st_size
        if found.st_size > HASH_MAX_BYTES:
            return entry | {"mtime": found.st_mtime}
        key = (path, found.st_size, found.st_mtime_ns)
        digest = self._known.get(key)
        if digest is None:
            try:
                digest = file_hash(Path(path))
            except OSError:
                return entry | {"gone": True}
            self._known[key] = digest
            if len(self._known) > CACHE_ENTRIES:
                self._known.popitem(last=False)
        return entry | {"sha256": digest}


def _shown(path: str, project_dir: Path) -> str:
    """Relative to the project when inside it: the export re-runs elsewhere with the project's files."""
    try:
        return str(Path(path).relative_to(project_dir))
    except ValueError:
        return path


def changed_inputs(inputs: list[dict[str, Any]], project_dir: Path | None) -> list[str]:
    """Replay's question: which of a cell's recorded inputs (the export's `inputs`) differ now (their hash, or
    size and time for big ones)."""
    changed = []
    for entry in inputs:
        if entry.get("gone") or not entry.get("path"):
            continue
        shown = entry["path"]
        path = Path(shown) if Path(shown).is_absolute() or project_dir is None else project_dir / shown
        try:
            found = path.stat()
        except OSError:
            changed.append(f"{shown} no longer exists")
            continue
        if "sha256" in entry:
            same = found.st_size == entry.get("size") and file_hash(path) == entry["sha256"]
        else:
            same = found.st_size == entry.get("size") and found.st_mtime == entry.get("mtime")
        if not same:
            changed.append(f"{shown} (changed since the session)")
    return changed


async def written_images(files: list[dict[str, Any]] | None, project_dir: Path,
                         shown: set[str]) -> tuple[list[dict[str, Any]], str | None]:
    """The image files a cell wrote, as display outputs for its record, and the reply's note naming them; not
    those it displayed too (`shown`: the collector's image keys), which the record and the reply have already."""
    images = [f for f in files or [] if f["mode"] == "written" and not f.get("gone")
              and Path(f["path"]).suffix.lower() in IMAGE_TYPES]
    if not images:
        return [], None
    made = await anyio.to_thread.run_sync(lambda: [(f, _image_output(f, project_dir)) for f in images])
    kept = [(f, out) for f, out in made if out is None or image_key(out["data"][_mime(f)]) not in shown]
    images, outputs = [f for f, _ in kept], [out for _, out in kept if out is not None]
    if not images:
        return [], None
    names = ", ".join(f"{f['path']} ({f.get('size', 0) / 1024:.1f} KB)" for f in images)
    return outputs, f"image{'s' if len(images) > 1 else ''} written: {names}; recorded in the session notebook"


def _mime(entry: dict[str, Any]) -> str:
    return IMAGE_TYPES[Path(entry["path"]).suffix.lower()]


def _image_output(entry: dict[str, Any], project_dir: Path) -> dict[str, Any] | None:
    path = Path(entry["path"]) if Path(entry["path"]).is_absolute() else project_dir / entry["path"]
    mime = _mime(entry)
    if entry.get("size", 0) > MAX_IMAGE_BYTES:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    value = data.decode("utf-8", "replace") if mime == "image/svg+xml" else base64.b64encode(data).decode()
    data_of = {mime: value, "text/plain": f"{entry['path']} (written by the cell)"}
    return {"output_type": "display_data", "data": data_of,
            "metadata": {"context_kernel": {WRITTEN_FILE_KEY: entry["path"]}}}

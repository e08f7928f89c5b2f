"""The overlay: our ipykernel lent to a project's interpreter that lacks it (the same Python as the server's),
as a directory of symlinks to the installed files of ipykernel and its dependencies in the server's
environment, appended to that interpreter's sys.path after its own site-packages (python_env.py says when
and how). Built once per Python build and set of versions, in the data dir."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from ..datadir import private_dir

if TYPE_CHECKING:
    from packaging.requirements import Requirement

__all__ = ["build_overlay", "conflicts_with", "lent_distributions"]


@dataclass(frozen=True)
class _Lent:
    """One distribution the overlay lends, as installed in the server's environment."""

    name: str
    canonical: str
    version: str
    requires: tuple[Requirement, ...]
    """Its requirements that apply here (markers evaluated, no extras)."""
    dist: metadata.Distribution


@functools.cache
def _closure() -> tuple[_Lent, ...]:
    """ipykernel and every distribution it needs (read once per process: ~0.1 s)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, _Lent] = {}
    todo = ["ipykernel"]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # not installed here: the environment must have it (conflicts_with says so)
        requires = tuple(r for r in map(Requirement, dist.requires or [])
                         if r.marker is None or r.marker.evaluate({"extra": ""}))
        found[name] = _Lent(dist.metadata["Name"], name, dist.version, requires, dist)
        todo += [r.name for r in requires]
    return tuple(found.values())


def lent_distributions() -> list[str]:
    """The names of the distributions the overlay lends (ipykernel first)."""
    return [lent.name for lent in _closure()]


def conflicts_with(versions: Mapping[str, str]) -> list[str]:
    """What in an environment (`versions`: the distributions it has) our ipykernel cannot run with: its
    packages win over the overlay's, so each lent distribution's requirements must hold for the
    versions that will be imported."""
    from packaging.utils import canonicalize_name

    theirs = {canonicalize_name(k): v for k, v in versions.items()}
    problems = []
    for lent in _closure():
        if lent.canonical in theirs:
            continue  # the environment's own copy is imported: its requirements are its own business
        for req in lent.requires:
            have = theirs.get(canonicalize_name(req.name))
            if have is not None and not req.specifier.contains(have, prereleases=True):
                problems.append(f"{req.name} {have} does not satisfy {lent.name} {lent.version}'s "
                                f"requirement {req.name}{req.specifier}")
    return problems


_overlay_lock = threading.Lock()


@functools.cache
def _overlay_name() -> str:
    """One overlay per Python build and set of installed versions: an upgrade of the server's packages
    makes a new one (the old one's symlinks would point at files that changed under running kernels)."""
    key = hashlib.sha256(json.dumps([sys.version, sysconfig.get_config_var("EXT_SUFFIX"), *[
        (lent.name, lent.version, str(lent.dist.locate_file(""))) for lent in _closure()]]).encode()).hexdigest()[:12]
    return f"{sys.implementation.cache_tag}-{key}"


def build_overlay(overlays_dir: Path) -> Path:
    """The overlay directory for the server's Python and versions, built on first use (symlinks, ~0.1 s)."""
    target = overlays_dir / _overlay_name()
    with _overlay_lock:
        if target.is_dir():
            return target
        private_dir(overlays_dir)
        scratch = Path(tempfile.mkdtemp(prefix=".building-", dir=overlays_dir))
        try:
            for lent in _closure():
                for top in _top_level(lent.dist):
                    source = Path(str(lent.dist.locate_file(top)))
                    if source.exists() and not os.path.lexists(scratch / top):
                        os.symlink(source, scratch / top)
            try:
                os.rename(scratch, target)
            except OSError:  # another server built it meanwhile
                if not target.is_dir():
                    raise
        finally:
            if scratch.exists():
                shutil.rmtree(scratch, ignore_errors=True)
    return target


def _top_level(dist: metadata.Distribution) -> set[str]:
    """The top-level names a distribution installed into site-packages: packages, modules, its
    .dist-info, bundled libraries (pyzmq.libs); not scripts, data files or .pth files."""
    names = set()
    for file in dist.files or []:
        parts = Path(str(file)).parts
        if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith(".pth") or Path(parts[0]).is_absolute():
            continue
        names.add(parts[0])
    return names

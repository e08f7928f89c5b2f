"""Another virtual environment, as a user's JupyterLab has: nbclient and its dependencies, no context_kernel.

Built without the network: a venv without pip whose site-packages holds symlinks to the installed
files of nbclient and of every distribution it requires (found with importlib.metadata), and to
nothing else, so `import context_kernel` (or ipykernel) fails there. Run it without PYTHONPATH.
"""

from __future__ import annotations

import os
import subprocess
import venv
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def requirement_closure(root: str) -> dict[str, metadata.Distribution]:
    """`root` and every installed distribution it requires, recursively, by canonical name: none of
    `root`'s extras, but the extras its requirements ask for (mcp needs `pyjwt[crypto]`)."""
    found: dict[str, metadata.Distribution] = {}
    wanted: dict[str, set[str]] = {}
    todo: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while todo:
        raw, extras = todo.pop()
        name = canonicalize_name(raw)
        if name in found and extras <= wanted[name]:
            continue
        wanted.setdefault(name, set()).update(extras)
        dist = found[name] = metadata.distribution(name)
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *wanted[name])):
                todo.append((req.name, frozenset(req.extras)))
    return found


def build(target: Path, root: str = "nbclient") -> Path:
    """Make the venv at `target` with `root` and its requirements only; return its python."""
    venv.create(target, with_pip=False, symlinks=True)
    python = target / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    for dist in requirement_closure(root).values():
        for top in {file.parts[0] for file in dist.files or [] if file.parts[0] not in ("..", "__pycache__")}:
            source, link = Path(str(dist.locate_file(top))), site / top
            if source.exists() and not link.exists():
                link.symlink_to(source)
    return python


def environment(**extra: str) -> dict[str, str]:
    """This process's environment without what would let the foreign venv import our packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
                                                            "JUPYTER_PATH", "JUPYTER_DATA_DIR")}
    return {**env, **extra}

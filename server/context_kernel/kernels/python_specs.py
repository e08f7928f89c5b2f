"""Kernelspecs named for the Python a session's cells ran in, so an exported notebook runs in that interpreter.

An exported python notebook names `ck-python-<hash of the interpreter's path>` (kernels/python_env.py's
`kernel_name_for`), not `python3`: in a reviewer's JupyterLab or `nbconvert --execute`, `python3` is the
reviewer's own Python, which may lack the session's packages (`No module named 'pandas'`). `kernels install`
registers those names with Jupyter: one for the server's own interpreter (the python kernel of a project
without an environment of its own), and every project environment's this data dir has written (the server
writes its kernelspec when a project's python kernel first starts).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from .install import InstalledSpec
from .languages import PROJECT_PYTHON_PREFIX
from .python_env import kernel_name_for


def python_display_name(version: str, python: str, env: str | None) -> str:
    """What JupyterLab's kernel picker shows: the version and the environment's folder (or the interpreter's)."""
    label = Path(env).name if env else Path(python).name
    return f"Python {version} ({label})"


def server_python_spec(python: str, prefix: str) -> tuple[str, dict[str, object]]:
    """The kernelspec of this interpreter (it has ipykernel: the server's own python kernel runs it)."""
    python = os.path.abspath(python)  # a venv's bin/python, not what it links to: its packages come with it
    return kernel_name_for(Path(python)), {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": python_display_name(platform.python_version(), python, prefix),
        "language": "python", "interrupt_mode": "signal",
        "metadata": {"context_kernel": {"python": python, "env": prefix, "found_by": "server", "ipykernel": "own"}},
    }


def recorded_python_specs(kernels_dir: Path) -> dict[str, Path]:
    """The project environments' kernelspecs the server wrote in its data dir, by name."""
    try:
        found = sorted(kernels_dir.glob(f"{PROJECT_PYTHON_PREFIX}*/kernel.json"))
    except OSError:
        return {}
    return {spec.parent.name: spec.parent for spec in found}


def install_python_kernelspecs(python: str, prefix: str, kernels_dir: Path, *, user: bool = False,
                               install_prefix: str | None = None) -> list[InstalledSpec]:
    """Register the server interpreter's kernelspec and the recorded environments' with Jupyter (`user` or
    `install_prefix`, as `jupyter kernelspec install`). Raises OSError when the destination cannot be written."""
    manager = KernelSpecManager()
    done = []
    with tempfile.TemporaryDirectory(prefix="ck-python-specs-") as scratch:
        name, spec = server_python_spec(python, prefix)
        staged = {name: Path(scratch) / name}
        staged[name].mkdir()
        (staged[name] / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
        for recorded, source in recorded_python_specs(kernels_dir).items():
            if recorded not in staged:
                staged[recorded] = Path(scratch) / recorded
                shutil.copytree(source, staged[recorded])
        for name, directory in staged.items():
            target = Path(manager.install_kernel_spec(str(directory), name, user=user, prefix=install_prefix))
            done.append(InstalledSpec(name, target, str(target.parent) in manager.kernel_dirs))
    return done

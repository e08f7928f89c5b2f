"""Real Python environments for tests: venvs, a conda-style prefix, packages written as files, other Pythons.

Nothing here uses the network: a package is "installed" by writing its files and its .dist-info
(so importlib.metadata and pip see it), and precompiled, so importing it writes nothing.
"""

from __future__ import annotations

import compileall
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


def make_venv(prefix: Path, python: Path | str = sys.executable, *, with_pip: bool = False) -> Path:
    """A virtual environment made by `python -m venv` (without pip unless asked: ~50 ms instead of ~3 s)."""
    args = [str(python), "-m", "venv", *([] if with_pip else ["--without-pip"]), str(prefix)]
    subprocess.run(args, check=True, capture_output=True, timeout=120)
    return prefix


def real_python(prefix: Path) -> str:
    """The environment's python with symlinks resolved (what `os.path.realpath(sys.executable)` prints in it)."""
    return os.path.realpath(prefix / "bin" / "python")


def site_packages(prefix: Path) -> Path:
    found = sorted(prefix.glob("lib/python3*/site-packages"))
    assert found, f"no site-packages under {prefix}"
    return found[0]


def add_package(prefix: Path, name: str, version: str = "1.0", code: str = "", *, python: Path | None = None) -> Path:
    """Write package `name` (with a .dist-info) into the environment's site-packages, precompiled."""
    site = site_packages(prefix)
    package = site / name
    package.mkdir()
    (package / "__init__.py").write_text(code or f"VERSION = {version!r}\n")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "INSTALLER").write_text("tests\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    if python is None:
        compileall.compile_dir(package, quiet=1)
    else:
        subprocess.run([str(python), "-m", "compileall", "-q", str(package)], check=True, timeout=60)
    return package


def make_conda_prefix(prefix: Path) -> Path:
    """A conda-style prefix (conda-meta/, bin/python, no pyvenv.cfg) whose python really runs from it:
    a copy of the base interpreter's binary with the standard library linked in, and its own site-packages."""
    base_python = Path(os.path.realpath(sys._base_executable))  # type: ignore[attr-defined]
    stdlib = Path(sysconfig.get_paths(vars={"installed_base": sys.base_prefix, "base": sys.base_prefix})["stdlib"])
    lib = prefix / "lib" / stdlib.name
    (lib / "site-packages").mkdir(parents=True)
    (prefix / "bin").mkdir()
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "history").write_text("")
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            os.symlink(entry, lib / entry.name)
    shutil.copy2(base_python, prefix / "bin" / "python")
    os.symlink("python", prefix / "bin" / "python3")
    return prefix


def other_minor_python() -> Path | None:
    """A CPython 3 whose major.minor is not ours (pyenv's 3.12 first), or None when none is found."""
    ours = f"{sys.version_info[0]}.{sys.version_info[1]}"
    roots = []
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30, check=False)
        roots.append(Path(done.stdout.strip()))
    roots.append(Path(os.path.expanduser("~/.pyenv")))
    for minor in ("3.12", "3.13", "3.10"):
        if minor == ours:
            continue
        for root in roots:
            for candidate in sorted((root / "versions").glob(f"{minor}.*/bin/python{minor}")):
                if os.access(candidate, os.X_OK):
                    return candidate
        found = shutil.which(f"python{minor}")
        if found:
            return Path(found)
    return None


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` with its size and mtime: compare two to see that nothing was written."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*filenames, *dirnames]:
            path = Path(dirpath) / name
            stat = path.lstat()
            state[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return state


def freeze(python: Path) -> str:
    """`pip freeze --all` of an environment that has pip."""
    done = subprocess.run([str(python), "-m", "pip", "freeze", "--all"], capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout


HEADER = re.compile(r"^\[python: [^\n]*\]\n")


def without_header(text: str) -> str:
    """A reply without the one-line header that names the project's interpreter (the first python reply)."""
    return HEADER.sub("", text, count=1)

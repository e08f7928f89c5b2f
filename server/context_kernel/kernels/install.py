"""Our kernelspecs start their kernel with an absolute interpreter, so that any Jupyter can run them.

pip installs the kernelspecs shipped in `kernels/` (ck-bash, ck-javascript, …) as static files
(hatch shared-data, into PREFIX/share/jupyter/kernels), and a static file cannot name the
environment it lands in: their argv starts with a bare `python`. jupyter_client replaces a bare
`python` with the interpreter of whoever starts the kernel. For our server that is its own, which
has context_kernel; for a JupyterLab of another environment opening an exported notebook it is
that JupyterLab's, which has not: the kernel dies at start (`No module named 'context_kernel'`),
again at every restart.

`install_kernelspecs` writes them again with argv[0] = this environment's interpreter, absolute and
unresolved (a venv's bin/python, not the interpreter it links to), as `ipykernel install` does:
`kernels/install.sh` runs it for the venv, `context-kernel kernels install --user` registers them
for every Jupyter of the user. `launcher` and `launch_problem` are doctor's check that a kernelspec
names an interpreter that can still import its kernel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import anyio
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

from ..errors import ContextKernelError

OUR_KERNELS = "context_kernel.kernel_processes."
_SHIPPED = re.compile(r"share/jupyter/kernels/([^/]+)/kernel\.json$")
# Can the interpreter import the kernel's module (its parent packages are imported, the module is not run)?
_PROBE = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)"
PROBE_TIMEOUT_S = 30.0


def kernel_module(argv: Sequence[str]) -> str | None:
    """The module of ours a kernelspec's argv runs (`PYTHON -m context_kernel.kernel_processes.X …`), or None."""
    if len(argv) >= 3 and argv[1] == "-m" and argv[2].startswith(OUR_KERNELS):
        return argv[2]
    return None


def shipped_kernelspecs() -> dict[str, Path]:
    """The kernelspec directories pip installed with this package (its RECORD lists them), by name."""
    try:
        dist = metadata.distribution("context-kernel")
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, Path] = {}
    for file in dist.files or []:
        match = _SHIPPED.search(file.as_posix())
        if match:
            spec_dir = Path(os.path.normpath(str(dist.locate_file(file)))).parent
            if (spec_dir / "kernel.json").is_file():
                found[match[1]] = spec_dir
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class InstalledSpec:
    name: str
    directory: Path
    searched: bool
    """Whether this process's Jupyter looks in that directory (a --prefix may be off its path)."""


def install_kernelspecs(python: str, *, user: bool = False, prefix: str | None = None,
                        sources: Mapping[str, Path] | None = None) -> list[InstalledSpec]:
    """Install our kernelspecs (the shipped ones, or `sources`) so that `python` starts their kernels.

    Where, as `jupyter kernelspec install`: `user` the user's Jupyter data dir (JUPYTER_DATA_DIR,
    else ~/.local/share/jupyter), `prefix` PREFIX/share/jupyter/kernels. Each spec is staged in a
    scratch directory first, so rewriting the copy pip installed, in place, is safe. Raises
    OSError when the destination cannot be written, ContextKernelError when this install has
    nothing to install.
    """
    if user == (prefix is not None):
        raise ValueError("give exactly one of user=True or prefix")
    specs = shipped_kernelspecs() if sources is None else dict(sources)
    if not specs:
        raise ContextKernelError(
            "this install of context-kernel has no kernelspecs to install",
            hint="reinstall context-kernel from its wheel or checkout (the install puts them in "
                 "PREFIX/share/jupyter/kernels)")
    manager = KernelSpecManager()
    python = os.path.abspath(python)  # not resolved: a venv's bin/python is what makes its packages importable
    done = []
    with tempfile.TemporaryDirectory(prefix="ck-kernelspecs-") as scratch:
        for name, source in specs.items():
            staged = Path(scratch) / name
            shutil.copytree(source, staged)
            spec_file = staged / "kernel.json"
            spec = json.loads(spec_file.read_text())
            if kernel_module(spec.get("argv", [])) is None:
                continue  # not started by our Python (a user's own spec of the same name)
            spec["argv"][0] = python
            spec_file.write_text(json.dumps(spec, indent=2) + "\n")
            directory = Path(manager.install_kernel_spec(str(staged), name, user=user, prefix=prefix))
            done.append(InstalledSpec(name, directory, str(directory.parent) in manager.kernel_dirs))
    return done


@dataclass(frozen=True)
class Launcher:
    """How one of our installed kernelspecs starts its kernel."""

    name: str
    python: str
    """argv[0]: an absolute interpreter, or a bare `python` that each Jupyter replaces with its own."""
    module: str
    directory: Path
    env: Mapping[str, str]

    @property
    def absolute(self) -> bool:
        return os.path.isabs(self.python)

    def fix(self) -> str:
        """The command that reinstalls this kernelspec where it is, started by this interpreter."""
        kernels, then = self.directory.parent, ""
        if kernels == Path(KernelSpecManager().user_kernel_dir):
            where = "--user"
        elif kernels.parent.name == "jupyter" and kernels.parent.parent.name == "share":
            prefix = kernels.parents[2]
            where = "--sys-prefix" if prefix == Path(sys.prefix) else f"--prefix {prefix}"
        else:  # a JUPYTER_PATH directory of another layout: install for the user, drop the stale copy
            where, then = "--user", f", then remove {self.directory}"
        return f"{sys.executable} -m context_kernel kernels install {where}{then}"


def registered_for_user(python: str, names: Sequence[str]) -> bool:
    """Whether the user's Jupyter data dir has each kernelspec of `names`, started by `python`."""
    user_dir = Path(KernelSpecManager().user_kernel_dir)
    for name in names:
        try:
            argv = json.loads((user_dir / name / "kernel.json").read_text()).get("argv", [])
        except (OSError, ValueError):
            return False
        if argv[:1] != [python]:
            return False
    return True


def launcher(name: str) -> Launcher | None:
    """The installed kernelspec `name` (the one Jupyter finds first), when it starts one of our kernels."""
    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return None
    module = kernel_module(spec.argv)
    if module is None:
        return None
    return Launcher(name, spec.argv[0], module, Path(spec.resource_dir), dict(spec.env or {}))


async def launch_problem(found: Launcher, kernel_env: Mapping[str, str]) -> str | None:
    """Why the interpreter `found` names cannot start its kernel (with the fix), or None when it can.

    Checked with the environment the server gives its kernels (`kernel_env`) plus the spec's own.
    A bare `python` is this server's own interpreter here (jupyter_client substitutes it), so it is
    not a problem for this check.
    """
    python = found.python if found.absolute else sys.executable
    env = {**kernel_env, **found.env}
    try:
        with anyio.fail_after(PROBE_TIMEOUT_S):
            done = await anyio.run_process([python, "-c", _PROBE, found.module], env=env, check=False)
    except OSError as exc:
        reason = f"its interpreter {python} cannot be run ({exc.strerror or exc})"
    except TimeoutError:
        reason = f"its interpreter {python} did not answer within {PROBE_TIMEOUT_S:g} s"
    else:
        if done.returncode == 0:
            return None
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["module not found"])[-1]
        reason = f"its interpreter {python} cannot import {found.module} ({last})"
    return f"kernelspec {found.directory} is broken: {reason} — run: {found.fix()}"


R_PROBE = 'quit(status = if (requireNamespace("IRkernel", quietly = TRUE)) 0 else 1)'


def irkernel_available() -> bool:
    """R with the IRkernel package: what our `ir` kernelspec (IRkernel behind kernels/ir/launch.R) needs."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return False
    import subprocess

    try:
        return subprocess.run([rscript, "-e", R_PROBE], capture_output=True, timeout=PROBE_TIMEOUT_S).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def install_ir_kernelspec(files: Path, *, user: bool = False, prefix: str | None = None) -> InstalledSpec:
    """Register kernels/ir as `ir` (replacing stock IRkernel's spec of that name where it is written)."""
    manager = KernelSpecManager()
    directory = Path(manager.install_kernel_spec(str(files / "ir"), "ir", user=user, prefix=prefix))
    return InstalledSpec("ir", directory, str(directory.parent) in manager.kernel_dirs)


def run_runtime_installers(files: Path, python: str, env: Mapping[str, str]) -> int:
    """kernels/install.sh --runtimes-only (apt for R and the script languages, npm typescript); its exit status.

    What needs root (apt) is skipped without it, and each snippet says which packages it would
    have installed. Output goes to this process's stderr.
    """
    import subprocess

    return subprocess.run(["bash", str(files / "install.sh"), "--runtimes-only"], env={**env, "CK_PYTHON": python},
                          check=False, stdout=sys.stderr).returncode

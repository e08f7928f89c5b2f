"""Running the python kernel in the project's interpreter without changing the project's environment.

Which interpreter is decided by kernels/interpreters.py; how ipykernel runs in it, here, by what the
interpreter has (asked once with a probe, asked again only when its site-packages change):

- it has ipykernel: launched as Jupyter and VS Code launch it (`python -m ipykernel_launcher`);
- it has not, and it is the same Python as the server's (major.minor, implementation, extension
  suffix, so pyzmq's and psutil's binaries load): launched with our ipykernel lent from an overlay,
  a directory of symlinks to the installed files of ipykernel and its dependencies in the server's
  environment, built once per Python version and set of versions in the data dir, and appended to
  sys.path after the environment's own site-packages (`python -c BOOTSTRAP`), so the project's
  packages win. A dependency the environment has in a version our ipykernel cannot use is refused
  before the start, with the command that fixes it. Nothing is written into the environment, and no
  PYTHONPATH is set: the processes a cell starts see the environment as it is;
- otherwise (another Python version without ipykernel): a clear error naming the one command that
  adds ipykernel to it. Nothing is installed into a user's environment unasked.

The kernelspec, with the interpreter's absolute path in its argv, is written to
`<data dir>/kernels/ck-python-<hash of the path>/kernel.json`, so the pool keeps different
environments' kernels apart, and the record, exported notebooks and replay name it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..datadir import private_dir, write_private
from ..errors import KernelUnavailable
from .env import kernel_environment
from .interpreters import Interpreter, activated, find_interpreter
from .languages import PROJECT_PYTHON_PREFIX as KERNEL_PREFIX
from .overlay import build_overlay, conflicts_with, lent_distributions

if TYPE_CHECKING:
    pass

SERVER_KERNEL = "python3"
PROBE_TIMEOUT_S = 20.0
IpykernelSource = Literal["server", "own", "lent"]

# Stdlib only, and valid from Python 2.7 on: it must tell what any interpreter is, even one we refuse.
PROBE = r"""
import os, sys, json
info = {"version": "%d.%d.%d" % tuple(sys.version_info[:3]), "executable": sys.executable, "prefix": sys.prefix,
        "implementation": getattr(getattr(sys, "implementation", None), "name", "cpython"),
        "path": [p for p in sys.path if p], "versions": {}, "ipykernel": False, "pip": False}
try:
    import sysconfig
    info["ext_suffix"] = sysconfig.get_config_var("EXT_SUFFIX")
except Exception:
    pass
try:
    import importlib.util
    info["ipykernel"] = importlib.util.find_spec("ipykernel") is not None
    info["pip"] = importlib.util.find_spec("pip") is not None
except Exception:
    pass
# Installed distributions by their metadata directories' names (name-version.dist-info): a listing
# per sys.path entry, ~5x faster than importlib.metadata, which would read every one.
for entry in info["path"]:
    try:
        names = os.listdir(entry)
    except OSError:
        continue
    for name in names:
        if name.endswith((".dist-info", ".egg-info")) and "-" in name:
            dist, version = name.rsplit(".", 1)[0].split("-")[:2]
            info["versions"].setdefault(dist, version)
sys.stdout.write(json.dumps(info))
"""

# The overlay goes last on sys.path, after the environment's site-packages; the cwd entry goes,
# as ipykernel_launcher does (IPython puts the kernel's working directory back).
BOOTSTRAP = ("import sys; sys.path[:1] = [] if sys.path[:1] == [''] else sys.path[:1]; sys.path.append({overlay!r}); "
             "from ipykernel.kernelapp import launch_new_instance; launch_new_instance()")


@dataclass(frozen=True)
class Probe:
    version: str
    implementation: str
    ext_suffix: str | None
    ipykernel: bool
    pip: bool
    versions: dict[str, str]
    """The distributions the environment has itself, with their versions."""
    paths: tuple[str, ...]
    """Its sys.path."""
    fingerprint: tuple[tuple[str, int], ...]
    """mtimes of the interpreter and its sys.path directories: a changed one means probe again."""

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True)
class Launch:
    """How the python kernel starts in this interpreter (after `ProjectPython.prepare`)."""

    kernel_name: str
    version: str
    ipykernel: IpykernelSource


def find_project_python(project_dir: Path, base_env: Mapping[str, str], *, kernels_dir: Path, overlays_dir: Path,
                        explicit: str | None = None, explicit_from: str = "--python",
                        extra_env: Mapping[str, str] | None = None) -> ProjectPython:
    """The python kernel of `project_dir`: its interpreter found (kernels/interpreters.py), with the
    environment every kernel of the project gets (`base_env` scrubbed, that interpreter activated)."""
    interpreter = find_interpreter(project_dir, base_env, explicit=explicit, explicit_from=explicit_from)
    env = kernel_environment(activated(base_env, interpreter), extra_env)
    return ProjectPython(interpreter, project_dir=project_dir, kernels_dir=kernels_dir, overlays_dir=overlays_dir,
                         env=env)


def kernel_name_for(python: Path) -> str:
    """The kernelspec name of an interpreter: one per absolute path, so environments never share kernels."""
    return KERNEL_PREFIX + hashlib.sha256(str(python).encode()).hexdigest()[:10]


class ProjectPython:
    """The python kernel of one project: which interpreter, how ipykernel runs in it, what to tell the agent."""

    def __init__(self, interpreter: Interpreter, *, project_dir: Path, kernels_dir: Path, overlays_dir: Path,
                 env: Mapping[str, str]) -> None:
        self.interpreter = interpreter
        self.project_dir = project_dir
        self.kernel_name = SERVER_KERNEL if interpreter.is_server else kernel_name_for(interpreter.python)
        self._kernels_dir = kernels_dir
        self._overlays_dir = overlays_dir
        self.env = dict(env)
        """The environment every kernel of the project gets (the interpreter's environment activated)."""
        self._lock = threading.Lock()
        self._probe: Probe | None = None
        self.launch: Launch | None = None
        """The last successful `prepare`; None before it."""

    @property
    def shown(self) -> str:
        return self.interpreter.shown(self.project_dir)

    def prepare(self) -> Launch:
        """Kernel start calls this (in a thread) before looking up the kernelspec: probe, overlay, spec.

        Raises KernelUnavailable, saying which environment and what to do, when it cannot run."""
        interp = self.interpreter
        if interp.is_server:
            self.launch = Launch(SERVER_KERNEL, platform.python_version(), "server")
            return self.launch
        if interp.problem is not None:
            raise KernelUnavailable(
                f"the python kernel cannot start: {interp.problem} — the environment found as {interp.why}",
                language="python", install=self._broken_hint())
        with self._lock:
            probe = self._probed()
            if probe.ipykernel:
                argv, source = [str(interp.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"], "own"
            else:
                overlay = self._lendable(probe)
                argv = [str(interp.python), "-c", BOOTSTRAP.format(overlay=str(overlay)), "-f", "{connection_file}"]
                source = "lent"
            self._write_spec(argv, probe, source)
            self.launch = Launch(self.kernel_name, probe.version, source)  # type: ignore[arg-type]
            return self.launch

    def header(self) -> str | None:
        """What the first python reply of a session starts with: which interpreter and why (None: the
        server's own, the python kernel as it always was)."""
        if self.interpreter.is_server or self.launch is None:
            return None
        lent = "; ipykernel lent by context-kernel" if self.launch.ipykernel == "lent" else ""
        return f"[python: {self.shown} {self.launch.version} ({self.interpreter.rule}{lent})]"

    def describe(self) -> str:
        """One line for doctor: interpreter, environment, the rule that chose it, how ipykernel runs."""
        interp = self.interpreter
        where = f"{interp.python} (environment {interp.prefix}, {interp.kind})" if interp.prefix else str(interp.python)
        how = {"server": "the server's own ipykernel (kernel python3)",
               "own": f"the environment's own ipykernel (kernel {self.kernel_name})",
               "lent": f"context-kernel's ipykernel, lent from an overlay after the environment's own packages "
                       f"(kernel {self.kernel_name})"}
        started = f"; runs {how[self.launch.ipykernel]}" if self.launch else ""
        variable = {"venv": " and VIRTUAL_ENV", "conda": " and CONDA_PREFIX"}.get(interp.kind, "")
        shell = "; shell PATH unchanged" if interp.is_server or interp.problem else \
            f"; shell cells get {interp.python.parent} first on PATH{variable}"
        return f"{where}: {interp.why}{started}{shell}"

    # --- the steps of prepare ---------------------------------------------------------------------

    def _probed(self) -> Probe:
        cached = self._probe
        if cached is not None and _fingerprint(self.interpreter.python, cached.paths) == cached.fingerprint:
            return cached
        python = str(self.interpreter.python)
        private_dir(self._kernels_dir)
        # -B: the probe writes no bytecode; cwd: the data dir, so no project file shadows a module.
        try:
            with subprocess.Popen([python, "-B", "-c", PROBE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, env=self.env, cwd=self._kernels_dir.parent) as proc:
                lent_distributions()  # what may be lent is read meanwhile (~0.1 s the first time): the two overlap
                try:
                    stdout, stderr = proc.communicate(timeout=PROBE_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    raise
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise self._unrunnable(str(exc)) from exc
        try:
            info = json.loads(stdout.decode("utf-8", "replace"))
        except ValueError:
            raise self._unrunnable(_tail(stderr)) from None
        paths = tuple(p for p in info.get("path", []) if isinstance(p, str))
        self._probe = Probe(
            version=str(info.get("version", "?")), implementation=str(info.get("implementation", "")),
            ext_suffix=info.get("ext_suffix"), ipykernel=bool(info.get("ipykernel")), pip=bool(info.get("pip")),
            versions={str(k): str(v) for k, v in dict(info.get("versions", {})).items()},
            paths=paths, fingerprint=_fingerprint(self.interpreter.python, paths))
        return self._probe

    def _unrunnable(self, detail: str) -> KernelUnavailable:
        return KernelUnavailable(
            f"the python kernel cannot start: {self.interpreter.python} ({self.interpreter.why}) did not run: "
            f"{detail}", language="python", install=self._broken_hint())

    def _lendable(self, probe: Probe) -> Path:
        """The overlay to lend this interpreter, or KernelUnavailable with the command that adds ipykernel."""
        ours = f"{sys.version_info[0]}.{sys.version_info[1]}"
        if (probe.minor, probe.implementation, probe.ext_suffix) != (ours, sys.implementation.name,
                                                                       sysconfig.get_config_var("EXT_SUFFIX")):
            raise KernelUnavailable(
                f"the python kernel cannot start: {self.shown} is Python {probe.version} ({self.interpreter.why}), "
                f"which has no ipykernel, and context-kernel can lend its own only to Python {ours} "
                f"({sys.implementation.name})", language="python", install=self._install_hint(probe))
        conflicts = conflicts_with(probe.versions)
        if conflicts:
            raise KernelUnavailable(
                f"the python kernel cannot start: {self.shown} ({self.interpreter.why}) has no ipykernel, and its own "
                f"{'; '.join(conflicts)}, so context-kernel's cannot be lent to it", language="python",
                install=self._install_hint(probe))
        return build_overlay(self._overlays_dir)

    def _write_spec(self, argv: list[str], probe: Probe, source: str) -> None:
        interp = self.interpreter
        label = interp.prefix.name if interp.prefix is not None else interp.python.name
        spec = {
            "argv": argv, "display_name": f"Python {probe.version} ({label})", "language": "python",
            "interrupt_mode": "signal",
            "metadata": {"context_kernel": {"python": str(interp.python), "env": str(interp.prefix or ""),
                                            "found_by": interp.rule, "ipykernel": source}},
        }
        _write_if_changed(self._kernels_dir / self.kernel_name / "kernel.json", json.dumps(spec, indent=1) + "\n")

    def _install_hint(self, probe: Probe) -> str:
        python = str(self.interpreter.python)
        if probe.pip:
            command = f"{python} -m pip install ipykernel"
        elif shutil.which("uv", path=self.env.get("PATH")):
            command = f"uv pip install --python {python} ipykernel"
        else:
            command = f"{python} -m ensurepip && {python} -m pip install ipykernel"
        return (f"add ipykernel to that environment: {command} — then call again (or choose another interpreter "
                "with serve --python / CONTEXT_KERNEL_PYTHON)")

    def _broken_hint(self) -> str:
        interp = self.interpreter
        if interp.rule.startswith("project"):
            where = interp.prefix.name if interp.prefix else ".venv"
            return (f"recreate it (python -m venv {where}, uv venv, poetry install...), or remove it to use the "
                    "server's own Python, or choose an interpreter with serve --python / CONTEXT_KERNEL_PYTHON")
        if interp.rule.startswith(("VIRTUAL_ENV", "CONDA_PREFIX")):
            return ("recreate that environment, or deactivate it before starting the client, or choose an "
                    "interpreter with serve --python / CONTEXT_KERNEL_PYTHON")
        return "fix the path given to serve --python / CONTEXT_KERNEL_PYTHON, or remove the setting"


# --- helpers -------------------------------------------------------------------------------------

def _fingerprint(python: Path, paths: Iterable[str]) -> tuple[tuple[str, int], ...]:
    marks = []
    for entry in [str(python), *paths]:
        try:
            marks.append((entry, os.stat(entry).st_mtime_ns))
        except OSError:
            marks.append((entry, -1))
    return tuple(marks)


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    private_dir(path.parent)
    write_private(path, text.encode())  # atomic: another server reading it sees the old spec or the new one


def _tail(data: bytes, limit: int = 600) -> str:
    return data.decode("utf-8", "replace").strip()[-limit:] or "no output"


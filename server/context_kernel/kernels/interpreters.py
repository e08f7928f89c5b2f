"""Which Python the python kernel runs: the project's own environment, found the way editors and tools find it.

The first rule that matches wins; what it found is said (doctor, the first python reply):

1. explicit: `serve --python PATH` or `CONTEXT_KERNEL_PYTHON` (a python, an environment's directory,
   or a command on PATH);
2. the client's activated environment: `VIRTUAL_ENV`, else `CONDA_PREFIX` unless that is conda's
   base environment (VS Code selects the environment it was launched from in the same way, and
   takes conda's base only when the user turned its auto-activation off; most shells have base
   active all the time, and poetry ignores it for the same reason);
3. the project's own environment, in its directory: `UV_PROJECT_ENVIRONMENT` (a uv project whose
   environment is moved), `.venv/` (uv, poetry in-project, pipenv in-project, `python -m venv`,
   and what VS Code's Python Environments extension auto-discovers first), `venv/`, then poetry's
   cache environment and pipenv's, named as those tools name them (no tool is run);
4. an activated conda base environment;
5. the server's own interpreter.

An environment that is there but cannot run (a `.venv` whose `bin/python` is a dangling symlink, a
`VIRTUAL_ENV` that names a deleted directory) is returned with its `problem`: the python kernel then
refuses to start and says which environment and what to do, rather than run the agent's code with
other packages than the project's.

Standard library only, and no environment is read here: callers pass the one the CLI read.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

EnvKind = Literal["venv", "conda", "installation"]
"""What the prefix is: a virtual environment (pyvenv.cfg), a conda environment (conda-meta/), or a
Python installation (pyenv's, the system's)."""

PROJECT_ENV_DIRS = (".venv", "venv")


@dataclass(frozen=True)
class Interpreter:
    python: Path
    """The executable, absolute and not resolved (a venv's python is a symlink to its base's)."""
    prefix: Path | None
    """The environment's directory (what `VIRTUAL_ENV`/`CONDA_PREFIX` name), None when unknown."""
    kind: EnvKind
    rule: str
    """Which rule matched, short: "--python", "VIRTUAL_ENV", "project .venv", "poetry", "server"..."""
    why: str
    """The rule as a sentence, for doctor."""
    problem: str | None = None
    """Why this environment cannot run the kernel (missing, dangling symlink); None when it can."""
    is_server: bool = False
    """The server's own interpreter (or an environment that is the server's own)."""

    def shown(self, project_dir: Path) -> str:
        """The executable as the agent reads it: relative inside the project, else absolute."""
        try:
            return str(self.python.relative_to(project_dir))
        except ValueError:
            return str(self.python)


def find_interpreter(project_dir: Path, env: Mapping[str, str], *, explicit: str | None = None,
                     explicit_from: str = "--python", server_python: Path | None = None,
                     server_prefix: Path | None = None, platform: str = sys.platform) -> Interpreter:
    """The interpreter the python kernel of `project_dir` runs, by the rules in the module docstring."""
    server_python = server_python or Path(sys.executable)
    server_prefix = server_prefix or Path(sys.prefix)

    def mark(found: Interpreter) -> Interpreter:
        if found.problem is None and found.prefix is not None and _same(found.prefix, server_prefix):
            return Interpreter(found.python, found.prefix, found.kind, found.rule,
                               found.why + " (the server's own environment)", is_server=True)
        return found

    if explicit:
        return mark(_explicit(explicit, explicit_from, env, project_dir))
    if env.get("VIRTUAL_ENV"):
        return mark(_at_prefix(_absolute(env["VIRTUAL_ENV"], project_dir), "VIRTUAL_ENV",
                               "the client's activated virtual environment (VIRTUAL_ENV)", "VIRTUAL_ENV names"))
    conda = env.get("CONDA_PREFIX")
    conda_base = bool(conda) and _is_conda_base(Path(conda or "."), env)
    if conda and not conda_base:
        return mark(_at_prefix(_absolute(conda, project_dir), "CONDA_PREFIX",
                               "the client's activated conda environment (CONDA_PREFIX)", "CONDA_PREFIX names"))
    found = _project_env(project_dir, env, platform)
    if found is not None:
        return mark(found)
    if conda:
        return mark(_at_prefix(_absolute(conda, project_dir), "CONDA_PREFIX (base)",
                               "the activated conda base environment (CONDA_PREFIX; no project environment "
                               "was found)", "CONDA_PREFIX names"))
    return Interpreter(server_python, server_prefix, _kind(server_prefix), "server",
                       "the server's own interpreter (no explicit setting, activated environment or project "
                       "environment was found)", is_server=True)


def env_python(prefix: Path) -> Path:
    """Where an environment's python is (it may be missing: see `python_problem`)."""
    for candidate in (prefix / "bin" / "python", prefix / "bin" / "python3", prefix / "Scripts" / "python.exe",
                      prefix / "python.exe"):
        if os.path.lexists(candidate):
            return candidate
    return prefix / "bin" / "python"


def python_problem(python: Path) -> str | None:
    """None when `python` can be run; else what is wrong with it, in a few words."""
    if os.path.islink(python) and not os.path.exists(python):
        return f"{python} is a dangling symlink (to {os.readlink(python)})"
    if not python.exists():
        return f"{python} does not exist"
    if not python.is_file() or not os.access(python, os.X_OK):
        return f"{python} is not an executable file"
    return None


def activated(env: Mapping[str, str], interpreter: Interpreter) -> dict[str, str]:
    """`env` as an activation of `interpreter`'s environment would leave it, so that `python` in a
    shell cell is the python kernel's interpreter: its directory first on PATH, and `VIRTUAL_ENV` or
    `CONDA_PREFIX` naming it. The server's own interpreter, or one that cannot run, changes nothing."""
    out = dict(env)
    if interpreter.is_server or interpreter.problem is not None:
        return out
    bindir = str(interpreter.python.parent)
    rest = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p and p != bindir]
    out["PATH"] = os.pathsep.join([bindir, *rest])
    if interpreter.kind == "venv" and interpreter.prefix is not None:
        out["VIRTUAL_ENV"] = str(interpreter.prefix)
    elif interpreter.kind == "conda" and interpreter.prefix is not None:
        out["CONDA_PREFIX"] = str(interpreter.prefix)
        out.pop("VIRTUAL_ENV", None)
    else:
        out.pop("VIRTUAL_ENV", None)
    return out


# --- the rules -----------------------------------------------------------------------------------

def _explicit(value: str, source: str, env: Mapping[str, str], project_dir: Path) -> Interpreter:
    why = f"set explicitly ({source})"
    if os.sep not in value and not value.startswith(("~", ".")):
        found = shutil.which(value, path=env.get("PATH", os.defpath))
        if found is None:
            return Interpreter(Path(value), None, "installation", source, why,
                               problem=f"{source} names {value!r}, which is not a command on PATH")
        value = found
    path = _absolute(value, project_dir)
    if path.is_dir():
        return _at_prefix(path, source, why, f"{source} names")
    prefix = path.parent.parent if path.parent.name in ("bin", "Scripts") else path.parent
    return Interpreter(path, prefix, _kind(prefix), source, why, problem=python_problem(path))


def _at_prefix(prefix: Path, rule: str, why: str, names: str) -> Interpreter:
    if not prefix.is_dir():
        what = "a dangling symlink" if os.path.islink(prefix) else "a directory that does not exist"
        return Interpreter(prefix / "bin" / "python", prefix, _kind(prefix), rule, why,
                           problem=f"{names} {prefix}, {what}")
    python = env_python(prefix)
    return Interpreter(python, prefix, _kind(prefix), rule, why, problem=python_problem(python))


def _project_env(project_dir: Path, env: Mapping[str, str], platform: str) -> Interpreter | None:
    pyproject = _toml(project_dir / "pyproject.toml")
    uv_env = env.get("UV_PROJECT_ENVIRONMENT")
    if uv_env and pyproject is not None:
        where = _absolute(uv_env, project_dir)
        if where.is_dir():
            return _at_prefix(where, "uv (UV_PROJECT_ENVIRONMENT)",
                              "the uv project's environment (UV_PROJECT_ENVIRONMENT)", "UV_PROJECT_ENVIRONMENT names")
    for name in PROJECT_ENV_DIRS:
        where = project_dir / name
        if os.path.lexists(where) and (where.is_dir() or os.path.islink(where)) and \
                (name == ".venv" or _looks_like_env(where)):
            return _at_prefix(where, f"project {name}", f"the project's own environment ({name}/ in the project "
                              "directory)", f"the project's {name} is")
    poetry = _poetry_env(project_dir, pyproject, env, platform)
    if poetry is not None:
        return poetry
    return _pipenv_env(project_dir, env)


def _poetry_env(project_dir: Path, pyproject: dict[str, Any] | None, env: Mapping[str, str],
                platform: str) -> Interpreter | None:
    if pyproject is None or not ("poetry" in pyproject.get("tool", {}) or (project_dir / "poetry.lock").is_file()):
        return None
    name = pyproject.get("tool", {}).get("poetry", {}).get("name") or pyproject.get("project", {}).get("name")
    if not isinstance(name, str) or not name:
        return None
    venvs = poetry_virtualenvs_dir(project_dir, env, platform)
    base = poetry_env_name(name, project_dir)
    candidates = sorted(p for p in venvs.glob(f"{glob_escape(base)}-py*") if p.is_dir())
    if not candidates:
        return None
    # envs.toml records the Python minor `poetry env use` chose; without it, the newest one.
    listed = (_toml(venvs / "envs.toml") or {}).get(base)
    minor = listed.get("minor") if isinstance(listed, dict) else None
    chosen = next((c for c in candidates if minor and c.name == f"{base}-py{minor}"), None) or \
        max(candidates, key=lambda p: _version_key(p.name.rsplit("-py", 1)[-1]))
    return _at_prefix(chosen, "poetry", f"poetry's environment for this project ({venvs})", "poetry's environment is")


def poetry_env_name(name: str, project_dir: Path) -> str:
    """`<name>-<hash>` as poetry names a project's environments (its EnvManager.generate_env_name): the
    canonical package name, sanitised and cut to 42 characters, and the first 8 characters of the
    urlsafe base64 of the SHA-256 of the project directory's real path."""
    canonical = re.sub(r"[-_.]+", "-", name).lower()
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", canonical)[:42]
    cwd = os.path.normcase(os.path.realpath(project_dir))
    digest = base64.urlsafe_b64encode(hashlib.sha256(cwd.encode()).digest()).decode()[:8]
    return f"{sanitized}-{digest}"


def poetry_virtualenvs_dir(project_dir: Path, env: Mapping[str, str], platform: str) -> Path:
    """`virtualenvs.path`: POETRY_VIRTUALENVS_PATH, else the project's poetry.toml, else the user's config.toml,
    else `{cache-dir}/virtualenvs` (cache-dir: POETRY_CACHE_DIR, the configs, else the platform's cache dir)."""
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        config_dir, cache_dir = home / "Library" / "Application Support" / "pypoetry", \
            home / "Library" / "Caches" / "pypoetry"
    else:
        config_dir = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "pypoetry"
        cache_dir = Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "pypoetry"
    config_dir = Path(env.get("POETRY_CONFIG_DIR") or config_dir)
    configs = [_toml(project_dir / "poetry.toml") or {}, _toml(config_dir / "config.toml") or {}]
    cache = env.get("POETRY_CACHE_DIR") or next((c["cache-dir"] for c in configs if c.get("cache-dir")), None)
    cache_dir = Path(cache).expanduser() if cache else cache_dir
    path = env.get("POETRY_VIRTUALENVS_PATH") or next(
        (c["virtualenvs"]["path"] for c in configs if isinstance(c.get("virtualenvs"), dict)
         and c["virtualenvs"].get("path")), None)
    if not path:
        return cache_dir / "virtualenvs"
    return _absolute(str(path).replace("{cache-dir}", str(cache_dir)), project_dir)


def _pipenv_env(project_dir: Path, env: Mapping[str, str]) -> Interpreter | None:
    pipfile = project_dir / "Pipfile"
    if not pipfile.is_file():
        return None
    home = Path(env.get("HOME") or Path.home())
    workon = Path(env.get("WORKON_HOME") or home / ".local" / "share" / "virtualenvs").expanduser()
    marker = project_dir / ".venv"
    if marker.is_file():  # pipenv: a .venv file names the environment (a path, or a name under WORKON_HOME)
        named = marker.read_text(errors="replace").strip()
        where = Path(named).expanduser() if "/" in named else workon / named
    elif env.get("PIPENV_CUSTOM_VENV_NAME"):
        where = workon / env["PIPENV_CUSTOM_VENV_NAME"]
    else:
        where = workon / pipenv_env_name(project_dir)
    if not where.is_dir():
        return None
    return _at_prefix(where, "pipenv", f"pipenv's environment for this project ({workon})", "pipenv's environment is")


def pipenv_env_name(project_dir: Path) -> str:
    """`<dirname>-<hash>` as pipenv names a project's environment (Project._get_virtualenv_hash): the
    sanitised directory name cut to 42 characters, and 8 characters of the urlsafe base64 of the first
    6 bytes of the SHA-256 of the Pipfile's real path."""
    pipfile = os.path.realpath(project_dir / "Pipfile")
    sanitized = re.sub(r'[ &$`!*@"()\[\]\\\r\n\t]', "_", Path(pipfile).parent.name)[:42]
    digest = base64.urlsafe_b64encode(hashlib.sha256(pipfile.encode()).digest()[:6]).decode()[:8]
    return f"{sanitized}-{digest}"


# --- helpers -------------------------------------------------------------------------------------

def _is_conda_base(prefix: Path, env: Mapping[str, str]) -> bool:
    return env.get("CONDA_DEFAULT_ENV") == "base" or (prefix / "condabin").is_dir()


def _kind(prefix: Path) -> EnvKind:
    if (prefix / "pyvenv.cfg").is_file():
        return "venv"
    if (prefix / "conda-meta").is_dir():
        return "conda"
    return "installation"


def _looks_like_env(where: Path) -> bool:
    return (where / "pyvenv.cfg").is_file() or (where / "conda-meta").is_dir() or \
        os.path.lexists(where / "bin" / "python")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _absolute(value: str, base: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def _toml(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))

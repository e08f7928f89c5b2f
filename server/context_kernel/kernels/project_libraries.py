"""Where the node and R kernels of a project load packages from, and why: what doctor says of them.

javascript/typescript: a cell's `require` and `import` resolve as in a file of the project directory
(kernel_processes/node_driver.js), so from the `node_modules` of the project directory and of each
parent directory; no NODE_PATH (kernels never get it).

R: `.libPaths()` as the kernel's launcher (kernels/ir/launch.R) leaves it, read by running that
launcher in its `--library-paths` mode, in the project directory with the kernels' environment: the
R startup, the project's .Renviron and profile included, is the kernel's own. The rule, first match:

1. renv: the project's profile activates it (`.Rprofile` sourcing `renv/activate.R`), or the project
   has an renv library for this R (`renv.lock`, `renv/library/[<os>/]R-<x.y>/<platform>`) that the
   launcher puts first, as renv's activation would;
2. R_LIBS_USER, from the project's `.Renviron` (else `~/.Renviron`; R reads one of them, over the
   environment), or from the environment;
3. R's defaults: the user library (when it exists), the site and system libraries.

No environment is read here: callers pass the kernels' one.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio

R_LIBRARY_TIMEOUT_S = 30.0  # R starts in ~0.3 s; a project profile may take longer, not forever
LIBRARY_MODE = "--library-paths"
_DEFINES_R_LIBS_USER = re.compile(r"^\s*R_LIBS_USER\s*=", re.MULTILINE)

RenvState = Literal["profile", "renv.lock", "unrestored", "none"]


def node_modules_dirs(project_dir: Path) -> list[Path]:
    """The node_modules directories a cell's `require` and `import` look in that exist: the project
    directory's, then each parent's (node's own order; it skips a directory itself named node_modules)."""
    found = []
    for directory in [project_dir, *project_dir.parents]:
        if directory.name != "node_modules" and (directory / "node_modules").is_dir():
            found.append(directory / "node_modules")
    return found


def describe_node(project_dir: Path) -> str:
    """The doctor line's text for javascript and typescript."""
    dirs = node_modules_dirs(project_dir)
    if not dirs:
        return ("no node_modules in the project directory or a parent: cells find node's built-in modules only "
                "(npm install in the project adds packages)")
    shown = ", ".join(f"{_shown(d, project_dir)} ({_plural(_package_count(d), 'package')})" for d in dirs)
    return f"require and import (typescript's too) resolve from the project directory up: {shown}"


@dataclass(frozen=True)
class RLibraries:
    paths: list[str]
    """`.libPaths()` as a cell of the R kernel sees it, first first."""
    renv: RenvState
    """How renv is involved: activated by the project's profile, put first by the launcher (renv.lock),
    a project of renv's without a library for this R (not restored), or not at all."""
    irkernel: str | None
    """Where IRkernel is loaded from (a package directory); None when R cannot find it."""
    version: str
    """`R-<x.y>`, the part of renv's library path that names this R's version."""
    renv_library: str | None


def r_library_command(argv: Sequence[str], resource_dir: str) -> list[str] | None:
    """The kernelspec's command in its `--library-paths` mode; None when the spec is not ours (kernels/ir)."""
    if not any("launch.R" in arg for arg in argv):
        return None
    return [arg.replace("{connection_file}", LIBRARY_MODE).replace("{resource_dir}", resource_dir) for arg in argv]


async def r_libraries(command: Sequence[str], project_dir: Path, env: Mapping[str, str]) -> RLibraries | str:
    """Run the launcher in the project directory as the kernel would start; its libraries, or why not."""
    try:
        with anyio.fail_after(R_LIBRARY_TIMEOUT_S):
            done = await anyio.run_process(list(command), cwd=project_dir, env=dict(env), check=False,
                                           stdin=subprocess.DEVNULL)
    except TimeoutError:
        return f"R did not say within {R_LIBRARY_TIMEOUT_S:g} s (a slow project .Rprofile?)"
    except OSError as exc:
        return f"R could not be run: {exc.strerror or exc}"
    fields: dict[str, list[str]] = {}
    for line in done.stdout.decode(errors="replace").splitlines():  # the project's profile may print too
        parts = line.split("\t")
        if len(parts) == 3 and parts[0] == "ck-library":
            fields.setdefault(parts[1], []).append(parts[2])
    state = (fields.get("renv") or [""])[0]
    if done.returncode != 0 or state not in ("profile", "renv.lock", "unrestored", "none"):
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return f"R exited with {done.returncode}: {' / '.join(tail) or 'no message'}"
    return RLibraries(fields.get("path", []), state,  # type: ignore[arg-type]  # checked just above
                      (fields.get("irkernel") or [""])[0] or None, (fields.get("version") or [""])[0],
                      (fields.get("renv-library") or [""])[0] or None)


def r_rule(found: RLibraries, project_dir: Path, env: Mapping[str, str],
           user_home: Path | None) -> tuple[str, str | None]:
    """Which rule made `found.paths`, as a phrase, and what is wrong with it (None when nothing is)."""
    if found.renv == "profile":
        return "renv: the project's .Rprofile activates it", None
    if found.renv == "renv.lock":
        return ("renv: the project's renv library (renv.lock; no profile activates it, so the kernel puts it first "
                "as renv would)"), None
    problem = None
    if found.renv == "unrestored":
        problem = (f"the project uses renv (renv.lock) but has no library for {found.version} under renv/library: "
                   "run renv::restore() in R, in the project directory")
    renviron = _renviron(project_dir, env, user_home)
    if renviron is not None and _DEFINES_R_LIBS_USER.search(_read(renviron)):
        where = "the project's .Renviron" if renviron.parent == project_dir else str(renviron)
        rule = f"R_LIBS_USER from {where}"
    elif env.get("R_LIBS_USER"):
        rule = "R_LIBS_USER from the environment"
        problem = problem or _missing_user_libraries(env["R_LIBS_USER"], project_dir)
    else:
        rule = "R's defaults: the user library (when it exists), the site and system libraries"
    return rule, problem


def describe_r(found: RLibraries, project_dir: Path, env: Mapping[str, str],
               user_home: Path | None) -> tuple[Literal["OK", "WARN"], str]:
    """The doctor line's level and text for R."""
    rule, problem = r_rule(found, project_dir, env, user_home)
    text = f"{', '.join(_shown(Path(p), project_dir) for p in found.paths)} — {rule}"
    if found.irkernel is None:
        problem = problem or "IRkernel is in none of them, nor in R's own libraries: apt-get install r-cran-irkernel"
    elif str(Path(found.irkernel).parent) not in found.paths:
        text += f"; IRkernel from {Path(found.irkernel).parent} (R's own libraries: the project's lack it)"
    return ("WARN", f"{text}; {problem}") if problem else ("OK", text)


def _renviron(project_dir: Path, env: Mapping[str, str], user_home: Path | None) -> Path | None:
    """The user environment file R reads: R_ENVIRON_USER, else the project's .Renviron, else ~/.Renviron."""
    if env.get("R_ENVIRON_USER"):
        named = Path(env["R_ENVIRON_USER"]).expanduser()
        return named if named.is_absolute() else project_dir / named
    if (project_dir / ".Renviron").is_file():
        return project_dir / ".Renviron"
    return user_home / ".Renviron" if user_home is not None else None


def _missing_user_libraries(value: str, project_dir: Path) -> str | None:
    # R leaves out of .libPaths() what does not exist, silently; entries with R's %-specifiers are not expanded here
    missing = [entry for entry in value.split(os.pathsep) if entry and "%" not in entry and
               not (project_dir / Path(entry).expanduser()).is_dir()]
    return f"R_LIBS_USER names {', '.join(missing)}, which does not exist (R leaves it out)" if missing else None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _package_count(node_modules: Path) -> int:
    count = 0
    try:
        for entry in node_modules.iterdir():
            if entry.name.startswith("@") and entry.is_dir():
                count += sum(1 for scoped in entry.iterdir() if not scoped.name.startswith("."))
            elif not entry.name.startswith("."):
                count += 1
    except OSError:
        pass
    return count


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _shown(path: Path, project_dir: Path) -> str:
    """Relative inside the project, else absolute: as the python interpreter line shows its executable."""
    try:
        return str(path.relative_to(project_dir))
    except ValueError:
        return str(path)

"""JavaScript, TypeScript and R cells use the project's own libraries, through the MCP client.

node: `require` and `import` resolve from the project directory up (its node_modules, then its
parents'), as a file in the project would, whatever a cell does with process.chdir. R: the project's
renv library, a project `.Rprofile` that activates renv (as R runs it when started in the project),
and R_LIBS_USER (set in the environment or in the project's `.Renviron`); IRkernel still starts when
the project's libraries hide it. Doctor says which libraries each uses and why. The packages are
written here by hand (node) or built offline from a source written here (R): no registry is reached.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of

from context_kernel.settings import Settings
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
TIMEOUT_MS = 90_000


def write_package(node_modules: Path, name: str, manifest: dict[str, object], files: dict[str, str]) -> None:
    """A package as npm would leave it in node_modules: package.json and its files."""
    root = node_modules / name
    root.mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0", **manifest}))
    for relative, text in files.items():
        (root / relative).write_text(text)


@pytest.fixture
def node_project(project: Path) -> Path:
    """A project with a CommonJS, an ESM-only and a dual package; its parent has one more."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed (bash kernels/install.sh)")
    modules = project / "node_modules"
    write_package(modules, "cjs-pkg", {"main": "index.js"},
                  {"index.js": "module.exports = { hello: (n) => `cjs hello ${n}` };\n"})
    # ESM only: no "require" or "default" condition, so only node's ESM resolution finds it
    write_package(modules, "esm-pkg", {"type": "module", "exports": {".": {"import": "./index.js"}}},
                  {"index.js": "export const greet = (n) => `esm hello ${n}`;\nexport default 'esm default';\n"})
    write_package(modules, "dual-pkg", {"exports": {".": {"import": "./esm.mjs", "require": "./cjs.cjs"}}},
                  {"esm.mjs": "export const kind = 'esm';\n", "cjs.cjs": "exports.kind = 'cjs';\n"})
    write_package(project.parent / "node_modules", "parent-pkg", {"main": "index.js"},
                  {"index.js": "module.exports = 'from the parent dir';\n"})
    return project


async def run(client: Client, language: str, code: str) -> str:
    result = await client.call_tool("ctx_execute", {"language": language, "code": code, "timeout": TIMEOUT_MS})
    text = text_of(result)
    assert not result.is_error, text
    return text.strip()


async def test_javascript_require_and_import_load_packages_from_the_projects_node_modules(
        node_project: Path, client: Client) -> None:
    assert await run(client, "javascript", "require('cjs-pkg').hello(1)") == "'cjs hello 1'"
    assert await run(client, "javascript", "import { greet } from 'esm-pkg'\ngreet(2)") == "'esm hello 2'"
    assert await run(client, "javascript", "(await import('esm-pkg')).default") == "'esm default'"
    # import takes the "import" condition, require the "require" one, as in a module of the project
    assert await run(client, "javascript", "(await import('dual-pkg')).kind + ' ' + require('dual-pkg').kind") \
        == "'esm cjs'"
    assert await run(client, "javascript", "require('parent-pkg') + ', ' + (await import('parent-pkg')).default") \
        == "'from the parent dir, from the parent dir'"


async def test_typescript_cells_import_the_projects_packages(node_project: Path, client: Client) -> None:
    code = (
        "import { greet } from 'esm-pkg'\nimport cjs = require('cjs-pkg')\nimport * as dual from 'dual-pkg'\n"
        "const shown: string = `${greet(3)}; ${cjs.hello(4)}; ${dual.kind}`\nshown"
    )
    assert await run(client, "typescript", code) == "'esm hello 3; cjs hello 4; esm'"
    # the names bound by imports are there for the next cell, as every top-level name is
    assert await run(client, "typescript", "const again: string = greet(5); again") == "'esm hello 5'"


async def test_imports_resolve_from_the_project_even_after_a_cell_changes_directory(
        node_project: Path, client: Client, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    await run(client, "javascript", f"process.chdir({json.dumps(str(elsewhere))})")
    code = "const lazy = () => import('esm-pkg');\n(await lazy()).greet(6) + ' ' + require('cjs-pkg').hello(7)"
    assert await run(client, "javascript", code) == "'esm hello 6 cjs hello 7'"
    # a JSON file of the project, imported with its attribute as node requires
    (node_project / "data.json").write_text('{"n": 8}')
    assert await run(client, "typescript", "import data from './data.json' with { type: 'json' }\ndata.n") == "8"


async def test_a_missing_package_says_in_one_line_that_it_looked_from_the_project_directory(
        node_project: Path, client: Client, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    await run(client, "javascript", f"process.chdir({json.dumps(str(elsewhere))})")
    def looked(spec: str) -> str:
        return (f"Error: Cannot find package '{spec}': looked in node_modules of the project directory "
                f"({node_project}) and of every parent directory; install it in the project (npm install no-such-pkg)")

    for language, code, spec in [("javascript", "require('no-such-pkg/sub')", "no-such-pkg/sub"),
                                 ("javascript", "await import('no-such-pkg')", "no-such-pkg"),
                                 ("javascript", "await import('no-such-pkg/sub')", "no-such-pkg/sub"),
                                 ("typescript", "import { x } from 'no-such-pkg'\nx", "no-such-pkg"),
                                 ("typescript", "import y = require('no-such-pkg')\ny", "no-such-pkg")]:
        result = await client.call_tool("ctx_execute", {"language": language, "code": code, "timeout": TIMEOUT_MS})
        first, *rest = text_of(result).splitlines()
        assert result.is_error and first == looked(spec)
        assert all(line.startswith("    at cell") for line in rest), text_of(result)  # no require stack
    for code in ("require('./nothing.js')", "await import('./nothing.js')"):
        relative = await client.call_tool("ctx_execute", {"language": "javascript", "code": code})
        assert text_of(relative).splitlines()[0] == (f"Error: Cannot find module './nothing.js': looked for it "
                                                     f"relative to the project directory ({node_project})")
    # a package that is there with a main file that is not: node's words, which name that file
    write_package(node_project / "node_modules", "broken-main", {"main": "missing.js"}, {})
    for code in ("require('broken-main')", "await import('broken-main')"):
        broken = text_of(await client.call_tool("ctx_execute", {"language": "javascript", "code": code}))
        assert "broken-main/missing.js" in broken.splitlines()[0] and "looked in" not in broken
    # a package that is there but lacks a dependency: node's own words, which name the package's file
    write_package(node_project / "node_modules", "needs-dep", {"main": "index.js"},
                  {"index.js": "module.exports = require('absent-dep');\n"})
    broken = text_of(await client.call_tool("ctx_execute", {"language": "javascript", "code": "require('needs-dep')"}))
    assert broken.startswith("Error: Cannot find module 'absent-dep'") and "needs-dep/index.js" in broken


# --- R -------------------------------------------------------------------------------------------

REPO_IR = Path(__file__).resolve().parents[2] / "kernels" / "ir"


@pytest.fixture(scope="module")
def r_paths() -> tuple[str, str]:
    """`R-<x.y>/<platform>`, the tail renv gives a project library for this R; and R's system library."""
    if shutil.which("R") is None:
        pytest.skip("R is not installed (bash kernels/install.sh installs r-cran-irkernel)")
    found = subprocess.run(["Rscript", "-e", 'cat(sprintf("R-%s.%s/%s", R.version$major, '
                            'sub("[.].*", "", R.version$minor), R.version$platform), .Library, sep = "\\n")'],
                           capture_output=True, text=True, timeout=60, check=True)
    tail, system = found.stdout.splitlines()
    return tail, system


def build_r_package(lib: Path, name: str, value: str, sources: Path) -> None:
    """Install a one-function package `name` (`where()` returns `value`) into `lib` from a source
    written here: R CMD INSTALL, offline."""
    src = sources / name
    (src / "R").mkdir(parents=True)
    (src / "DESCRIPTION").write_text(f"Package: {name}\nVersion: 1.0\nTitle: Test\nDescription: A test package.\n"
                                     "License: MIT\nMaintainer: A B <a@example.org>\n")
    (src / "NAMESPACE").write_text("export(where)\n")
    (src / "R" / "where.R").write_text(f"where <- function() {json.dumps(value)}\n")
    lib.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["R", "CMD", "INSTALL", "--no-docs", "--no-html", "--no-test-load", f"--library={lib}",
                           str(src)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def r_settings(tmp_path: Path, project: Path, **overrides: object) -> Settings:
    """Settings whose "ir" kernelspec is this checkout's kernels/ir (the data dir's kernels/ comes first),
    not the copy kernels/install.sh left in the venv."""
    settings = make_settings(tmp_path, project, **overrides)
    shutil.copytree(REPO_IR, settings.kernels_dir / "ir")
    return settings


async def r_lines(settings: Settings, code: str) -> list[str]:
    async with Client(create_server(settings)) as client:
        return (await run(client, "r", code)).splitlines()


SHOW = 'library(ckpkg); cat(where(), .libPaths(), sep = "\\n")'


async def test_r_uses_the_projects_renv_library_when_no_profile_activates_it(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    (project / "renv.lock").write_text('{"R": {"Version": "4"}, "Packages": {}}')
    library = project / "renv" / "library" / r_paths[0]
    build_r_package(library, "ckpkg", "from renv", tmp_path / "src")
    build_r_package(tmp_path / "user-lib", "ckpkg", "from the user library", tmp_path / "src-user")
    settings = r_settings(tmp_path, project, base_env={**os.environ, "R_LIBS_USER": str(tmp_path / "user-lib")})
    lines = await r_lines(settings, SHOW)
    # renv's order: the project library, then R's system library only (IRkernel, in the site library, still ran)
    assert lines[0] == "from renv"
    assert lines[1:] == [str(library), r_paths[1]]


async def test_r_finds_an_renv_library_moved_by_renv_paths_library_when_the_profile_changes_directory(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    (project / "renv.lock").write_text("{}")
    library = project / "libs" / "renv" / r_paths[0]
    build_r_package(library, "ckpkg", "from RENV_PATHS_LIBRARY", tmp_path / "src")
    (project / ".Rprofile").write_text("setwd(tempdir())\n")  # renv's paths stay the project's
    settings = r_settings(tmp_path, project, base_env={**os.environ, "RENV_PATHS_LIBRARY": "libs/renv"})
    lines = await r_lines(settings, SHOW)
    assert lines[:2] == ["from RENV_PATHS_LIBRARY", str(library)]


async def test_r_runs_the_projects_rprofile_that_activates_renv(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    # renv's own activate.R would fetch renv from CRAN: this one does what it leaves behind, the
    # project library first and only R's system library after it (IRkernel's site library hidden).
    library = project / "renv" / "library" / "linux-test" / r_paths[0]
    build_r_package(library, "ckpkg", "from the activated renv", tmp_path / "src")
    (project / "renv.lock").write_text('{"R": {"Version": "4"}, "Packages": {}}')
    (project / "renv" / "activate.R").write_text(
        f'local(.libPaths({json.dumps(str(library.relative_to(project)))}, include.site = FALSE))\n')
    (project / ".Rprofile").write_text('source("renv/activate.R")\nprofile_ran <- "yes"\n')
    lines = await r_lines(r_settings(tmp_path, project), SHOW + '; cat(profile_ran, sep = "\\n")')
    assert lines[0] == "from the activated renv" and lines[1] == str(library) and lines[-1] == "yes"
    assert not any("site-library" in line for line in lines)


async def test_irkernels_dependencies_come_from_the_projects_library_when_it_has_them(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    # an installed package is a directory that can be copied: the project's jsonlite, one of IRkernel's imports
    library = project / "renv" / "library" / r_paths[0]
    jsonlite = await anyio.to_thread.run_sync(lambda: subprocess.run(
        ["Rscript", "-e", 'cat(find.package("jsonlite"))'], capture_output=True, text=True, timeout=60,
        check=True).stdout)
    shutil.copytree(jsonlite, library / "jsonlite")
    (project / "renv.lock").write_text("{}")
    lines = await r_lines(r_settings(tmp_path, project), 'cat(getNamespaceInfo("jsonlite", "path"), '
                          'getNamespaceInfo("IRkernel", "path"), sep = "\\n")')
    assert lines == [str(library / "jsonlite"), str(Path(await anyio.to_thread.run_sync(irkernel_library)) /
                                                     "IRkernel")]


async def test_r_libs_user_from_the_environment_is_on_the_library_path(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    user = tmp_path / "user-lib"
    build_r_package(user, "ckpkg", "from R_LIBS_USER", tmp_path / "src")
    lines = await r_lines(r_settings(tmp_path, project, base_env={**os.environ, "R_LIBS_USER": str(user)}), SHOW)
    assert lines[:2] == ["from R_LIBS_USER", str(user)]


async def test_r_libs_user_from_the_projects_renviron_wins_over_the_environment(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    build_r_package(project / "rlib", "ckpkg", "from the project's .Renviron", tmp_path / "src")
    build_r_package(tmp_path / "env-lib", "ckpkg", "from the environment", tmp_path / "src-env")
    (project / ".Renviron").write_text("R_LIBS_USER=rlib\n")
    settings = r_settings(tmp_path, project, base_env={**os.environ, "R_LIBS_USER": str(tmp_path / "env-lib")})
    lines = await r_lines(settings, 'setwd(tempdir()); ' + SHOW)
    assert lines[:2] == ["from the project's .Renviron", str(project / "rlib")]


async def test_a_missing_r_package_says_where_r_looked(tmp_path: Path, project: Path,
                                                       r_paths: tuple[str, str]) -> None:
    (project / "renv.lock").write_text("{}")
    library = project / "renv" / "library" / r_paths[0]
    library.mkdir(parents=True)
    async with Client(create_server(r_settings(tmp_path, project))) as client:
        results = [await client.call_tool("ctx_execute", {"language": "r", "code": code})
                   for code in ("library(ckabsentpkg)", "loadNamespace('ckabsentpkg')")]
        other = "f <- function() g()\ng <- function() stop('x')\nf()"
        traceback = text_of(await client.call_tool("ctx_execute", {"language": "r", "code": other}))
    looked = f"there is no package called ‘ckabsentpkg’; looked in .libPaths(): {library}, {r_paths[1]}"
    for result in results:
        assert result.is_error and looked in text_of(result).splitlines()[0], text_of(result)
    assert traceback.splitlines()[0] == "Error in g(): x", traceback  # other errors unchanged


# --- doctor --------------------------------------------------------------------------------------

def irkernel_library() -> str:
    found = subprocess.run(["Rscript", "-e", 'cat(dirname(find.package("IRkernel")))'], capture_output=True,
                           text=True, timeout=60, check=True)
    return found.stdout


@pytest.mark.timeout(300)
async def test_doctor_says_which_node_modules_and_r_libraries_the_kernels_use(
        tmp_path: Path, node_project: Path, r_paths: tuple[str, str]) -> None:
    library = node_project / "renv" / "library" / "linux-test" / r_paths[0]
    library.mkdir(parents=True)
    (node_project / "renv.lock").write_text("{}")
    (node_project / "renv" / "activate.R").write_text(
        f'local(.libPaths({json.dumps(str(library.relative_to(node_project)))}, include.site = FALSE))\n')
    (node_project / ".Rprofile").write_text('source("renv/activate.R")\ncat("the profile prints\\n")\n')
    site = await anyio.to_thread.run_sync(irkernel_library)
    async with Client(create_server(r_settings(tmp_path, node_project))) as client:
        result = await client.call_tool("ctx_doctor", {})
    lines = text_of(result).splitlines()
    assert (f"[OK] JavaScript libraries: require and import (typescript's too) resolve from the project directory "
            f"up: node_modules (3 packages), {node_project.parent / 'node_modules'} (1 package)") in lines
    assert (f"[OK] R libraries: renv/library/linux-test/{r_paths[0]}, {r_paths[1]} — renv: the project's .Rprofile "
            f"activates it; IRkernel from {site} (R's own libraries: the project's lack it)") in lines
    r_kernel = next(line for line in lines if line.startswith(("[OK] r ", "[FAIL] r ")))
    assert r_kernel.startswith("[OK]") and "starts and runs code" in r_kernel


def doctor_lines(tmp_path: Path, project: Path, **env: str) -> dict[str, str]:
    """`context-kernel doctor --no-start`'s lines by subject, with this checkout's kernels/ir and a user home of
    its own."""
    home = tmp_path / "home"
    if not (home / "kernels" / "ir").exists():
        shutil.copytree(REPO_IR, home / "kernels" / "ir")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("R_LIBS", "RENV_", "R_ENVIRON"))}
    done = subprocess.run([sys.executable, "-m", "context_kernel", "doctor", "--no-start", "--project", str(project)],
                          capture_output=True, text=True, timeout=120, cwd=project,
                          env={**base, "CONTEXT_KERNEL_HOME": str(home), "HOME": str(tmp_path / "user"), **env})
    assert done.returncode == 0, done.stderr
    return {line.split("] ", 1)[1].split(":", 1)[0]: line for line in done.stdout.splitlines()}


def doctor_r_line(tmp_path: Path, project: Path, **env: str) -> str:
    return doctor_lines(tmp_path, project, **env)["R libraries"]


def test_doctor_says_when_no_node_modules_is_there(tmp_path: Path, project: Path) -> None:
    assert doctor_lines(tmp_path, project)["JavaScript libraries"] == (
        "[OK] JavaScript libraries: no node_modules in the project directory or a parent: cells find node's built-in "
        "modules only (npm install in the project adds packages)")


def test_doctor_r_libraries_follow_r_libs_user_from_the_renviron_the_environment_or_rs_defaults(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    default = doctor_r_line(tmp_path, project)
    assert default.startswith("[OK] R libraries: ") and default.endswith(
        f"{r_paths[1]} — R's defaults: the user library (when it exists), the site and system libraries")
    user = tmp_path / "user-lib"
    user.mkdir()
    from_env = doctor_r_line(tmp_path, project, R_LIBS_USER=str(user))
    assert from_env.startswith(f"[OK] R libraries: {user}, ") and from_env.endswith(
        " — R_LIBS_USER from the environment")
    missing = doctor_r_line(tmp_path, project, R_LIBS_USER=str(tmp_path / "nowhere"))
    assert missing.startswith("[WARN] R libraries: /") and missing.endswith(
        f" — R_LIBS_USER from the environment; R_LIBS_USER names {tmp_path / 'nowhere'}, which does not exist "
        "(R leaves it out)")
    (project / "rlib").mkdir()
    (project / ".Renviron").write_text("R_LIBS_USER=rlib\n")
    from_renviron = doctor_r_line(tmp_path, project, R_LIBS_USER=str(user))
    assert from_renviron.startswith("[OK] R libraries: rlib, ") and from_renviron.endswith(
        " — R_LIBS_USER from the project's .Renviron")


def test_doctor_says_an_renv_project_without_a_library_for_this_r_needs_restoring(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    (project / "renv.lock").write_text("{}")
    (project / "renv" / "library" / "R-3.6").mkdir(parents=True)  # restored for another R
    line = doctor_r_line(tmp_path, project)
    assert line.startswith("[WARN] R libraries: ") and line.endswith(
        f"; the project uses renv (renv.lock) but has no library for {r_paths[0].split('/')[0]} under renv/library: "
        "run renv::restore() in R, in the project directory")


def test_doctor_says_when_the_r_kernelspec_predates_project_libraries(
        tmp_path: Path, project: Path, r_paths: tuple[str, str]) -> None:
    spec = tmp_path / "home" / "kernels" / "ir"
    shutil.copytree(REPO_IR, spec)
    manifest = json.loads((spec / "kernel.json").read_text())
    manifest["argv"].remove("--no-init-file")  # as kernels/install.sh installed it before
    (spec / "kernel.json").write_text(json.dumps(manifest))
    assert doctor_r_line(tmp_path, project) == (
        f"[WARN] R libraries: the ir kernelspec ({spec}) is from an older kernels/install.sh: a profile that activates "
        "renv hides IRkernel from it, and an renv library no profile activates is not used — run: context-kernel "
        "kernels install")

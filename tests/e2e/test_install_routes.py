"""A user's install, by each route: pip into a fresh venv, pipx, and uvx — each from a wheel built
from this checkout, with its dependencies from the package index (as a user gets them).

After `context-kernel kernels install` every language's doctor line is OK (or a [FAIL] naming the
exact fix, with a non-zero exit), R runs behind our launcher (not stock IRkernel), and ctx_upgrade's
command fits the route. The three routes run at once: they mostly wait on downloads.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = [pytest.mark.kernels, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT = 600


def sh(argv: list[str | Path], env: dict[str, str], timeout: float = INSTALL_TIMEOUT,
       cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    assert done.returncode in (0, 1), f"{argv}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)],
                   check=True, timeout=INSTALL_TIMEOUT, capture_output=True)
    return next(out.glob("context_kernel-*.whl"))


def clean_env(root: Path) -> dict[str, str]:
    """No trace of this checkout's venv: what a user's shell would have."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_DATA_DIR", "CONTEXT_KERNEL_PYTHON")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != bin_dir)
    return {**env, "HOME": str(root / "home"), "CONTEXT_KERNEL_HOME": str(root / "data"),
            "JUPYTER_DATA_DIR": str(root / "jupyter")}


def via_pip(root: Path, wheel: Path) -> tuple[str, dict[str, str]]:
    env = clean_env(root)
    sh([sys.executable, "-m", "venv", root / "venv"], env)
    sh([root / "venv" / "bin" / "pip", "install", "-q", wheel], env)
    return str(root / "venv" / "bin" / "context-kernel"), env


def via_pipx(root: Path, wheel: Path) -> tuple[str, dict[str, str]]:
    env = {**clean_env(root), "PIPX_HOME": str(root / "pipx"), "PIPX_BIN_DIR": str(root / "bin")}
    sh([sys.executable, "-m", "pipx", "install", wheel], env)
    return str(root / "bin" / "context-kernel"), env


def via_uvx(root: Path, wheel: Path) -> tuple[str, dict[str, str]]:
    env = {**clean_env(root), "UV_CACHE_DIR": str(root / "uv-cache"), "UV_TOOL_DIR": str(root / "uv-tools")}
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    assert uv, "uv is a test dependency (pip install uv)"
    # A command that runs context-kernel from uvx's cache, as `uvx --from WHEEL context-kernel …` does.
    return f"{uv} tool run --from {wheel} context-kernel", env


Results = dict[str, subprocess.CompletedProcess[str]]
ROUTES: dict[str, Callable[[Path, Path], tuple[str, dict[str, str]]]] = {
    "pip": via_pip, "pipx": via_pipx, "uvx": via_uvx}


def run_route(route: str, root: Path, wheel: Path) -> Results:
    command, env = ROUTES[route](root, wheel)
    (root / "project").mkdir()
    base = command.split()
    out = {"install": sh([*base, "kernels", "install", *([] if route == "pip" else ["--no-runtimes"])], env,
                         cwd=root / "project")}
    doctor = ["doctor", "--project", str(root / "project"), *([] if route == "pip" else ["--no-start"])]
    out["doctor"] = sh([*base, *doctor], env, cwd=root / "project")
    code = "from context_kernel.setup.upgrade import render_upgrade; print(render_upgrade())"
    python = ([str(root / "venv" / "bin" / "python")] if route == "pip" else
              [str(root / "pipx" / "venvs" / "context-kernel" / "bin" / "python")] if route == "pipx" else
              [*base[:-1], "python"])
    out["upgrade"] = sh([*python, "-c", code], env, cwd=root / "project")
    out["setup"] = subprocess.run([*base, "setup", "claude-code", "--global"], capture_output=True, text=True,
                                  timeout=120, env=env, cwd=root / "project")
    return out


@pytest.fixture(scope="module")
def routes(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Results]:
    roots = {route: tmp_path_factory.mktemp(route) for route in ROUTES}
    with ThreadPoolExecutor(len(ROUTES)) as pool:
        futures = {route: pool.submit(run_route, route, roots[route], wheel) for route in ROUTES}
        return {route: future.result() for route, future in futures.items()}


def doctor_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The per-language lines: `[OK] python     kernel python3: …`."""
    return [line for line in done.stdout.splitlines() if re.match(r"\[\w+\] \w+ +kernel ", line)]


def test_pip_install_then_kernels_install_gives_every_language_or_an_exact_fix(
        routes: dict[str, Results]) -> None:
    done = routes["pip"]
    assert done["install"].returncode == 0, done["install"].stderr
    lines = doctor_lines(done["doctor"])
    assert len(lines) == 12, done["doctor"].stdout
    # An exact fix: the install that is missing, or, where rustc is rustup's proxy (this user's HOME is
    # new, so rustup has no toolchain in it), the rustup command that chooses one.
    fixes = ("context-kernel kernels install", "run `rustup default stable`")
    for line in lines:
        assert line.startswith("[OK]") or ("[FAIL]" in line and any(fix in line for fix in fixes)), line
    assert done["doctor"].returncode == (1 if any(line.startswith("[FAIL]") for line in lines) else 0)
    r = next(line for line in lines if line.split()[1] == "r")
    assert r.startswith("[OK] r          kernel ir: starts"), r  # ours, not stock IRkernel (a WARN)


@pytest.mark.parametrize("route", ["pipx", "uvx"])
def test_pipx_and_uvx_installs_have_the_kernel_files_and_the_r_launcher(
        routes: dict[str, Results], route: str) -> None:
    done = routes[route]
    assert done["install"].returncode == 0, done["install"].stderr
    assert "ir" in done["install"].stdout.strip().split(": ")[-1].split(", ")  # kernels/ir from the package data
    lines = doctor_lines(done["doctor"])
    assert len(lines) == 12 and all(line.startswith("[OK]") for line in lines), done["doctor"].stdout


def test_upgrade_and_setup_fit_each_route(routes: dict[str, Results], wheel: Path) -> None:
    assert "installed with pip from a local path" in routes["pip"]["upgrade"].stdout
    assert "pipx upgrade context-kernel" in routes["pipx"]["upgrade"].stdout
    assert "installed with uvx (uv's cache)" in routes["uvx"]["upgrade"].stdout
    assert "uvx --refresh --from " in routes["uvx"]["upgrade"].stdout
    for route in ("pip", "pipx"):
        assert routes[route]["setup"].returncode == 0, routes[route]["setup"].stderr
    uvx = routes["uvx"]["setup"]
    assert uvx.returncode == 2 and f"uv tool install {wheel}" in uvx.stderr  # what uvx ran, not a PyPI name

"""How ipykernel runs in a project's interpreter (kernels/python_env.py), on real venvs; no kernel is started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.pythonenvs import add_package, make_venv, other_minor_python, site_packages, tree_state

from context_kernel.errors import KernelUnavailable
from context_kernel.kernels.overlay import build_overlay, conflicts_with, lent_distributions
from context_kernel.kernels.python_env import ProjectPython, find_project_python


def python_of(project: Path, home: Path, env: dict[str, str] | None = None, **kw: object) -> ProjectPython:
    return find_project_python(project, env if env is not None else {"PATH": os.environ["PATH"]},
                               kernels_dir=home / "kernels", overlays_dir=home / "python-overlays",
                               **kw)  # type: ignore[arg-type]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_an_env_without_ipykernel_is_lent_ours_from_an_overlay_and_nothing_is_written_into_it(
        project: Path, tmp_path: Path) -> None:
    venv = make_venv(project / ".venv")
    before = tree_state(venv)
    python = python_of(project, tmp_path / "home")
    launch = python.prepare()
    assert (launch.ipykernel, launch.version) == ("lent", ".".join(map(str, sys.version_info[:3])))
    spec = json.loads((tmp_path / "home" / "kernels" / python.kernel_name / "kernel.json").read_text())
    assert spec["argv"][:2] == [str(venv / "bin" / "python"), "-c"] and spec["argv"][-2:] == ["-f", "{connection_file}"]
    assert spec["metadata"]["context_kernel"] == {"python": str(venv / "bin" / "python"), "env": str(venv),
                                                  "found_by": "project .venv", "ipykernel": "lent"}
    overlay = build_overlay(tmp_path / "home" / "python-overlays")
    assert str(overlay) in spec["argv"][2] and "sys.path.append" in spec["argv"][2]
    assert all((overlay / name).is_symlink() for name in ("ipykernel", "zmq", "IPython", "traitlets"))
    assert tree_state(venv) == before
    assert python.header() == f"[python: .venv/bin/python {launch.version} (project .venv; ipykernel lent by " \
                              "context-kernel)]"


def test_the_bootstrap_appends_the_overlay_after_the_env_site_packages_so_the_env_packages_win(
        project: Path, tmp_path: Path) -> None:
    venv = make_venv(project / ".venv")
    add_package(venv, "traitlets", "5.99", code="VERSION = 'the project copy'\n")
    python = python_of(project, tmp_path / "home")
    python.prepare()
    boot = json.loads((tmp_path / "home" / "kernels" / python.kernel_name / "kernel.json").read_text())["argv"][2]
    # Run the bootstrap's path set-up only (not the kernel): which traitlets and ipykernel are imported?
    setup = boot.split("; from ipykernel")[0]
    out = subprocess.run([str(venv / "bin" / "python"), "-c", setup + "; import traitlets, importlib.util; "
                          "print(traitlets.VERSION); print(importlib.util.find_spec('ipykernel').origin)"],
                         capture_output=True, text=True, check=True, timeout=60, cwd=tmp_path)
    version, ipykernel_file = out.stdout.splitlines()
    assert version == "the project copy"
    assert ipykernel_file.startswith(str(tmp_path / "home" / "python-overlays"))


def test_an_env_with_its_own_ipykernel_launches_it(project: Path, tmp_path: Path) -> None:
    venv = make_venv(project / ".venv")
    add_package(venv, "ipykernel", "6.0")
    python = python_of(project, tmp_path / "home")
    assert python.prepare().ipykernel == "own"
    spec = json.loads((tmp_path / "home" / "kernels" / python.kernel_name / "kernel.json").read_text())
    assert spec["argv"] == [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]


def test_installing_into_the_env_is_seen_at_the_next_start(project: Path, tmp_path: Path) -> None:
    venv = make_venv(project / ".venv")
    python = python_of(project, tmp_path / "home")
    assert python.prepare().ipykernel == "lent"
    add_package(venv, "ipykernel", "6.0")  # site-packages changed: probed again
    assert python.prepare().ipykernel == "own"


def test_a_dependency_our_ipykernel_cannot_use_is_refused_with_the_command_that_adds_ipykernel(
        project: Path, tmp_path: Path) -> None:
    venv = make_venv(project / ".venv")
    add_package(venv, "traitlets", "4.0")
    with pytest.raises(KernelUnavailable) as caught:
        python_of(project, tmp_path / "home").prepare()
    text = str(caught.value)
    assert "traitlets 4.0 does not satisfy ipykernel" in text and ".venv/bin/python" in text
    python = venv / "bin" / "python"
    assert f"{python} -m ensurepip && {python} -m pip install ipykernel" in text  # this venv has no pip


def test_conflicts_are_only_those_of_distributions_the_overlay_lends() -> None:
    assert conflicts_with({}) == []
    assert conflicts_with({"traitlets": "5.99", "pyzmq": "99.0"}) == []
    assert any("ipython 1.0 does not satisfy" in c for c in conflicts_with({"IPython": "1.0"}))
    assert "ipykernel" in lent_distributions() and "pyzmq" in lent_distributions()


def test_another_python_version_without_ipykernel_is_a_clear_error_naming_the_command(project: Path,
                                                                                     tmp_path: Path) -> None:
    other = other_minor_python()
    if other is None:
        pytest.skip("no CPython of another minor version found (pyenv or pythonX.Y on PATH)")
    venv = make_venv(project / ".venv", other)
    with pytest.raises(KernelUnavailable) as caught:
        python_of(project, tmp_path / "home").prepare()
    text = str(caught.value)
    minor = other.name.removeprefix("python")
    assert f".venv/bin/python is Python {minor}." in text and "has no ipykernel" in text
    assert f"lend its own only to Python {sys.version_info[0]}.{sys.version_info[1]}" in text
    assert f"{venv / 'bin' / 'python'} -m ensurepip && " in text


def test_a_broken_env_is_refused_naming_it_and_what_to_do(project: Path, tmp_path: Path) -> None:
    venv = make_venv(project / ".venv")
    (venv / "bin" / "python").unlink()
    os.symlink(tmp_path / "uninstalled" / "python3", venv / "bin" / "python")
    with pytest.raises(KernelUnavailable) as caught:
        python_of(project, tmp_path / "home").prepare()
    text = str(caught.value)
    assert f"{venv / 'bin' / 'python'} is a dangling symlink" in text and ".venv/ in the project directory" in text
    assert "recreate it (python -m venv .venv" in text and "--python" in text


def test_the_server_interpreter_runs_the_stock_python3_kernel_and_writes_nothing(project: Path,
                                                                                tmp_path: Path) -> None:
    python = python_of(project, tmp_path / "home")
    assert python.kernel_name == "python3" and python.prepare().ipykernel == "server"
    assert python.header() is None and not (tmp_path / "home").exists()


def test_each_interpreter_gets_its_own_kernel_name(project: Path, tmp_path: Path) -> None:
    make_venv(project / ".venv")
    other = make_venv(tmp_path / "other")
    first = python_of(project, tmp_path / "home")
    second = python_of(project, tmp_path / "home", explicit=str(other))
    assert first.kernel_name != second.kernel_name
    assert first.kernel_name.startswith("ck-python-") and second.kernel_name.startswith("ck-python-")
    assert site_packages(other).is_dir()

"""The python kernel runs in the project's own Python environment, visibly, through the real MCP client.

Every environment here is real (made by `python -m venv`, or a conda-style prefix whose python runs
from it), and none has ipykernel unless a test says so: context-kernel lends its own from an
overlay and writes nothing into the environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of
from tests.pythonenvs import (
    add_package,
    freeze,
    make_conda_prefix,
    make_venv,
    other_minor_python,
    real_python,
    tree_state,
    without_header,
)

from context_kernel.settings import Settings
from context_kernel.store.db import open_engine
from context_kernel.store.executions import ExecutionRepository, ExecutionRow
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels, pytest.mark.timeout(240)]
VERSION = ".".join(map(str, sys.version_info[:3]))
EXECUTABLE = "import sys, os; print(os.path.realpath(sys.executable))"
SHELL_EXECUTABLE = "python -c 'import sys, os; print(os.path.realpath(sys.executable))'"


async def call(client: Client, language: str, code: str, **extra: object) -> tuple[bool, str]:
    result = await client.call_tool("ctx_execute", {"language": language, "code": code, **extra})
    return bool(result.is_error), text_of(result)


def records(settings: Settings) -> list[ExecutionRow]:
    repo = ExecutionRepository(open_engine(settings.db_path))
    return [row for s in repo.sessions() for row in repo.for_session(s.id)]


async def test_a_project_venv_without_ipykernel_imports_its_packages_keeps_state_and_is_left_unchanged(
        tmp_path: Path, project: Path) -> None:
    venv = make_venv(project / ".venv", with_pip=True)
    add_package(venv, "ck_projectonly", "1.2", code="VALUE = 'from the project'\n")
    frozen, files = freeze(venv / "bin" / "python"), tree_state(venv)
    assert "ck_projectonly==1.2" in frozen and "ipykernel" not in frozen
    settings = make_settings(tmp_path, project)
    async with Client(create_server(settings)) as client:
        first = await call(client, "python", "import ck_projectonly\nprint(ck_projectonly.VALUE)")
        assert first == (False, f"[python: .venv/bin/python {VERSION} (project .venv; ipykernel lent by "
                                "context-kernel)]\nfrom the project")
        assert await call(client, "python", "counter = 41") == (False, "(no output)")
        assert await call(client, "python", "counter += 1\nprint(counter, ck_projectonly.VALUE)") == (
            False, "42 from the project")  # the header came once
    assert freeze(venv / "bin" / "python") == frozen
    assert tree_state(venv) == files
    rows = records(settings)
    assert {(r.language, r.python, r.python_env) for r in rows} == {
        ("python", str(venv / "bin" / "python"), str(venv))}
    assert all(r.kernel_name and r.kernel_name.startswith("ck-python-") for r in rows)


async def test_the_shell_python_is_the_python_kernel_interpreter(tmp_path: Path, project: Path) -> None:
    venv = make_venv(project / ".venv")
    settings = make_settings(tmp_path, project)
    no_ipykernel = "python -c 'import ipykernel' 2>&1 | tail -1"
    async with Client(create_server(settings)) as client:
        _, kernel = await call(client, "python", EXECUTABLE)
        shell = await call(client, "shell", SHELL_EXECUTABLE + "; echo \"$VIRTUAL_ENV\"")
        # The lent ipykernel is the kernel's alone: no PYTHONPATH carries it to the shell or to a child.
        in_shell = await call(client, "shell", no_ipykernel)
        same_pythonpath = f"os.environ.get('PYTHONPATH') == {os.environ.get('PYTHONPATH')!r}"
        in_child = await call(client, "python", "import subprocess, sys\n"
                              "print(subprocess.run([sys.executable, '-c', 'import ipykernel'], capture_output=True)"
                              f".returncode, {same_pythonpath})")
    assert without_header(kernel) == real_python(venv)
    assert shell == (False, f"{real_python(venv)}\n{venv}")
    assert in_shell == (False, "ModuleNotFoundError: No module named 'ipykernel'")
    assert in_child == (False, "1 True")
    shell_rows = [r for r in records(settings) if r.language == "shell"]
    assert {(r.python, r.python_env) for r in shell_rows} == {(str(venv / "bin" / "python"), str(venv))}


async def test_an_activated_virtualenv_outside_the_project_is_used_by_the_kernel_and_the_shell(
        tmp_path: Path, project: Path) -> None:
    active = make_venv(tmp_path / "elsewhere" / "active")
    add_package(active, "ck_activeonly")
    make_venv(project / ".venv")  # the activated environment wins over the project's
    settings = make_settings(tmp_path, project, base_env={**os.environ, "VIRTUAL_ENV": str(active)})
    async with Client(create_server(settings)) as client:
        is_error, text = await call(client, "python", "import ck_activeonly, sys\nprint(sys.prefix)")
        shell = await call(client, "shell", SHELL_EXECUTABLE)
    assert (is_error, text) == (False, f"[python: {active}/bin/python {VERSION} (VIRTUAL_ENV; ipykernel lent by "
                                       f"context-kernel)]\n{active}")
    assert shell == (False, real_python(active))


async def test_an_activated_conda_prefix_is_used_by_the_kernel_and_the_shell(tmp_path: Path, project: Path) -> None:
    conda = make_conda_prefix(tmp_path / "miniconda" / "envs" / "work")
    add_package(conda, "ck_condaonly", code="WHERE = 'conda'\n")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    settings = make_settings(tmp_path, project, base_env={**env, "CONDA_PREFIX": str(conda),
                                                          "CONDA_DEFAULT_ENV": "work"})
    async with Client(create_server(settings)) as client:
        is_error, text = await call(client, "python", "import ck_condaonly, sys\nprint(ck_condaonly.WHERE, sys.prefix)")
        shell = await call(client, "shell", "python -c 'import sys; print(sys.prefix)'; echo \"$CONDA_PREFIX\"")
    assert (is_error, without_header(text)) == (False, f"conda {conda}")
    assert "(CONDA_PREFIX; ipykernel lent by context-kernel)]" in text.splitlines()[0]
    assert shell == (False, f"{conda}\n{conda}")


async def test_a_project_env_of_another_python_version_without_ipykernel_is_a_clear_error(
        tmp_path: Path, project: Path) -> None:
    # Installing ipykernel into it would need the network (PyPI), so only the error path is tested here.
    other = other_minor_python()
    if other is None:
        pytest.skip("no CPython of another minor version found (pyenv or pythonX.Y on PATH)")
    venv = make_venv(project / ".venv", other, with_pip=True)
    minor = other.name.removeprefix("python")
    settings = make_settings(tmp_path, project)
    async with Client(create_server(settings)) as client:
        is_error, text = await call(client, "python", "print(1)")
        shell = await call(client, "shell", "python -c 'import sys; print(sys.version_info[:2])'")
    assert is_error
    assert f".venv/bin/python is Python {minor}." in text and "has no ipykernel" in text
    assert f"add ipykernel to that environment: {venv / 'bin' / 'python'} -m pip install ipykernel" in text
    assert shell == (False, str(tuple(int(p) for p in minor.split("."))))  # the shell has that Python first
    assert [r.status for r in records(settings) if r.language == "python"] == ["error"]


async def test_a_broken_project_env_is_a_clear_error_not_a_silent_fallback(tmp_path: Path, project: Path) -> None:
    venv = make_venv(project / ".venv")
    (venv / "bin" / "python").unlink()
    os.symlink(tmp_path / "pyenv-version-removed" / "python3.11", venv / "bin" / "python")
    async with Client(create_server(make_settings(tmp_path, project))) as client:
        is_error, text = await call(client, "python", "print('must not run in another Python')")
        again = await call(client, "python", "print(1)")
        shell = await call(client, "shell", "echo shell works")
    assert is_error and "must not run" not in text
    assert f"the python kernel cannot start: {venv / 'bin' / 'python'} is a dangling symlink" in text
    assert "the project's own environment (.venv/ in the project directory)" in text
    assert "recreate it (python -m venv .venv" in text and "remove it to use the server's own Python" in text
    assert again[0] and "dangling symlink" in again[1]
    assert shell == (False, "shell works")


async def test_an_exported_project_env_session_names_its_env_and_replays_in_it_or_says_why_not(
        tmp_path: Path, project: Path) -> None:
    venv = make_venv(project / ".venv")
    add_package(venv, "ck_projectonly", code="VALUE = 7\n")
    home = tmp_path / "home"
    async with Client(create_server(make_settings(tmp_path, project))) as client:
        await call(client, "python", "import ck_projectonly\nprint(ck_projectonly.VALUE * 6)")
        await call(client, "python", EXECUTABLE)
        text = text_of(await client.call_tool("ctx_export", {"path": "exports"}))
    path = Path(text.split(" to ", 1)[1].split(";")[0])
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.kernelspec.name.startswith("ck-python-")
    assert nb.metadata.kernelspec.display_name == f"Python {VERSION} (.venv)"
    assert nb.metadata.context_kernel.python == {"executable": str(venv / "bin" / "python"), "env": str(venv)}
    replay = [sys.executable, "-m", "context_kernel", "replay", str(path), "--timeout", "60"]
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(home)}
    with anyio.fail_after(120):
        done = await anyio.run_process(replay, check=False, env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout.decode().splitlines()[-1]) == (0, "2 of 2 cells match"), done.stderr
    # Another data dir has no kernelspec for it: it is written again from the notebook's metadata.
    with anyio.fail_after(120):
        done = await anyio.run_process(replay, check=False, cwd=tmp_path,
                                       env={**env, "CONTEXT_KERNEL_HOME": str(tmp_path / "other-home")})
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    os.rename(venv, project / "venv-moved")
    done = await anyio.run_process(replay, check=False, env=env, cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert f"ran in {venv / 'bin' / 'python'} (environment {venv}), which cannot run here" in err
    assert "does not exist" in err


def test_doctor_says_which_interpreter_and_env_the_python_kernel_and_shell_use_and_why(tmp_path: Path,
                                                                                     project: Path) -> None:
    venv = make_venv(project / ".venv")
    chosen = make_venv(tmp_path / "chosen")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env["CONTEXT_KERNEL_HOME"] = str(tmp_path / "home")

    def doctor(extra: dict[str, str]) -> str:
        done = subprocess.run([sys.executable, "-m", "context_kernel", "doctor", "--no-start", "--project",
                               str(project)], capture_output=True, text=True, timeout=120, env={**env, **extra})
        return done.stdout

    found = doctor({})
    assert (f"[OK] interpreter: {venv}/bin/python (environment {venv}, venv): the project's own environment "
            f"(.venv/ in the project directory); runs context-kernel's ipykernel, lent from an overlay") in found
    assert f"shell cells get {venv}/bin first on PATH and VIRTUAL_ENV" in found
    assert "[OK] python     kernel ck-python-" in found
    explicit = doctor({"CONTEXT_KERNEL_PYTHON": str(chosen)})
    assert f"[OK] interpreter: {chosen}/bin/python (environment {chosen}, venv): set explicitly " \
           "(CONTEXT_KERNEL_PYTHON)" in explicit
    (venv / "bin" / "python").unlink()
    os.symlink(tmp_path / "removed" / "python3", venv / "bin" / "python")
    broken = doctor({})
    assert f"[FAIL] interpreter: {venv}/bin/python (environment {venv}, venv): the project's own environment" in broken
    assert "is a dangling symlink" in broken and "recreate it" in broken
    assert "kernel ck-python-" in broken
    assert "cannot start in this environment (the interpreter check above says why)" in broken

"""Which interpreter the python kernel runs, decided on fake trees (kernels/interpreters.py: no process is run)."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest

from context_kernel.kernels.interpreters import (
    Interpreter,
    activated,
    find_interpreter,
    pipenv_env_name,
    poetry_env_name,
)

SERVER_PREFIX = Path("/nonexistent/server-venv")
SERVER_PYTHON = SERVER_PREFIX / "bin" / "python"


def fake_env(prefix: Path, *, kind: str = "venv", python: str | None = "file") -> Path:
    """A directory that looks like an environment: pyvenv.cfg or conda-meta/, and bin/python (an
    executable file, a dangling symlink, or none)."""
    (prefix / "bin").mkdir(parents=True)
    if kind == "venv":
        (prefix / "pyvenv.cfg").write_text("home = /usr/bin\n")
    elif kind == "conda":
        (prefix / "conda-meta").mkdir()
    if python == "file":
        (prefix / "bin" / "python").write_text("#!/bin/sh\n")
        (prefix / "bin" / "python").chmod(0o755)
    elif python == "dangling":
        os.symlink(prefix / "gone" / "python3.11", prefix / "bin" / "python")
    return prefix


def find(project: Path, env: dict[str, str] | None = None, **kw: object) -> Interpreter:
    return find_interpreter(project, {"HOME": str(project.parent / "user"), **(env or {})},
                            server_python=SERVER_PYTHON, server_prefix=SERVER_PREFIX, **kw)  # type: ignore[arg-type]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_without_any_environment_the_server_interpreter_is_used_and_said_so(project: Path) -> None:
    found = find(project)
    assert (found.python, found.rule, found.is_server, found.problem) == (SERVER_PYTHON, "server", True, None)
    assert "no explicit setting" in found.why


def test_the_project_dot_venv_is_found_with_its_python_shown_relative(project: Path) -> None:
    fake_env(project / ".venv")
    found = find(project)
    assert (found.python, found.prefix, found.kind, found.rule) == (
        project / ".venv" / "bin" / "python", project / ".venv", "venv", "project .venv")
    assert found.shown(project) == ".venv/bin/python" and not found.is_server


def test_dot_venv_wins_over_venv_and_a_venv_directory_that_is_no_environment_is_ignored(project: Path) -> None:
    (project / "venv" / "src").mkdir(parents=True)  # a source directory named venv
    assert find(project).rule == "server"
    fake_env(project / ".venv")
    assert find(project).rule == "project .venv"


def test_a_plain_venv_directory_with_an_environment_is_found(project: Path) -> None:
    fake_env(project / "venv")
    assert find(project).rule == "project venv"


def test_an_activated_virtualenv_wins_over_the_project_environment(project: Path, tmp_path: Path) -> None:
    fake_env(project / ".venv")
    outside = fake_env(tmp_path / "elsewhere" / "env")
    found = find(project, {"VIRTUAL_ENV": str(outside)})
    assert (found.prefix, found.rule) == (outside, "VIRTUAL_ENV")
    assert found.shown(project) == str(outside / "bin" / "python")


def test_an_activated_conda_env_wins_but_conda_base_yields_to_the_project_environment(project: Path,
                                                                                    tmp_path: Path) -> None:
    conda = fake_env(tmp_path / "miniconda" / "envs" / "work", kind="conda")
    base = fake_env(tmp_path / "miniconda", kind="conda")
    (base / "condabin").mkdir()
    fake_env(project / ".venv")
    assert find(project, {"CONDA_PREFIX": str(conda), "CONDA_DEFAULT_ENV": "work"}).kind == "conda"
    assert find(project, {"CONDA_PREFIX": str(base), "CONDA_DEFAULT_ENV": "base"}).rule == "project .venv"
    assert find(project, {"CONDA_PREFIX": str(base)}).rule == "project .venv"  # condabin/ marks the base too
    os.rename(project / ".venv", project / "old")
    found = find(project, {"CONDA_PREFIX": str(base), "CONDA_DEFAULT_ENV": "base"})
    assert (found.prefix, found.rule, found.kind) == (base, "CONDA_PREFIX (base)", "conda")


def test_an_explicit_setting_wins_over_everything(project: Path, tmp_path: Path) -> None:
    fake_env(project / ".venv")
    chosen = fake_env(tmp_path / "chosen")
    env = {"VIRTUAL_ENV": str(fake_env(tmp_path / "active"))}
    by_dir = find(project, env, explicit=str(chosen), explicit_from="CONTEXT_KERNEL_PYTHON")
    assert (by_dir.python, by_dir.rule) == (chosen / "bin" / "python", "CONTEXT_KERNEL_PYTHON")
    by_file = find(project, env, explicit=str(chosen / "bin" / "python"))
    assert (by_file.prefix, by_file.kind, by_file.rule) == (chosen, "venv", "--python")


def test_an_explicit_command_is_looked_up_on_path(project: Path, tmp_path: Path) -> None:
    bindir = fake_env(tmp_path / "tools") / "bin"
    os.rename(bindir / "python", bindir / "python3.99")
    found = find(project, {"PATH": str(bindir)}, explicit="python3.99")
    assert (found.python, found.problem) == (bindir / "python3.99", None)
    missing = find(project, {"PATH": str(bindir)}, explicit="python2.1")
    assert missing.problem == "--python names 'python2.1', which is not a command on PATH"


def test_the_server_own_environment_found_by_a_rule_is_the_server_interpreter(project: Path, tmp_path: Path) -> None:
    own = fake_env(tmp_path / "server-venv")
    found = find_interpreter(project, {"VIRTUAL_ENV": str(own)}, server_python=own / "bin" / "python",
                             server_prefix=own)
    assert found.is_server and found.rule == "VIRTUAL_ENV" and "the server's own environment" in found.why


@pytest.mark.parametrize(("how", "expected"), [
    ("dangling-python", "is a dangling symlink"),
    ("no-python", "does not exist"),
    ("dangling-env", "a dangling symlink"),
])
def test_a_broken_project_environment_is_found_with_its_problem(project: Path, tmp_path: Path, how: str,
                                                                expected: str) -> None:
    if how == "dangling-python":
        fake_env(project / ".venv", python="dangling")
    elif how == "no-python":
        fake_env(project / ".venv", python=None)
    else:
        os.symlink(tmp_path / "deleted-env", project / ".venv")
    found = find(project)
    assert found.rule == "project .venv" and found.problem is not None and expected in found.problem, found


def test_a_virtual_env_variable_naming_a_deleted_directory_is_a_problem_not_a_silent_fallback(project: Path,
                                                                                            tmp_path: Path) -> None:
    found = find(project, {"VIRTUAL_ENV": str(tmp_path / "deleted")})
    assert found.rule == "VIRTUAL_ENV" and found.problem == (
        f"VIRTUAL_ENV names {tmp_path / 'deleted'}, a directory that does not exist")


def test_a_uv_project_environment_moved_by_uv_project_environment_is_found(project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "app"\n')
    fake_env(project / ".venv")
    fake_env(project / "build" / "env")
    found = find(project, {"UV_PROJECT_ENVIRONMENT": "build/env"})
    assert (found.prefix, found.rule) == (project / "build" / "env", "uv (UV_PROJECT_ENVIRONMENT)")


def test_poetry_names_environments_by_canonical_name_and_a_hash_of_the_project_path() -> None:
    # Poetry's EnvManager.generate_env_name, reproduced by hand for a path that does not exist.
    path = "/home/user/My Project"
    digest = base64.urlsafe_b64encode(hashlib.sha256(path.encode()).digest()).decode()[:8]
    assert poetry_env_name("My_Cool.App", Path(path)) == f"my-cool-app-{digest}"
    assert poetry_env_name("a" * 60, Path(path)) == "a" * 42 + f"-{digest}"


def test_poetry_cache_environment_is_found_and_envs_toml_picks_the_python(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.poetry]\nname = "Demo_App"\nversion = "0.1"\n')
    venvs = tmp_path / "cache" / "pypoetry" / "virtualenvs"
    base = poetry_env_name("Demo_App", project)
    fake_env(venvs / f"{base}-py3.11")
    fake_env(venvs / f"{base}-py3.9")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert find(project, env).prefix == venvs / f"{base}-py3.11"  # no envs.toml: the newest
    (venvs / "envs.toml").write_text(f'[{base}]\nminor = "3.9"\npatch = "3.9.18"\n')
    found = find(project, env)
    assert (found.prefix, found.rule) == (venvs / f"{base}-py3.9", "poetry")
    moved = tmp_path / "elsewhere"
    fake_env(moved / f"{base}-py3.12")
    assert find(project, {"POETRY_VIRTUALENVS_PATH": str(moved)}).prefix == moved / f"{base}-py3.12"
    (project / "poetry.toml").write_text('[virtualenvs]\npath = "{cache-dir}/envs"\n')
    fake_env(tmp_path / "pc" / "envs" / f"{base}-py3.13")
    assert find(project, {"POETRY_CACHE_DIR": str(tmp_path / "pc")}).prefix == \
        tmp_path / "pc" / "envs" / f"{base}-py3.13"


def test_pipenv_environment_is_found_under_workon_home_by_its_name(project: Path, tmp_path: Path) -> None:
    (project / "Pipfile").write_text("[packages]\n")
    pipfile = os.path.realpath(project / "Pipfile")
    digest = base64.urlsafe_b64encode(hashlib.sha256(pipfile.encode()).digest()[:6]).decode()[:8]
    assert pipenv_env_name(project) == f"project-{digest}"
    home = tmp_path / "user"
    fake_env(home / ".local" / "share" / "virtualenvs" / f"project-{digest}")
    found = find(project)
    assert (found.rule, found.prefix) == ("pipenv", home / ".local" / "share" / "virtualenvs" / f"project-{digest}")
    fake_env(tmp_path / "workon" / "custom")
    assert find(project, {"WORKON_HOME": str(tmp_path / "workon"), "PIPENV_CUSTOM_VENV_NAME": "custom"}).prefix == \
        tmp_path / "workon" / "custom"


def test_a_pipenv_dot_venv_file_names_the_environment(project: Path, tmp_path: Path) -> None:
    (project / "Pipfile").write_text("[packages]\n")
    fake_env(tmp_path / "envs" / "named")
    (project / ".venv").write_text(str(tmp_path / "envs" / "named") + "\n")
    assert find(project).prefix == tmp_path / "envs" / "named"


def test_activation_puts_the_environment_bin_first_and_names_it(project: Path, tmp_path: Path) -> None:
    venv = find(project, explicit=str(fake_env(tmp_path / "v")))
    env = activated({"PATH": f"/usr/bin:{tmp_path / 'v' / 'bin'}:/bin", "CONDA_PREFIX": "/opt/conda"}, venv)
    assert env["PATH"] == f"{tmp_path / 'v' / 'bin'}:/usr/bin:/bin"
    assert (env["VIRTUAL_ENV"], env["CONDA_PREFIX"]) == (str(tmp_path / "v"), "/opt/conda")
    conda = find(project, explicit=str(fake_env(tmp_path / "c", kind="conda")))
    env = activated({"PATH": "/usr/bin", "VIRTUAL_ENV": "/old"}, conda)
    assert env["CONDA_PREFIX"] == str(tmp_path / "c") and "VIRTUAL_ENV" not in env


def test_activation_leaves_the_environment_alone_for_the_server_or_a_broken_interpreter(project: Path) -> None:
    base = {"PATH": "/usr/bin", "VIRTUAL_ENV": "/x"}
    assert activated(base, find(project)) == base
    fake_env(project / ".venv", python="dangling")
    assert activated(base, find(project)) == base


def test_the_cli_flag_wins_over_the_variable_and_a_relative_path_is_made_absolute(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from context_kernel.cli import build_settings

    monkeypatch.chdir(tmp_path)
    env = {"HOME": str(tmp_path), "CONTEXT_KERNEL_PYTHON": "envs/from-variable"}
    by_variable = build_settings(argparse.Namespace(python=None), env)
    assert (by_variable.python, by_variable.python_from) == (str(tmp_path / "envs" / "from-variable"),
                                                             "CONTEXT_KERNEL_PYTHON")
    by_flag = build_settings(argparse.Namespace(python="python3.12"), env)
    assert (by_flag.python, by_flag.python_from) == ("python3.12", "--python")  # a command: looked up on PATH
    assert build_settings(argparse.Namespace(), {"HOME": str(tmp_path)}).python is None

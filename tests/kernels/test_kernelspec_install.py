"""Our kernelspecs are installed started by an absolute interpreter, and doctor says when one cannot start.

No kernel is started here: the interpreters are only asked whether they can import our kernels.
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
from tests import foreign_venv
from tests.helpers import make_settings

from context_kernel.doctor import check_kernelspecs, check_language
from context_kernel.kernels.install import install_kernelspecs, irkernel_available, shipped_kernelspecs
from context_kernel.kernels.languages import LANGUAGES

pytestmark = pytest.mark.anyio
KERNELS = Path(__file__).resolve().parents[2] / "kernels"
OURS = sorted(p.parent.name for p in KERNELS.glob("ck-*/kernel.json"))


def argv_of(spec_dir: Path) -> list[str]:
    return list(json.loads((spec_dir / "kernel.json").read_text())["argv"])


def test_the_kernelspecs_this_install_ships_are_the_ones_in_the_repository() -> None:
    assert sorted(shipped_kernelspecs()) == OURS


def test_installed_kernelspecs_start_this_python_by_absolute_path_and_keep_the_rest(tmp_path: Path) -> None:
    done = install_kernelspecs(sys.executable, prefix=str(tmp_path))
    assert [spec.name for spec in done] == OURS
    for spec in done:
        assert spec.directory == tmp_path / "share" / "jupyter" / "kernels" / spec.name
        shipped = json.loads((KERNELS / spec.name / "kernel.json").read_text())
        installed = json.loads((spec.directory / "kernel.json").read_text())
        assert installed["argv"] == [sys.executable, *shipped["argv"][1:]]
        assert {**installed, "argv": None} == {**shipped, "argv": None}


def test_reinstalling_kernelspecs_over_themselves_is_safe_and_changes_nothing_more(tmp_path: Path) -> None:
    # --sys-prefix in a venv rewrites the very files pip installed: source and destination are one directory.
    kernels = tmp_path / "share" / "jupyter" / "kernels"
    shutil.copytree(KERNELS / "ck-bash", kernels / "ck-bash")
    for _ in range(2):
        install_kernelspecs(sys.executable, prefix=str(tmp_path), sources={"ck-bash": kernels / "ck-bash"})
        assert argv_of(kernels / "ck-bash")[0] == sys.executable
    assert sorted(p.name for p in kernels.iterdir()) == ["ck-bash"]


def test_the_install_command_says_where_it_wrote_and_that_jupyter_must_be_told(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "context_kernel", "kernels", "install", "--no-runtimes",
                          "--prefix", str(tmp_path)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "data")})
    assert out.returncode == 0, out.stderr
    # ours, this Python's (ck-python-…: exported notebooks name it), R's kernels/ir once IRkernel is there
    count = len(OURS) + 1 + (1 if irkernel_available() else 0)
    assert f"installed {count} kernelspecs in {tmp_path / 'share' / 'jupyter' / 'kernels'}" in out.stdout
    assert f"JUPYTER_PATH={tmp_path / 'share' / 'jupyter'}" in out.stderr
    if irkernel_available():
        assert (tmp_path / "share" / "jupyter" / "kernels" / "ir" / "launch.R").is_file()


def test_without_a_place_the_install_command_uses_this_virtual_environment() -> None:
    assert sys.prefix != sys.base_prefix, "the tests run in the project's venv"
    out = subprocess.run([sys.executable, "-m", "context_kernel", "kernels", "install", "--no-runtimes"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"kernelspecs in {Path(sys.prefix) / 'share' / 'jupyter' / 'kernels'}, each started by " \
           f"{sys.executable}" in out.stdout


async def test_doctor_fails_a_kernelspec_whose_python_cannot_import_context_kernel_and_names_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A kernelspec left by another environment: its python runs, but has no context_kernel.
    elsewhere = foreign_venv.build(tmp_path / "elsewhere")
    prefix = tmp_path / "prefix"
    spec_dir = prefix / "share" / "jupyter" / "kernels" / "ck-bash"
    shutil.copytree(KERNELS / "ck-bash", spec_dir)
    spec = json.loads((spec_dir / "kernel.json").read_text())
    (spec_dir / "kernel.json").write_text(json.dumps({**spec, "argv": [str(elsewhere), *spec["argv"][1:]]}))
    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))  # found before the venv's own
    settings = make_settings(tmp_path, tmp_path, base_env=foreign_venv.environment())

    def no_kernels(_name: str) -> None:
        raise AssertionError("doctor --no-start starts no kernel")

    check = await check_language(settings, LANGUAGES["shell"], False, no_kernels)  # type: ignore[arg-type]
    assert check.level == "FAIL"
    assert f"its interpreter {elsewhere} cannot import context_kernel.kernel_processes.bash" in check.detail
    assert "No module named 'context_kernel'" in check.detail
    fix = check.detail.split(" — run: ", 1)[1]
    assert fix == f"{sys.executable} -m context_kernel kernels install --prefix {prefix}"

    with anyio.fail_after(60):
        done = await anyio.run_process(fix.split(), check=False)
    assert done.returncode == 0, done.stderr.decode()
    check = await check_language(settings, LANGUAGES["shell"], False, no_kernels)  # type: ignore[arg-type]
    assert (check.level, check.detail) == ("OK", "kernelspec installed (not started: --no-start)")


def test_doctor_warns_that_a_bare_python_kernelspec_will_not_start_in_another_jupyter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = tmp_path / "prefix"
    shutil.copytree(KERNELS / "ck-javascript", prefix / "share" / "jupyter" / "kernels" / "ck-javascript")
    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))  # the static file, as pip installs it
    [check] = check_kernelspecs()
    assert check.level == "WARN" and check.subject == "kernelspecs"
    assert "ck-javascript" in check.detail and "start a bare `python`" in check.detail
    assert f"{sys.executable} -m context_kernel kernels install --prefix {prefix}" in check.detail.split(" — run: ")[1]


def test_doctor_says_which_python_our_kernelspecs_start_and_how_to_register_them_for_the_user(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "user"))
    install_kernelspecs(sys.executable, prefix=str(tmp_path))
    [check] = check_kernelspecs()
    assert (check.level, check.subject) == ("OK", "kernelspecs")
    assert check.detail.startswith(f"{len(OURS)} of ours start {sys.executable} (absolute")
    assert check.detail.endswith(f"for a JupyterLab of another environment: {sys.executable} -m context_kernel "
                                 "kernels install --user")
    install_kernelspecs(sys.executable, user=True)
    [check] = check_kernelspecs()
    assert check.level == "OK" and check.detail.endswith("; registered for every Jupyter of this user")


def test_python_kernelspecs_name_the_servers_interpreter_and_every_recorded_environment(tmp_path: Path) -> None:
    from context_kernel.kernels.python_env import kernel_name_for
    from context_kernel.kernels.python_specs import install_python_kernelspecs

    recorded = tmp_path / "data" / "kernels" / "ck-python-0123456789"  # a project environment the server ran
    recorded.mkdir(parents=True)
    spec = {"argv": ["/envs/p/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3.11.2 (p)", "language": "python"}
    (recorded / "kernel.json").write_text(json.dumps(spec))
    (tmp_path / "data" / "kernels" / "ck-bash").mkdir()  # not a python environment's: left alone
    done = install_python_kernelspecs(sys.executable, sys.prefix, tmp_path / "data" / "kernels",
                                      install_prefix=str(tmp_path / "jupyter"))
    ours = kernel_name_for(Path(sys.executable))
    assert [s.name for s in done] == [ours, "ck-python-0123456789"]
    installed = tmp_path / "jupyter" / "share" / "jupyter" / "kernels"
    assert argv_of(installed / ours)[:3] == [sys.executable, "-m", "ipykernel_launcher"]
    assert json.loads((installed / ours / "kernel.json").read_text())["language"] == "python"
    assert json.loads((installed / "ck-python-0123456789" / "kernel.json").read_text()) == spec
    # the registered kernel starts: this interpreter has ipykernel
    probe = subprocess.run([sys.executable, "-c", "import ipykernel_launcher"], capture_output=True, check=False)
    assert probe.returncode == 0

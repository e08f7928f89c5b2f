"""Advice fits how context-kernel was installed: the environments here are laid out as pip, pipx, uv and a
checkout leave them (venvs made by `python -m venv`, the files pipx and uv write), wherever the user's
PIPX_HOME or UV_TOOL_DIR put them. No command names a PyPI package that does not exist."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.pythonenvs import make_venv, site_packages

from context_kernel.setup.installation import find_installation, this_installation

ROOT = Path(__file__).resolve().parents[2]
WHEEL = "/wheels/context_kernel-0.1.0-py3-none-any.whl"
FROM_WHEEL: dict[str, object] = {"url": f"file://{WHEEL}", "archive_info": {}}
REQUIRES = ["mcp>=2.3,<3", "websockets>=14; extra == 'gateway'", "numpy<3,>=2.0; extra == 'semantic'",
            "tokenizers>=0.15; extra == 'semantic'", "context-kernel[semantic]; extra == 'semantic-transformer'",
            "onnxruntime>=1.17; extra == 'semantic-transformer'"]


def installed_package(prefix: Path) -> Path:
    """Where a wheel puts our package in `prefix` (not a checkout: no pyproject.toml above it)."""
    package = site_packages(prefix) / "context_kernel"
    package.mkdir(parents=True)
    return package


def test_pipx_under_its_own_pipx_home_upgrades_and_adds_an_extra_with_pipx_not_pip(tmp_path: Path) -> None:
    # PIPX_HOME=~/tools: no "pipx" in the path; the venv has no pip (pipx keeps it elsewhere).
    prefix = make_venv(tmp_path / "tools" / "venvs" / "context-kernel")
    (prefix / "pipx_metadata.json").write_text(json.dumps({"main_package": {"package_or_url": WHEEL}}))
    found = find_installation(prefix, str(prefix / "bin" / "python"), package_dir=installed_package(prefix),
                              direct_url=FROM_WHEEL, requires=REQUIRES)
    assert (found.how, found.upgrade()) == ("pipx", "pipx upgrade context-kernel")
    assert found.add_extra("gateway") == "pipx inject context-kernel 'websockets>=14'"


def test_a_uv_tool_under_its_own_tool_dir_keeps_its_earlier_extras_when_one_is_added(tmp_path: Path) -> None:
    prefix = make_venv(tmp_path / "my-tools" / "context-kernel")  # UV_TOOL_DIR=~/my-tools
    (prefix / "uv-receipt.toml").write_text(
        f'[tool]\nrequirements = [{{ name = "context-kernel", path = "{WHEEL}" }}, '
        '{ name = "websockets", specifier = ">=14" }]\n')
    found = find_installation(prefix, str(prefix / "bin" / "python"), package_dir=installed_package(prefix),
                              direct_url=FROM_WHEEL, requires=REQUIRES)
    assert (found.how, found.upgrade()) == ("uv tool", "uv tool upgrade context-kernel")
    assert found.add_extra("semantic") == (f"uv tool install --with 'websockets>=14' --with 'numpy<3,>=2.0' "
                                           f"--with 'tokenizers>=0.15' {WHEEL}")


def test_uvx_adds_an_extra_with_with_and_a_lasting_install_names_the_same_wheel(tmp_path: Path) -> None:
    prefix = make_venv(tmp_path / "uv-cache" / "archive-v0" / "x1y2")
    found = find_installation(prefix, str(prefix / "bin" / "python"), package_dir=installed_package(prefix),
                              direct_url=FROM_WHEEL, requires=REQUIRES)
    assert found.add_extra("gateway") == f"uvx --with 'websockets>=14' --from {WHEEL} context-kernel serve"
    assert found.lasting_install() == f"uv tool install {WHEEL}"


def test_a_checkout_names_itself_and_make_setup_when_its_own_venv_runs_it(tmp_path: Path) -> None:
    root = tmp_path / "src" / "context-kernel"
    (root / "server" / "context_kernel").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "context-kernel"\n')
    prefix = make_venv(root / ".venv", with_pip=False)
    python = str(prefix / "bin" / "python")
    editable = {"url": f"file://{root}", "dir_info": {"editable": True}}
    found = find_installation(prefix, python, package_dir=root / "server" / "context_kernel", direct_url=editable)
    assert found.add_extra("gateway") == (f"cd {root} && make setup (every extra), or uv pip --python {python} "
                                          f"install -e '{root}[gateway]'")
    assert (found.how, found.upgrade()) == ("editable install from a source checkout", f"cd {root} && git pull && "
                                            "make setup")


def test_pip_reinstalls_the_wheel_or_git_url_it_came_from_with_the_extra(tmp_path: Path) -> None:
    prefix = tmp_path / "venv"
    python = str(prefix / "bin" / "python")
    make_venv(prefix)
    (site_packages(prefix) / "pip").mkdir()
    (site_packages(prefix) / "pip" / "__init__.py").write_text("")  # pip's files, as ensurepip leaves them
    package = installed_package(prefix)
    wheel = find_installation(prefix, python, package_dir=package, direct_url=FROM_WHEEL, requires=REQUIRES)
    assert (wheel.how, wheel.add_extra("gateway")) == ("pip from a local path",
                                                       f"{python} -m pip install '{WHEEL}[gateway]'")
    git = {"url": "https://git.example/ck.git", "vcs_info": {"vcs": "git", "commit_id": "abc", "requested_revision":
                                                             "main"}}
    from_git = find_installation(prefix, python, package_dir=package, direct_url=git, requires=REQUIRES)
    assert from_git.add_extra("semantic-transformer") == (
        f"{python} -m pip install 'context-kernel[semantic-transformer] @ git+https://git.example/ck.git@main'")
    assert from_git.extra_requirements("semantic-transformer") == ["numpy<3,>=2.0", "tokenizers>=0.15",
                                                                   "onnxruntime>=1.17"]
    assert from_git.upgrade() == f"{python} -m pip install --upgrade --force-reinstall git+https://git.example/ck.git@main"


def test_this_checkout_is_found_as_one() -> None:
    found = this_installation()
    assert found.route == "checkout" and found.checkout == ROOT  # the tests run the package from the checkout
    assert f"'{ROOT}[gateway]'" in found.add_extra("gateway")


def test_no_doc_names_a_pypi_package_that_is_not_published() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "bench").rglob("*.py")),
            *sorted((ROOT / "server").rglob("*.py"))]
    offenders = [str(p.relative_to(ROOT)) for p in docs
                 if re.search(r"(pip|pipx|uv tool) install[^\n`]*'?context-kernel\[", p.read_text(errors="replace"))]
    assert offenders == []

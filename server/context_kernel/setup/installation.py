"""How and from where this copy of context-kernel was installed, and the commands that change it.

context-kernel is not on PyPI, so advice never sends a user to a package index for
`context-kernel[extra]`: it names what the user installed from (a source checkout, a wheel, a git
URL), read from the package's own files, with the tool that made the environment:

    checkout  the package imported from a source tree (editable install, or PYTHONPATH)
    uvx       one of uv's throwaway environments in its cache (archive-v0/…)
    uv tool   `uv tool install`: a `uv-receipt.toml` in the environment (wherever UV_TOOL_DIR put it)
    pipx      `pipx install`: a `pipx_metadata.json` in the environment (wherever PIPX_HOME put it)
    pip       anything else: pip (or `uv pip` where the environment has no pip)

The where comes from `direct_url.json` (PEP 610) of our distribution: a local path (a checkout or
a wheel), a URL, a VCS URL, or nothing (a package index). Environments made by uv and pipx have
no pip: their commands are theirs. Standard library and `packaging` only.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

from packaging.requirements import InvalidRequirement, Requirement

PACKAGE = "context-kernel"
PIPX_METADATA = "pipx_metadata.json"
UV_RECEIPT = "uv-receipt.toml"

Route = Literal["checkout", "uvx", "uv tool", "pipx", "pip"]
HOW: dict[Route, str] = {
    "checkout": "editable install from a source checkout", "uvx": "uvx (uv's cache)", "uv tool": "uv tool",
    "pipx": "pipx", "pip": "pip",
}


def in_uv_cache(prefix: str | Path) -> bool:
    """Whether `prefix` is one of the throwaway environments `uvx` makes in uv's cache (archive-v0/…).

    uv may remove it at any `uv cache clean` or prune: nothing lasting may point into it.
    """
    return re.fullmatch(r"archive-v\d+", Path(prefix).parent.name) is not None


@dataclass(frozen=True)
class Installation:
    route: Route
    prefix: Path
    python: str
    source: str | None
    """What was installed: a checkout or wheel path, a URL, a VCS URL (`git+https://…`); None: an index."""
    checkout: Path | None = None
    requires: tuple[str, ...] = ()
    """Our distribution's Requires-Dist lines (the extras' requirements are among them)."""
    has_pip: bool = True
    tool_withs: tuple[str, ...] = ()
    """uv tool: the requirements added with `--with` before, which a new `uv tool install` must repeat."""

    @property
    def how(self) -> str:
        if self.route == "pip" and self.source is not None:
            return "pip from a git URL" if _is_vcs(self.source) else "pip from a local path" \
                if _is_local(self.source) else "pip from a URL"
        return HOW[self.route]

    @property
    def venv_name(self) -> str:
        """pipx's name for the environment (its directory's name), as `pipx inject` takes it."""
        return self.prefix.name

    def extra_requirements(self, extra: str) -> list[str]:
        """What the extra brings (its requirements without markers; an extra of ours is expanded)."""
        return _extra_requirements(self.requires, extra, set())

    def add_extra(self, extra: str) -> str:
        """The command that adds the extra `extra` to this installation."""
        if self.route == "checkout":
            assert self.checkout is not None
            pip = f"{self._pip()} install -e {shlex.quote(f'{self.checkout}[{extra}]')}"
            if self.prefix == self.checkout / ".venv":
                return f"cd {shlex.quote(str(self.checkout))} && make setup (every extra), or {pip}"
            return pip
        wanted = " ".join(shlex.quote(r) for r in self.extra_requirements(extra)) or shlex.quote(extra)
        if self.route == "pipx":
            return f"pipx inject {shlex.quote(self.venv_name)} {wanted}"
        if self.route == "uv tool":
            withs = " ".join(f"--with {shlex.quote(r)}" for r in [*self.tool_withs, *self.extra_requirements(extra)])
            return f"uv tool install {withs} {shlex.quote(self.source or PACKAGE)}"
        if self.route == "uvx":
            withs = " ".join(f"--with {shlex.quote(r)}" for r in self.extra_requirements(extra))
            return f"uvx {withs} --from {shlex.quote(self.source or PACKAGE)} {PACKAGE} serve"
        return f"{self._pip()} install {shlex.quote(self._with_extra(extra))}"

    def upgrade(self) -> str:
        """The command that upgrades this installation (nothing is looked up: it may be the same version)."""
        if self.route == "checkout":
            assert self.checkout is not None
            where = shlex.quote(str(self.checkout))
            if self.prefix == self.checkout / ".venv":
                return f"cd {where} && git pull && make setup"
            return f"cd {where} && git pull && {self._pip()} install -e {where}"
        if self.route == "uvx":
            # uvx reuses what its cache holds; --refresh (or @latest) makes it look again.
            if self.source:
                return f"uvx --refresh --from {shlex.quote(self.source)} {PACKAGE} serve"
            return f"uvx {PACKAGE}@latest serve"
        if self.route == "uv tool":
            return f"uv tool upgrade {PACKAGE}"
        if self.route == "pipx":
            return f"pipx upgrade {shlex.quote(self.venv_name)}"
        if self.source is not None:
            return f"{self._pip()} install --upgrade --force-reinstall {shlex.quote(self.source)}"
        return f"{self._pip()} install --upgrade {PACKAGE}"

    def lasting_install(self) -> str:
        """A lasting install of what uvx runs from its cache: `uv tool install` of the same source."""
        return f"uv tool install {shlex.quote(self.source or PACKAGE)}"

    def _pip(self) -> str:
        # A venv made by `uv venv` has no pip; uv installs into it from outside.
        return f"{self.python} -m pip" if self.has_pip else f"uv pip --python {self.python}"

    def _with_extra(self, extra: str) -> str:
        if self.source is None:
            return f"{PACKAGE}[{extra}]"
        if _is_local(self.source):
            return f"{self.source}[{extra}]"
        return f"{PACKAGE}[{extra}] @ {self.source}"


def find_installation(prefix: Path | None = None, python: str | None = None, *,
                      package_dir: Path | None = None, direct_url: dict[str, object] | None = None,
                      requires: list[str] | None = None) -> Installation:
    """This installation (the arguments default to the running interpreter and our installed metadata)."""
    prefix = prefix if prefix is not None else Path(sys.prefix)
    python = python or sys.executable
    package_dir = package_dir or Path(__file__).parents[1]  # the package: this module is in setup/
    info = direct_url if direct_url is not None else _direct_url()
    reqs = tuple(requires if requires is not None else _requires())
    has_pip = _has_pip(prefix)
    checkout = _checkout_of(package_dir)
    if checkout is not None:
        return Installation("checkout", prefix, python, str(checkout), checkout, reqs, has_pip)
    source = _source(info)
    if in_uv_cache(prefix):
        return Installation("uvx", prefix, python, source, None, reqs, has_pip)
    parts = prefix.parts
    if (prefix / UV_RECEIPT).is_file() or ("tools" in parts and "uv" in parts):
        return Installation("uv tool", prefix, python, source, None, reqs, False, _receipt_withs(prefix))
    if (prefix / PIPX_METADATA).is_file() or ("pipx" in parts and "venvs" in parts):
        return Installation("pipx", prefix, python, source, None, reqs, False)
    return Installation("pip", prefix, python, source, None, reqs, has_pip)


@cache
def this_installation() -> Installation:
    return find_installation()


def add_extra_command(extra: str) -> str:
    """The command that adds `extra` to the running installation (what an error or doctor tells the user)."""
    return this_installation().add_extra(extra)


def _checkout_of(package_dir: Path) -> Path | None:
    """The source checkout `package_dir` is in (`<root>/server/context_kernel`), or None: installed files."""
    root = package_dir.parent.parent
    if package_dir.parent.name != "server" or not (root / "pyproject.toml").is_file():
        return None
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return root if project.get("name") == PACKAGE else None


def _source(info: dict[str, object]) -> str | None:
    """What direct_url.json says was installed, as an installer takes it back; None: from an index."""
    url = str(info.get("url", ""))
    if not url:
        return None
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict):
        revision = vcs.get("requested_revision")
        return f"{vcs.get('vcs', 'git')}+{url}" + (f"@{revision}" if revision else "")
    if url.startswith("file:"):
        return unquote(urlparse(url).path)
    return url


def _is_vcs(source: str) -> bool:
    return re.match(r"(git|hg|svn|bzr)\+", source) is not None


def _is_local(source: str) -> bool:
    return source.startswith("/")


def _direct_url() -> dict[str, object]:
    try:
        raw = metadata.distribution(PACKAGE).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return {}
    try:
        data = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _requires() -> list[str]:
    try:
        return metadata.distribution(PACKAGE).requires or []
    except metadata.PackageNotFoundError:
        return []


def _has_pip(prefix: Path) -> bool:
    if prefix == Path(sys.prefix):
        import importlib.util

        return importlib.util.find_spec("pip") is not None
    return any(prefix.glob("lib/python3*/*-packages/pip/__init__.py"))


def _extra_requirements(requires: tuple[str, ...], extra: str, seen: set[str]) -> list[str]:
    seen.add(extra)
    found: list[str] = []
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is None or not req.marker.evaluate({"extra": extra}) or req.marker.evaluate({"extra": ""}):
            continue
        if req.name == PACKAGE:  # e.g. semantic-transformer = context-kernel[semantic] + its own
            for inner in sorted(req.extras - seen):
                found += _extra_requirements(requires, inner, seen)
            continue
        req.marker = None
        found.append(str(req))
    return list(dict.fromkeys(found))


def _receipt_withs(prefix: Path) -> tuple[str, ...]:
    """The `--with` requirements of a uv tool's receipt (its first requirement is the tool itself)."""
    try:
        receipt = tomllib.loads((prefix / UV_RECEIPT).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return ()
    withs = []
    for entry in receipt.get("tool", {}).get("requirements", [])[1:]:
        if not isinstance(entry, dict) or "name" not in entry:
            continue
        where = entry.get("path") or entry.get("url") or entry.get("editable")
        withs.append(str(where) if where else f"{entry['name']}{entry.get('specifier', '')}")
    return tuple(withs)


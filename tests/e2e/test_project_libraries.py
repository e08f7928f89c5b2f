"""JavaScript, TypeScript and R cells use the project's own libraries, through the MCP client.

node: `require` and `import` resolve from the project directory up (its node_modules, then its
parents'), as a file in the project would, whatever a cell does with process.chdir. R: the project's
renv library, a project `.Rprofile` that activates renv (as R runs it when started in the project),
and R_LIBS_USER (set in the environment or in the project's `.Renviron`). The packages are written
here by hand (node) or built offline from a source written here (R): no registry is reached.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.conftest import make_settings, text_of

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
                                 ("typescript", "import { x } from 'no-such-pkg'\nx", "no-such-pkg"),
                                 ("typescript", "import y = require('no-such-pkg')\ny", "no-such-pkg")]:
        result = await client.call_tool("ctx_execute", {"language": language, "code": code, "timeout": TIMEOUT_MS})
        first, *rest = text_of(result).splitlines()
        assert result.is_error and first == looked(spec)
        assert all(line.startswith("    at cell") for line in rest), text_of(result)  # no require stack
    relative = await client.call_tool("ctx_execute", {"language": "javascript", "code": "require('./nothing.js')"})
    assert text_of(relative).splitlines()[0] == (
        f"Error: Cannot find module './nothing.js': looked for it relative to the project directory ({node_project})")
    # a package that is there but lacks a dependency: node's own words, which name the package's file
    write_package(node_project / "node_modules", "needs-dep", {"main": "index.js"},
                  {"index.js": "module.exports = require('absent-dep');\n"})
    broken = text_of(await client.call_tool("ctx_execute", {"language": "javascript", "code": "require('needs-dep')"}))
    assert broken.startswith("Error: Cannot find module 'absent-dep'") and "needs-dep/index.js" in broken

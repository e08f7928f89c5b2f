"""docs/configuration.md's table of environment variables (the README points to it) and what the code reads.

The command line's own variables are one table in the code, `cli.environment.ENV_TABLE`, which its readers
take every name and default from: each of its rows must be in the docs' table with the same default, and
every `CONTEXT_KERNEL_*` variable read anywhere in the package, and every variable read in `cli/`, must be
one of its rows.

The rest (HOME, the clients' project variables, what kernels and kernel processes read) is found in the
source with `ast`, over every module of the package (not named files, so the check survives code moving
between modules). A name counts as read when it is a string constant in:

- `env.get("X")`, `env.setdefault("X", ...)`, `env["X"]` (not as an assignment target), `"X" in env`,
  `"X" not in env`, where `env` is any name or attribute called `env`, `_env`, `*_env` or `environ`
  (so `os.environ`, `self._env` and `settings.base_env` count too), and `os.getenv("X")`;
- a call that is handed such an `env` together with a constant name, like `_int(env, "X")`
  (a helper that reads `X` from `env`);
- a module-level tuple, list, set or frozenset whose name ends in `_VARS`, like `PROJECT_VARS`
  (names the code reads in a loop), except the scrub lists below.

Every name so read, and every row of ENV_TABLE, is in the docs' table, and the docs' table names nothing else.
Kernel processes (`kernel_processes/`) are part of the package and their
reads count: they change what the programs a cell runs see (HOME, the locale, Go's cache).

The scrub lists are not reads: they name variables removed from every kernel's environment, whose
values are never looked at. They are checked against docs/tools.md instead, which lists them.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from context_kernel.cli.environment import ENV_TABLE, VARIABLES, EnvVar
from context_kernel.settings import GatewaySettings, Settings

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "context_kernel"
README = ROOT / "docs" / "configuration.md"  # the README links to it: the table outgrew the README
TOOLS_DOC = ROOT / "docs" / "tools.md"
TABLE_MARK = "<!-- env-table -->"
SCRUB_LISTS = frozenset({"INJECTION_VARS", "_JUPYTER_VARS"})
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
UPPER_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
OURS = re.compile(r"CONTEXT_KERNEL_[A-Z0-9_]+")


def _is_env(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and (name in ("env", "_env", "environ") or name.endswith("_env"))


def _constant(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _collection_names(value: ast.expr) -> set[str]:
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("frozenset", "set"):
        value = value.args[0] if value.args else value
    if not isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return set()
    return {c for c in (_constant(e) for e in value.elts) if c is not None}


def _module_level_vars(tree: ast.Module) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue
        targets, value = (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]), stmt.value
        for target in targets:
            if isinstance(target, ast.Name) and target.id.endswith("_VARS") and value is not None:
                found[target.id] = found.get(target.id, set()) | _collection_names(value)
    return found


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "VALUE"`: `env.get(DATA_DIR_VAR)` reads the variable the constant names."""
    found = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = stmt.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and UPPER_NAME.fullmatch(value.value):
                found[stmt.targets[0].id] = value.value
    return found


def names_read(source: str) -> set[str]:
    """Every environment variable name a module's source reads (see the module docstring)."""
    tree = ast.parse(source)
    strings = _string_constants(tree)

    def _constant(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return strings.get(node.id)
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            first = _constant(node.args[0]) if node.args else None
            env_method = isinstance(func, ast.Attribute) and func.attr in ("get", "setdefault") and _is_env(func.value)
            if env_method or (isinstance(func, ast.Attribute) and func.attr == "getenv"):
                names.update([first] if first else [])
            elif any(_is_env(arg) for arg in [*node.args, *(k.value for k in node.keywords)]):
                names.update(c for c in map(_constant, node.args) if c and UPPER_NAME.fullmatch(c))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_env(node.value):
            key = _constant(node.slice)
            names.update([key] if key else [])
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            key = _constant(node.left)
            if key and _is_env(node.comparators[0]):
                names.add(key)
    for collection, members in _module_level_vars(tree).items():
        if collection not in SCRUB_LISTS:
            names |= members
    return names


def package_reads() -> set[str]:
    return set().union(*(names_read(p.read_text()) for p in sorted(PACKAGE.rglob("*.py"))))


def our_constants() -> set[str]:
    """Every string constant of the package that is a `CONTEXT_KERNEL_*` name, however the code reads it."""
    return {node.value for path in PACKAGE.rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and OURS.fullmatch(node.value)}


def scrubbed_names() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for collection, members in _module_level_vars(ast.parse(path.read_text())).items():
            if collection in SCRUB_LISTS:
                found |= members
    return found


def readme_table_defaults() -> dict[str, str]:
    """Each name in the first column of the table that follows the marker, with its row's last cell (the
    default), backticks removed. A cell may name several: "`A`, `B` | … | `60`, `10`" gives A 60 and B 10;
    a default without as many parts is every name's."""
    text = README.read_text()
    assert TABLE_MARK in text, f"docs/configuration.md has no {TABLE_MARK} marker before the environment table"
    rows = text.split(TABLE_MARK, 1)[1].lstrip("\n").splitlines()
    found: dict[str, str] = {}
    for row in rows:
        if not row.startswith("|"):
            break
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        names = [n for n in re.findall(r"`([^`]+)`", cells[0]) if NAME.fullmatch(n)]
        default = cells[-1].replace("`", "")
        parts = default.split(", ")
        found.update(zip(names, parts if len(parts) == len(names) else [default] * len(names), strict=True))
    return found


def readme_table_names() -> set[str]:
    return set(readme_table_defaults())


def says(documented: str, row: EnvVar) -> bool:
    """The docs' default begins with the table's (`104857600` in "104857600 (100 MB)"), as a whole word."""
    return re.match(re.escape(row.documented_default) + r"(?![\w.])", documented) is not None


def test_the_scan_sees_every_way_the_code_reads_a_variable() -> None:
    source = (
        "import os\n"
        "HOME_VAR = 'NAMED_BY_A_CONSTANT'\n"
        "PROJECT_VARS = ('A_DIR', 'B_DIR')\n"
        "INJECTION_VARS: frozenset[str] = frozenset({'SCRUBBED'})\n"
        "OTHER: tuple[str, ...] = ('NOT_A_VAR',)\n"
        "def f(env, self, settings):\n"
        "    env.get('GET'); env['ITEM']; 'IN' in env; 'NOT_IN' not in self._env\n"
        "    os.environ.get('OS_GET'); os.getenv('GETENV'); settings.base_env.setdefault('SETDEFAULT', '1')\n"
        "    _int(env, 'HELPER'); env['WRITTEN'] = '1'; env.get(name); print('LOUD')\n"
        "    env.get(HOME_VAR)\n"
    )
    assert names_read(source) == {
        "NAMED_BY_A_CONSTANT", "A_DIR", "B_DIR", "GET", "ITEM", "IN", "NOT_IN", "OS_GET", "GETENV", "SETDEFAULT",
        "HELPER",
    }


def test_every_variable_of_the_cli_table_is_in_the_docs_with_its_default() -> None:
    documented = readme_table_defaults()
    assert len(ENV_TABLE) >= 30 and len(VARIABLES) == len(ENV_TABLE)  # the table at all, each name once
    missing = sorted(row.name for row in ENV_TABLE if row.name not in documented)
    wrong = {row.name: f"the code says {row.documented_default!r}, the docs {documented[row.name]!r}"
             for row in ENV_TABLE if row.name in documented and not says(documented[row.name], row)}
    assert {"not in the docs' table": missing, "another default in the docs": wrong} == {
        "not in the docs' table": [], "another default in the docs": {}}


def test_every_context_kernel_variable_read_in_the_package_and_every_cli_read_is_in_the_cli_table() -> None:
    ours = {n for n in package_reads() | our_constants() if n.startswith("CONTEXT_KERNEL_")}
    cli_reads = set().union(*(names_read(p.read_text()) for p in sorted((PACKAGE / "cli").rglob("*.py"))))
    assert {"CONTEXT_KERNEL_HOME", "CONTEXT_KERNEL_HOOK_LOG", "CTX_FETCH_STRICT"} <= ours | cli_reads  # scanned
    assert sorted((ours | cli_reads) - set(VARIABLES)) == []


def test_every_field_the_cli_table_names_is_a_settings_field() -> None:
    known = {f.name for f in dataclasses.fields(Settings)}
    known |= {f"gateway.{f.name}" for f in dataclasses.fields(GatewaySettings)}
    assert sorted(row.field for row in ENV_TABLE if row.field is not None and row.field not in known) == []


def test_every_variable_the_package_reads_is_in_the_readme_table_and_nothing_else() -> None:
    read, documented = package_reads() | set(VARIABLES), readme_table_names()
    assert "HOME" in read and "CONTEXT_KERNEL_HOME" in read  # the scan found the package's reads at all
    missing, stale = sorted(read - documented), sorted(documented - read)
    assert {"read but not in the README's table": missing, "in the table but read nowhere": stale} == {
        "read but not in the README's table": [], "in the table but read nowhere": []}


def test_every_variable_scrubbed_from_kernels_is_listed_in_the_tools_doc() -> None:
    scrubbed = scrubbed_names()
    assert "NODE_OPTIONS" in scrubbed and "JPY_PARENT_PID" in scrubbed
    listed = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", TOOLS_DOC.read_text()))
    assert sorted(scrubbed - listed) == []

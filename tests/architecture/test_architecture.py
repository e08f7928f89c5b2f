"""Architecture rules that keep the MCP layer thin and the handshake fast."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "context_kernel"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_never_imports_mcp() -> None:
    offenders = [
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] not in ("tools", "serving", "cli")
        and any(name == "mcp" or name.startswith("mcp.") for name in _imports(p))
    ]
    assert offenders == []


def test_tool_layer_uses_no_sql_kernels_or_http_libraries() -> None:
    banned = ("sqlalchemy", "sqlite3", "jupyter_client", "httpx", "zmq")
    offenders = [
        (str(p.relative_to(PACKAGE)), name) for p in (PACKAGE / "tools").rglob("*.py")
        for name in _imports(p) if name.split(".")[0] in banned
    ]
    assert offenders == []


def test_only_the_cli_reads_the_environment() -> None:
    offenders = [
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
        # kernel processes are separate programs, not the server
        if p.relative_to(PACKAGE).parts[0] not in ("cli", "kernel_processes")
        and ("os.environ" in p.read_text() or "os.getenv" in p.read_text())
    ]
    assert offenders == []


def test_building_the_server_imports_no_kernel_store_or_notebook_machinery() -> None:
    # The handshake path: what `serve` imports before answering `initialize`. The routing guide is
    # imported when a client reads the prompt (~3 ms the handshake does not wait for).
    code = (
        "import sys\n"
        "from context_kernel.tools.server import create_server\n"
        "heavy = [m for m in ('jupyter_client', 'sqlalchemy', 'nbformat', 'zmq', 'ipykernel',\n"
        "                     'context_kernel.hooks.guide', 'context_kernel.hooks.snapshot') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""


def test_only_the_kernels_package_talks_to_jupyter_client() -> None:
    offenders = [
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] != "kernels"
        and any(name.split(".")[0] == "jupyter_client" for name in _imports(p))
    ]
    assert offenders == []


def test_only_the_store_package_talks_sql() -> None:
    offenders = [
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] != "store"
        and any(name.split(".")[0] in ("sqlalchemy", "sqlite3") for name in _imports(p))
    ]
    assert offenders == []


# --- module-level import graph ------------------------------------------------------------------

def _module_name(path: Path) -> str:
    parts = ("context_kernel", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _top_level_imports(path: Path, *, deferred: bool = False) -> set[str]:
    """Absolute names a module imports when it is imported: not under TYPE_CHECKING, and not inside
    functions unless `deferred` (a deferred import still makes two modules depend on each other)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names.add(target)
                # `from . import x` imports the submodule x
                names.update(f"{target}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If) and not _is_type_checking(node):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
            elif deferred and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With,
                                                ast.AsyncWith, ast.For, ast.While)):
                visit(node.body)

    visit(ast.parse(path.read_text(), filename=str(path)).body)
    return names


def _graph(*, deferred: bool = False) -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {n for n in _top_level_imports(path, deferred=deferred) if n in modules and n != name}
            for name, path in modules.items()}


def test_no_import_circle_among_our_modules() -> None:
    graph = _graph(deferred=True)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            # A submodule importing its own package's __init__ is how Python imports it, not a circle.
            if node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


# The modules the hooks import on every tool call of the agent, and the neutral ones beside them:
# the standard library and each other only (the hook path's budget has no room for more).
STDLIB_ONLY = (
    "context_kernel.clients", "context_kernel.locations", "context_kernel.errors", "context_kernel.metering",
    "context_kernel.lifeline", "context_kernel.kernels.file_content", "context_kernel.kernels.supervisor",
    "context_kernel.hooks.hook_cli", "context_kernel.hooks.model", "context_kernel.hooks.routing",
    "context_kernel.hooks.liveness", "context_kernel.hooks.spool", "context_kernel.hooks.nudges",
    "context_kernel.hooks.extract", "context_kernel.hooks.adapters", "context_kernel.hooks.compaction",
    "context_kernel.security.deny",
    "context_kernel.security.redact",
)


def test_the_stdlib_only_modules_import_only_the_standard_library_and_each_other() -> None:
    graph = _graph()
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    reached: set[str] = set()
    pending = list(STDLIB_ONLY)
    while pending:  # everything they pull in at import time, transitively
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        pending.extend(graph[name])
    outside = sorted({(name, imp) for name in reached for imp in _top_level_imports(modules[name])
                      if imp.split(".")[0] not in sys.stdlib_module_names and imp.split(".")[0] != "context_kernel"})
    assert outside == []
    assert {"context_kernel.app", "context_kernel.store.db"}.isdisjoint(reached)


APP_SERVICES = {"settings", "execution", "knowledge", "batch", "fetch", "export", "records"}


def test_the_tool_layer_never_reaches_the_database() -> None:
    # Tools get the App's services (`app.<service>`) and nothing under them: no store module, no
    # database handle, no repository, no engine.
    offenders = []
    for path in (PACKAGE / "tools").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "app" \
                    and node.attr not in APP_SERVICES:
                offenders.append((path.name, f"app.{node.attr}", node.lineno))
            if isinstance(node, ast.Attribute) and node.attr in ("db", "_db", "engine", "_resources", "run_sync"):
                offenders.append((path.name, node.attr, node.lineno))
            if isinstance(node, ast.ImportFrom) and "store" in (node.module or "").split("."):
                offenders.append((path.name, node.module or "", node.lineno))
    assert offenders == []


def test_the_app_hands_out_services_not_the_store() -> None:
    import dataclasses

    from context_kernel.app import App

    public = {f.name for f in dataclasses.fields(App) if not f.name.startswith("_")}
    assert public == APP_SERVICES


def test_the_shell_model_imports_only_the_standard_library_and_itself() -> None:
    # The hooks read command lines through it on every tool call of an agent (and they are stdlib-only).
    offenders = []
    for path in (PACKAGE / "shell").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                if node.level > 1:  # `from ..x import y` leaves the package
                    offenders.append((path.name, "." * node.level + (node.module or "")))
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [(path.name, n) for n in names if n.split(".")[0] not in sys.stdlib_module_names
                          and n != "context_kernel.shell" and not n.startswith("context_kernel.shell.")]
    assert offenders == []


def test_the_modules_the_app_imports_off_the_loop_are_those_it_builds_from() -> None:
    # app._build_ground and app._build import their modules only after _import has imported them on a
    # worker thread (so a prewarm does not stall the handshake): a module added to one list and not the
    # other would be imported on the event loop again. The ground floor (what a search needs) imports its own.
    from context_kernel import app

    tree = ast.parse((PACKAGE / "app.py").read_text())

    def imported_by(name: str) -> set[str]:
        fn = next(n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef) and n.name == name)
        return {n.module for n in ast.walk(fn) if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}

    ground, rest = imported_by("_build_ground"), imported_by("_build")
    assert ground and ground <= set(app._GROUND_MODULES)
    assert rest and rest <= set(app._SERVICE_MODULES)

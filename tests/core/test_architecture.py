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
        if p.relative_to(PACKAGE).parts[0] not in ("tools", "cli.py")
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
        if p.name != "cli.py" and p.relative_to(PACKAGE).parts[0] != "kernel_processes"  # kernel processes are not the server
        and ("os.environ" in p.read_text() or "os.getenv" in p.read_text())
    ]
    assert offenders == []


def test_building_the_server_imports_no_kernel_store_or_notebook_machinery() -> None:
    # The handshake path: what `serve` imports before answering `initialize`.
    code = (
        "import sys\n"
        "from context_kernel.tools.server import create_server\n"
        "heavy = [m for m in ('jupyter_client', 'sqlalchemy', 'nbformat', 'zmq', 'ipykernel') if m in sys.modules]\n"
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

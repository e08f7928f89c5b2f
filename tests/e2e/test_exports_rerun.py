"""An export re-runs where a reviewer opens it: JupyterLab and `nbconvert --execute` start each notebook's kernel
in the notebook's own folder, and the notebook's first cell moves it to the folder the session ran in, so the
cells' relative paths reach the same files (they failed with `No such file or directory` before)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


def project_dir_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook's cell that moves its kernel to the session's folder."""
    return next(c for c in nb.cells if c.get("id") == "project-dir")


def nbconvert(notebook: Path) -> nbformat.NotebookNode:
    """`jupyter nbconvert --execute` as a reviewer runs it, from the export's folder; the executed notebook."""
    out = notebook.with_name(notebook.stem + ".executed.ipynb")
    done = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", notebook.name,
                           "--output", out.name], cwd=notebook.parent, capture_output=True, text=True, timeout=180,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return nbformat.read(out, as_version=4)


async def test_nbconvert_from_the_export_folder_reproduces_every_cell(client: Client, project: Path) -> None:
    (project / "data").mkdir()
    (project / "data" / "sales.csv").write_text("region,amount\nnorth,120\nsouth,80\nnorth,135\n")
    await client.call_tool("ctx_execute", {"language": "python", "code": (
        "import csv\nrows = list(csv.DictReader(open('data/sales.csv')))\n"
        "print(sum(int(r['amount']) for r in rows if r['region'] == 'north'))")})
    await client.call_tool("ctx_execute", {"language": "shell", "code": "grep -c north data/sales.csv"})
    done = text_of(await client.call_tool("ctx_export", {"path": "review"}))
    index = Path(done.split(" to ", 1)[1].split(";")[0])
    assert index.parent == project / "review"  # not the project folder: relative paths break without the cell
    for kernel, expected in (("python3", "255\n"), ("ck-bash", "2\n")):
        notebook = index.with_name(f"{index.stem}-{kernel}.ipynb")
        setup = project_dir_cell(nbformat.read(notebook, as_version=4))
        assert setup.metadata.context_kernel.role == "setup" and str(project) in setup.source
        ran = await anyio.to_thread.run_sync(nbconvert, notebook)
        assert project_dir_cell(ran).outputs == []  # the kernel moved to the session's folder, silently
        (cell,) = session_cells(ran)
        assert "".join(o.get("text", "") for o in cell.outputs) == expected, cell.outputs


async def test_the_first_cell_says_so_when_the_sessions_folder_is_not_here(client: Client, project: Path,
                                                                          tmp_path: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('hello')"})
    done = text_of(await client.call_tool("ctx_export", {"path": "review"}))
    notebook = Path(done.split(" to ", 1)[1].split(";")[0])
    moved = tmp_path / "elsewhere"  # the reviewer's machine: the export without the project
    moved.mkdir()
    copy = moved / notebook.name
    text = await anyio.Path(notebook).read_text()
    await anyio.Path(copy).write_text(text.replace(str(project), str(tmp_path / "gone")))
    ran = await anyio.to_thread.run_sync(nbconvert, copy)
    said = "".join(o.get("text", "") for o in project_dir_cell(ran).outputs)
    assert "the session ran in" in said and "which is not here" in said and str(moved) in said
    assert "".join(o.get("text", "") for o in session_cells(ran)[0].outputs) == "hello\n"


async def test_r_and_javascript_notebooks_move_to_the_sessions_folder_too(client: Client, project: Path) -> None:
    (project / "data").mkdir()
    (project / "data" / "sales.csv").write_text("region,amount\nnorth,120\nsouth,80\n")
    await client.call_tool("ctx_execute", {"language": "r", "code": "cat(nrow(read.csv('data/sales.csv')), '\\n')"})
    await client.call_tool("ctx_execute", {"language": "javascript", "code": (
        "console.log(require('fs').readFileSync('data/sales.csv', 'utf8').trim().split('\\n').length)")})
    done = text_of(await client.call_tool("ctx_export", {"path": "review"}))
    index = Path(done.split(" to ", 1)[1].split(";")[0])
    for kernel, expected in (("ir", "2 \n"), ("ck-javascript", "3\n")):
        ran = await anyio.to_thread.run_sync(nbconvert, index.with_name(f"{index.stem}-{kernel}.ipynb"))
        assert project_dir_cell(ran).outputs == [], (kernel, project_dir_cell(ran).outputs)
        assert "".join(o.get("text", "") for o in session_cells(ran)[0].outputs) == expected, kernel

"""An exported notebook runs in a Jupyter of another environment, one that cannot import context_kernel.

A person opens an export in their own JupyterLab, installed elsewhere: its Jupyter replaces a
kernelspec's bare `python` with its own interpreter, so our kernels must name theirs. The session
runs through the MCP client (shell and JavaScript, state kept between cells, a file cell), is
exported with ctx_export, the kernelspecs are registered for the user with `context-kernel kernels
install --user`, and nbclient in another venv (nbclient and its dependencies only, no PYTHONPATH)
runs each per-kernel notebook: every cell gives the recorded output.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests import foreign_venv
from tests.helpers import text_of

from context_kernel.notebooks.output_comparison import comparable

pytestmark = [pytest.mark.anyio, pytest.mark.kernels, pytest.mark.timeout(300)]

SESSION = [
    ("ctx_execute", {"language": "shell", "code": "regions=(north south east)\necho \"${#regions[@]} regions\""}),
    ("ctx_execute", {"language": "shell", "code": "echo \"last: ${regions[-1]}\"; wc -l < sales.csv"}),
    ("ctx_execute", {"language": "javascript", "code": "const amounts = [120, 90, 75]"}),
    ("ctx_execute", {"language": "javascript", "code": "console.log('total', amounts.reduce((a, b) => a + b))"}),
    ("ctx_execute_file", {"path": "sales.csv", "language": "javascript",
                          "code": "console.log(FILE_CONTENT.trim().split('\\n').length - 1, 'rows')"}),
]

# Runs in the other venv: execute one notebook with nbclient, in the project directory, and write it back.
RUN_NOTEBOOK = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=60, startup_timeout=60, resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, sys.argv[3])
"""


async def test_an_exported_shell_and_javascript_session_runs_in_jupyter_from_another_venv(
        client: Client, project: Path, tmp_path: Path) -> None:
    (project / "sales.csv").write_text("region,amount\nnorth,120\nsouth,90\neast,75\n")
    for tool, args in SESSION:
        result = await client.call_tool(tool, args)
        assert not result.is_error, text_of(result)
    text = text_of(await client.call_tool("ctx_export", {"path": "exports"}))
    index = Path(text.split(" to ", 1)[1].split(";")[0])
    notebooks = {kernel: index.with_name(f"{index.stem}-{kernel}.ipynb") for kernel in ("ck-bash", "ck-javascript")}

    python = foreign_venv.build(tmp_path / "elsewhere")
    jupyter = {"JUPYTER_DATA_DIR": str(tmp_path / "jupyter-user"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    elsewhere = foreign_venv.environment(**jupyter)
    with anyio.fail_after(60):
        cannot = await anyio.run_process([python, "-c", "import context_kernel"], env=elsewhere, check=False)
    assert b"No module named 'context_kernel'" in cannot.stderr  # the other venv really lacks it

    with anyio.fail_after(60):
        registered = await anyio.run_process([sys.executable, "-m", "context_kernel", "kernels", "install", "--user"],
                                             env={**os.environ, **jupyter}, check=False)
    assert registered.returncode == 0, registered.stderr.decode()
    assert b"ck-bash" in registered.stdout and b"ck-javascript" in registered.stdout

    for kernel, path in notebooks.items():
        ran = tmp_path / f"ran-{kernel}.ipynb"
        with anyio.fail_after(180):
            done = await anyio.run_process([python, "-c", RUN_NOTEBOOK, str(path), str(project), str(ran)],
                                           env=elsewhere, check=False)
        assert done.returncode == 0, (kernel, done.stderr.decode()[-2000:])
        recorded, replayed = (nbformat.read(p, as_version=4) for p in (path, ran))
        assert replayed.metadata.kernelspec.name == kernel
        pairs = [(comparable(a.outputs), comparable(b.outputs)) for a, b in zip(recorded.cells, replayed.cells,
                                                                                strict=True)]
        assert all(before == after for before, after in pairs), (kernel, pairs)
        assert any(before for before, _ in pairs), kernel  # something was printed and compared

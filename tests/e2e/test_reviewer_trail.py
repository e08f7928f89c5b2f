"""Issue 27's whole trail, as a reviewer follows it: a short analysis through the MCP client (a CSV read in python
and in R, a shell grep over a log, a page fetched from 127.0.0.1, a search, a saved figure). Every reply cites its
execution; the export gives each cell its id, its inputs with their hashes and the files it wrote, and puts the
fetch and the search between the cells in order; `nbconvert --execute`, run from the export folder by a venv
that has neither context_kernel, ipykernel nor pandas, with only the recorded kernels registered, reproduces
every cell; and after one input changes, replay names that file on exactly the cells that diverge."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

from context_kernel.kernels.files import kernel_files
from context_kernel.kernels.install import install_ir_kernelspec, install_kernelspecs
from context_kernel.kernels.python_specs import install_python_kernelspecs
from context_kernel.notebooks.output_comparison import comparable
from context_kernel.notebooks.replay import replay
from context_kernel.settings import Settings
from context_kernel.tools.context import EXECUTION_META_KEY

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
REPO = Path(__file__).resolve().parents[2]
FRESH_VENV = REPO / ".venv-gateway"  # nbconvert and jupyter_client, no ipykernel, pandas or context_kernel
CSV = "species,body_mass_g\nAdelie,3750\nGentoo,6300\nChinstrap,3800\n"
LOG = "INFO start\nERROR disk full\nINFO retry\nERROR disk full\n"
PAGE = "<html><head><title>Field notes</title></head><body><h1>Field notes</h1><p>Gentoo penguins are the " \
       "heaviest of the three species on the islands.</p></body></html>"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "notes.html").write_text(PAGE)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def fresh_jupyter(tmp_path: Path, settings: Settings) -> dict[str, str]:
    """The environment of a reviewer's venv that knows only the recorded kernels (registered by what
    `context-kernel kernels install` runs) and no Jupyter data of this user."""
    prefix = tmp_path / "registered"
    install_kernelspecs(sys.executable, prefix=str(prefix))
    install_python_kernelspecs(sys.executable, sys.prefix, settings.kernels_dir, install_prefix=str(prefix))
    install_ir_kernelspec(kernel_files(), prefix=str(prefix))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV"))}
    return env | {"JUPYTER_PATH": str(prefix / "share" / "jupyter"), "JUPYTER_DATA_DIR": str(tmp_path / "jdata"),
                  "JUPYTER_CONFIG_DIR": str(tmp_path / "jconfig"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "jrun")}


def nbconvert(notebook: Path, env: dict[str, str]) -> Any:
    out = notebook.with_name(notebook.stem + ".run.ipynb")
    done = subprocess.run([str(FRESH_VENV / "bin" / "python"), "-m", "nbconvert", "--to", "notebook", "--execute",
                           notebook.name, "--output", out.name], cwd=notebook.parent, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return nbformat.read(out, as_version=4)


def texts(cell: Any) -> str:
    """What a reader compares of a cell's outputs (replay's own comparison: the export's notes left out)."""
    return comparable(cell.get("outputs", []))


async def test_a_reviewer_traces_every_number_and_reruns_the_export_elsewhere(
        client: Client, project: Path, settings: Settings, site: str, tmp_path: Path) -> None:
    if not (FRESH_VENV / "bin" / "python").exists():
        pytest.fail(f"{FRESH_VENV.name} is missing: `make setup` builds it (nbconvert without ipykernel)")
    (project / "data").mkdir()
    (project / "data" / "penguins.csv").write_text(CSV)
    (project / "logs").mkdir()
    (project / "logs" / "app.log").write_text(LOG)
    cited: list[int] = []

    async def run(language: str, code: str) -> str:
        result = await client.call_tool("ctx_execute", {"language": language, "code": code})
        assert not result.is_error, result.content
        raw = "".join(getattr(b, "text", "") for b in result.content)
        (execution,) = (result.meta or {})[EXECUTION_META_KEY]
        assert raw.endswith(f"[#{execution}]")  # every reply carries its id
        cited.append(execution)
        return text_of(result)

    assert await run("python", "import pandas as pd\ndf = pd.read_csv('data/penguins.csv')\n"
                               "print(df.body_mass_g.max())") == "6300"
    assert (await run("r", "p <- read.csv('data/penguins.csv')\ncat(max(p$body_mass_g), '\\n')")).strip() == "6300"
    assert await run("shell", "grep -c ERROR logs/app.log") == "2"
    fetched = await client.call_tool("ctx_fetch_and_index", {"url": f"{site}/notes.html", "source": "field notes"})
    assert not fetched.is_error, fetched.content
    found = text_of(await client.call_tool("ctx_search", {"queries": ["heaviest species"]}))
    assert "Gentoo penguins are the heaviest" in found
    saved = await run("python", "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                                "plt.bar(df.species, df.body_mass_g)\nplt.savefig('mass.png')")
    assert saved.startswith("[image written: mass.png (")

    done = text_of(await client.call_tool("ctx_export", {"path": "review"}))
    index_path = Path(done.split(" to ", 1)[1].split(";")[0])
    index = nbformat.read(index_path, as_version=4)
    order = [c.metadata.get("context_kernel", {}).get("tool") or c.source.split(" — ")[0]
             for c in session_cells(index)[1:]]
    assert order == ["**Step 1**", "**Step 2**", "**Step 3**", "ctx_fetch_and_index", "ctx_search", "**Step 4**"]
    digest = "sha256:" + hashlib.sha256(CSV.encode()).hexdigest()
    log_digest = "sha256:" + hashlib.sha256(LOG.encode()).hexdigest()
    cells: dict[int, Any] = {}
    notebooks = [index_path.with_name(name) for name in index.metadata.context_kernel.notebooks]
    for path in notebooks:
        for cell in session_cells(nbformat.read(path, as_version=4)):
            meta = cell.metadata.context_kernel
            assert cell.id == f"exec-{meta.execution_id}"
            cells[meta.execution_id] = meta
    assert sorted(cells) == sorted(cited)
    python_read, r_read, grep, figure = (cells[i] for i in cited)
    csv_input = [{"path": "data/penguins.csv", "size": len(CSV), "sha256": digest}]
    assert python_read["inputs"] == csv_input and r_read["inputs"] == csv_input
    assert grep["inputs"] == [{"path": "logs/app.log", "size": len(LOG), "sha256": log_digest}]
    table = {f["path"]: f["read_by"] for f in next(c for c in index.cells if c.get("id") == "inputs")
             .metadata.context_kernel.inputs}
    assert table == {"data/penguins.csv": cited[:2], "logs/app.log": [cited[2]]}  # the inputs table at the top
    assert [w["path"] for w in figure["written"]] == ["mass.png"] and figure["written"][0]["sha256"].startswith(
        "sha256:")

    env = await anyio.to_thread.run_sync(fresh_jupyter, tmp_path, settings)
    known = await anyio.run_process([str(FRESH_VENV / "bin" / "python"), "-c", "from jupyter_client.kernelspec "
                                     "import KernelSpecManager as K; import json; "
                                     "print(json.dumps(sorted(K().find_kernel_specs())))"], env=env)
    assert "python3" not in json.loads(known.stdout)  # the reviewer's venv has no python kernel of its own
    for path in notebooks:
        recorded = {c.id: texts(c) for c in session_cells(nbformat.read(path, as_version=4))}
        ran = await anyio.to_thread.run_sync(nbconvert, path, env)
        assert {c.id: texts(c) for c in session_cells(ran)} == recorded, path.name
        assert all(recorded.values()) or path.name.endswith("python3.ipynb"), recorded  # outputs, not nothing

    (project / "data" / "penguins.csv").write_text(CSV.replace("6300", "6400"))
    report = replay(index_path, timeout_s=120, cwd=project)
    diverged = {c.execution_id: c.file_changed for c in report.cells if c.status == "differ"}
    assert diverged == {cited[0]: "data/penguins.csv (changed since the session)",
                        cited[1]: "data/penguins.csv (changed since the session)"}, report.render()
    assert all(c.status == "match" for c in report.cells if c.execution_id not in diverged), report.render()

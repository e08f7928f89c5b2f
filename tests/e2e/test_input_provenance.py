"""A reviewer traces a number to the files its cell read: each python cell records the files it opened (path,
size, sha256), the export names them per cell, and replay names the input that changed on a diverging cell."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

from context_kernel.notebooks.replay import replay

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
CSV = "species,body_mass_g\nAdelie,3750\nGentoo,6300\nChinstrap,3800\n"


async def cells_of(client: Client) -> list[dict[str, Any]]:
    done = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    path = Path(done.split(" to ", 1)[1].split(";")[0])
    cells = session_cells(nbformat.read(path, as_version=4))
    return [dict(c.metadata.context_kernel) | {"outputs": c.outputs} for c in cells
            if c.cell_type == "code"] + [{"notebook": path}]


async def test_each_cell_records_what_it_read_and_wrote_and_replay_names_the_changed_input(
        client: Client, project: Path) -> None:
    (project / "data").mkdir()
    (project / "data" / "penguins.csv").write_text(CSV)
    digest = "sha256:" + hashlib.sha256(CSV.encode()).hexdigest()
    run = {"language": "python"}
    heaviest = await client.call_tool("ctx_execute", run | {"code": (
        "import pandas as pd\ndf = pd.read_csv('data/penguins.csv')\nprint(df.body_mass_g.max())")})
    assert text_of(heaviest) == "6300"
    plotted = text_of(await client.call_tool("ctx_execute", run | {"code": (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "plt.bar(df.species, df.body_mass_g)\nplt.savefig('mass.png')")}))
    # the figure saved to a file is named in the reply (it printed nothing else)
    assert plotted.startswith("[image written: mass.png (") and plotted.endswith("; recorded in the session notebook]")
    await client.call_tool("ctx_execute", run | {"code": "print(6 * 7)"})
    failed = await client.call_tool("ctx_execute", run | {"code": "open('data/penguins.csv').read()\n1/0"})
    assert failed.is_error
    read, plot, plain, error, end = await cells_of(client)
    assert read["inputs"] == [{"path": "data/penguins.csv", "size": len(CSV), "sha256": digest}], read
    assert "written" not in read
    assert [w["path"] for w in plot["written"]] == ["mass.png"] and "inputs" not in plot, plot
    assert plot["placeholders"] == ["image/png"]  # recorded in the notebook, only named to the agent
    saved = [o for o in plot["outputs"] if o.get("metadata", {}).get("context_kernel", {}).get("written_file")]
    assert len(saved) == 1 and saved[0]["data"]["image/png"] and "mass.png" in saved[0]["data"]["text/plain"]
    assert "inputs" not in plain and "written" not in plain
    # ipykernel evaluates no user expression after an error: the files came from one silent request
    assert error["inputs"] == read["inputs"], error

    (project / "data" / "penguins.csv").write_text(CSV.replace("6300", "6400"))
    report = replay(end["notebook"], timeout_s=120, cwd=project)
    by_cell = {c.index: c for c in report.cells}
    assert by_cell[1].status == "differ" and "data/penguins.csv (changed since the session)" in (
        by_cell[1].file_changed or ""), report.render()
    assert by_cell[3].status == "match" and by_cell[3].file_changed is None
    # the recorded figure is the server's record, not the cell's output: replay does not miss it
    assert "image 1" not in report.render()


async def test_a_shell_cell_records_the_files_its_command_line_names(client: Client, project: Path) -> None:
    (project / "data").mkdir()
    (project / "data" / "penguins.csv").write_text(CSV)
    run = {"language": "shell"}
    counted = await client.call_tool("ctx_execute", run | {"code": "cd data && grep -c Gentoo penguins.csv"})
    assert text_of(counted) == "1"
    await client.call_tool("ctx_execute", run | {"code": "sort penguins.csv > sorted.csv"})  # the shell is in data/
    await client.call_tool("ctx_execute", run | {"code": "echo plain"})
    grep, sort, plain, end = await cells_of(client)
    digest = "sha256:" + hashlib.sha256(CSV.encode()).hexdigest()
    assert grep["inputs"] == [{"path": "data/penguins.csv", "size": len(CSV), "sha256": digest}], grep
    assert [f["path"] for f in sort["inputs"]] == ["data/penguins.csv"]
    assert [f["path"] for f in sort["written"]] == ["data/sorted.csv"]
    assert "inputs" not in plain and "written" not in plain
    (project / "data" / "penguins.csv").write_text(CSV.replace("Gentoo", "Macaroni"))
    report = replay(end["notebook"], timeout_s=120, cwd=project)
    changed = {c.index: (c.status, c.file_changed) for c in report.cells}
    assert changed[1] == ("differ", "data/penguins.csv (changed since the session)"), report.render()
    assert changed[3] == ("match", None)


async def test_an_r_cell_records_what_it_read_and_wrote_and_replay_names_the_changed_input(
        client: Client, project: Path) -> None:
    (project / "data").mkdir()
    (project / "data" / "penguins.csv").write_text(CSV)
    run = {"language": "r"}
    heaviest = await client.call_tool("ctx_execute", run | {"code": (
        "p <- read.csv('data/penguins.csv')\ncat(max(p$body_mass_g), '\\n')")})
    assert text_of(heaviest).strip() == "6300"
    saved = text_of(await client.call_tool("ctx_execute", run | {"code": (
        "write.csv(p[order(p$body_mass_g), ], 'sorted.csv', row.names = FALSE)\n"
        "png('mass.png'); barplot(p$body_mass_g); invisible(dev.off())")}))
    assert "[image written: mass.png (" in saved, saved  # named to the agent, recorded in the notebook
    await client.call_tool("ctx_execute", run | {"code": "plot(1:3)\ncat(6 * 7, '\\n')"})  # IRkernel's own PNG
    read, written, plain, end = await cells_of(client)
    digest = "sha256:" + hashlib.sha256(CSV.encode()).hexdigest()
    assert read["inputs"] == [{"path": "data/penguins.csv", "size": len(CSV), "sha256": digest}], read
    assert sorted(w["path"] for w in written["written"]) == ["mass.png", "sorted.csv"], written
    assert "inputs" not in plain and "written" not in plain, plain  # R's temporary plot file is not an input

    (project / "data" / "penguins.csv").write_text(CSV.replace("6300", "6400"))
    report = replay(end["notebook"], timeout_s=120, cwd=project)
    by_cell = {c.index: c for c in report.cells}
    assert by_cell[1].status == "differ" and "data/penguins.csv (changed since the session)" in (
        by_cell[1].file_changed or ""), report.render()
    assert by_cell[3].file_changed is None, report.render()


async def test_the_export_lists_its_inputs_and_with_inputs_reruns_on_the_data_as_it_was(
        client: Client, project: Path) -> None:
    (project / "data").mkdir()
    (project / "data" / "penguins.csv").write_text(CSV)
    (project / "data" / "notes.txt").write_text("x" * 10)
    run = {"language": "python"}
    await client.call_tool("ctx_execute", run | {"code": "import pandas as pd\nprint(pd.read_csv('data/penguins.csv')"
                                                         ".body_mass_g.max())"})
    await client.call_tool("ctx_execute", run | {"code": "print(len(open('data/notes.txt').read()))"})
    await client.call_tool("ctx_execute", run | {"code": "print(open('data/penguins.csv').read().count('\\n'))"})
    (project / "data" / "notes.txt").write_text("y" * 20)  # moved on before the export: not the version read
    refused = await client.call_tool("ctx_export", {"path": "review", "with_inputs": True, "redact": True})
    assert refused.is_error and "not both" in text_of(refused)
    done = text_of(await client.call_tool("ctx_export", {"path": "review", "with_inputs": True}))
    notebook = Path(done.split(" to ", 1)[1].split(";")[0])
    nb = nbformat.read(notebook, as_version=4)
    table = nb.cells[0]
    assert table.id == "inputs" and f"| `data/penguins.csv` | {len(CSV)} B |" in table.source
    listed = {f["path"]: f for f in table.metadata.context_kernel.inputs}
    ids = [c.metadata.context_kernel.execution_id for c in session_cells(nb) if c.cell_type == "code"]
    assert listed["data/penguins.csv"]["read_by"] == [ids[0], ids[2]]
    assert listed["data/penguins.csv"]["copy"] == "copied"
    assert listed["data/notes.txt"]["copy"] == "changed or gone since the session: not copied"
    assert (notebook.parent / "inputs" / "data" / "penguins.csv").read_text() == CSV
    assert not (notebook.parent / "inputs" / "data" / "notes.txt").exists()
    assert '"inputs"' in next(c for c in nb.cells if c.get("id") == "project-dir").source  # the cells run there

    (project / "data" / "penguins.csv").write_text(CSV.replace("6300", "6400"))  # the project's data moves on
    ran = await anyio.run_process([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                                   "--allow-errors", notebook.name, "--output", "ran.ipynb"], cwd=notebook.parent,
                                  check=False)
    assert ran.returncode == 0, ran.stderr.decode()[-2000:]
    first, notes, lines = session_cells(nbformat.read(notebook.parent / "ran.ipynb", as_version=4))
    assert "".join(o.get("text", "") for o in first.outputs) == "6300\n"  # the copy, not today's 6400
    assert "".join(o.get("text", "") for o in lines.outputs) == "4\n"
    assert notes.outputs[0].ename == "FileNotFoundError"  # not copied (it changed): the table said so
    # replay (`context-kernel replay --cwd review/inputs`) on the copies: the cells that read them match
    report = replay(notebook, timeout_s=120, cwd=notebook.parent / "inputs")
    assert [c.status for c in report.cells] == ["match", "differ", "match"], report.render()

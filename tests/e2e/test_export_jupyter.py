"""Exports Jupyter tools like: stable files (nbdime diffs nothing), a kernel for every notebook, and
'what the agent saw' marked where a reader looks first, in the notebook and in its HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

from context_kernel.notebooks.replay import replay

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
SHOW_PNG = ("from IPython.display import Image, display\nimport base64\n"
            f"display(Image(data=base64.b64decode('{PNG}')))")


def exported(text: str) -> Path:
    return Path(text.split(" to ", 1)[1].split(";")[0])


async def test_two_exports_of_a_mixed_session_are_byte_identical(client: Client, project: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py one')"})
    await client.call_tool("ctx_execute", {"language": "shell", "code": "echo sh one"})
    await client.call_tool("ctx_execute", {"language": "cobol", "code": "DISPLAY 'HI'"})  # refused: a note
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py two')"})
    reply = text_of(await client.call_tool("ctx_export", {"path": "one"}))
    first = exported(reply)
    second = exported(text_of(await client.call_tool("ctx_export", {"path": "two"})))
    assert "Exported 4 executions" in reply and "(ck-bash, 1 cell)" in reply and "(python3, 2 cells)" in reply
    names = sorted(p.name for p in first.parent.iterdir())
    assert len(names) == 3 and names == sorted(p.name for p in second.parent.iterdir())
    for name in names:
        assert (first.parent / name).read_bytes() == (second.parent / name).read_bytes(), name
    index = nbformat.read(first, as_version=4)
    py = nbformat.read(first.with_name(f"{first.stem}-python3.ipynb"), as_version=4)
    exec_ids = [c.metadata.context_kernel.execution_id for c in session_cells(py)]
    assert [c.id for c in session_cells(py)] == [f"exec-{i}" for i in exec_ids]
    # The index's cells are named after the executions they tell of: ids survive a re-export
    # and line up with the per-kernel cells.
    assert index.cells[0].id == "session" and len({c.id for c in index.cells}) == len(index.cells) == 5
    assert [c.id for c in index.cells[1:]] == [f"step-{i}" for i in (exec_ids[0], exec_ids[0] + 1,
                                                                         exec_ids[0] + 2, exec_ids[1])]


async def test_a_single_kernel_session_with_a_refused_call_exports_byte_identically(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
    await client.call_tool("ctx_execute", {"language": "cobol", "code": "DISPLAY 'HI'"})
    first = exported(text_of(await client.call_tool("ctx_export", {"path": "one"})))
    second = exported(text_of(await client.call_tool("ctx_export", {"path": "two"})))
    assert first.read_bytes() == second.read_bytes()
    code, note = session_cells(nbformat.read(first, as_version=4))
    assert note.id == f"note-{code.metadata.context_kernel.execution_id + 1}"


async def test_the_index_has_a_kernel_says_it_is_a_table_of_contents_and_still_replays_each_notebook(
        client: Client, project: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "shell", "code": "echo sh"})
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py')"})
    index_path = exported(text_of(await client.call_tool("ctx_export", {})))
    index = nbformat.read(index_path, as_version=4)
    # A kernelspec JupyterLab knows, so opening the index asks for no kernel; the session's first.
    assert index.metadata.kernelspec.name == "ck-bash" and index.metadata.language_info.name == "bash"
    assert index.metadata.context_kernel.role == "index"
    assert index.cells[0].source.startswith("# Table of contents")
    assert {c.cell_type for c in index.cells} == {"markdown"}
    report = replay(index_path, timeout_s=60, cwd=project)  # as test_replay.py does: nbclient runs its own loop
    assert report.ok, report.render()
    assert sorted(str(c.notebook) for c in report.cells) == [f"{index_path.stem}-ck-bash.ipynb",
                                                             f"{index_path.stem}-python3.ipynb"]


async def test_a_plot_cell_says_the_agent_got_only_a_placeholder(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": f"print('a plot:')\n{SHOW_PNG}"})
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('all of it')"})
    path = exported(text_of(await client.call_tool("ctx_export", {"path": "out", "format": "html"})))
    nb = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    plot, plain = session_cells(nb)
    meta = plot.metadata.context_kernel
    assert meta.agent_saw == "placeholder" and meta.placeholders == ["image/png"]
    assert "[image/png output recorded" in meta.agent_reply
    marker = plot.outputs[0]  # before the image, where a reader looks first
    assert marker.output_type == "stream" and marker.text.startswith("[context-kernel: the agent was shown")
    assert "placeholder" in marker.text and "image/png" in marker.text
    assert "image/png" in plot.outputs[-1].data
    assert plain.metadata.context_kernel.agent_saw == "full" and len(plain.outputs) == 1
    html = await anyio.Path(path).read_text()
    shown = [line for line in html.splitlines() if "Shown to the agent:" in line]
    assert len(shown) == 2
    assert "placeholder instead of image/png" in shown[0] and "full output" not in shown[0]
    # not 'full output — 90 of 17,641 bytes': the reply's size and the output's are two facts
    assert not re.search(r"\d of [\d,]+ bytes", shown[0]) and "-byte reply" in shown[0]
    assert "full output" in shown[1]


async def test_an_intent_filtered_cell_is_marked_before_its_output(client: Client) -> None:
    code = ("for n in range(1, 501):\n"
            "    print('ERROR payment gateway returned 502' if n == 347 else f'INFO request {n} served')")
    await client.call_tool("ctx_execute", {"language": "python", "code": code, "intent": "errors"})
    nb = nbformat.read(exported(text_of(await client.call_tool("ctx_export", {}))), as_version=4)
    (cell,) = session_cells(nb)
    assert cell.metadata.context_kernel.agent_saw == "intent"
    first = cell.outputs[0]
    assert first.output_type == "stream" and "the agent was shown intent output" in first.text
    assert "INFO request 500 served" in "".join(o.get("text", "") for o in cell.outputs[1:])
    assert json.dumps(cell.outputs[-1]).count("context-kernel:") == 0

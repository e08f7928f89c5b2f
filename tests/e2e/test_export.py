"""ctx_export: a session's executions become valid notebooks, in order, with their full outputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

from context_kernel.kernels.python_env import kernel_name_for
from context_kernel.notebooks.export import export_session
from context_kernel.settings import Settings
from context_kernel.store.db import open_engine
from context_kernel.store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.mark.kernels
async def test_a_python_session_exports_to_one_valid_notebook(client: Client, project: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "x = 6 * 7\nprint('x is', x)"})
    await client.call_tool("ctx_execute", {"language": "python", "code": (
        "from IPython.display import Image, display\nimport base64\n"
        f"display(Image(data=base64.b64decode('{PNG}')))")})
    await client.call_tool("ctx_execute", {"language": "python", "code": "for i in range(3000): print(i)"})
    await client.call_tool("ctx_execute", {"language": "python", "code": "1/0"})
    await client.call_tool("ctx_execute", {"language": "cobol", "code": "DISPLAY 'HI'"})
    result = await client.call_tool("ctx_export", {"path": "exports"})
    text = text_of(result)
    assert not result.is_error, text
    path = Path(text.split(" to ", 1)[1].split(";")[0])
    assert path.parent == project / "exports"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    # the interpreter the cells ran in, by the name `kernels install` registers (not the reader's python3)
    assert nb.metadata.kernelspec.name == kernel_name_for(Path(sys.executable))
    assert "context-kernel kernels install --user" in nb.cells[0].source and nb.cells[0].id == "kernel-note"
    assert nb.cells[1].id == "project-dir"  # moves the kernel to the session's folder (test_exports_rerun)
    kinds = [c.cell_type for c in session_cells(nb)]
    assert kinds == ["code", "code", "code", "code", "markdown"]
    first, image, long, error, refused = session_cells(nb)
    assert first.outputs[0].text == "x is 42\n" and first.metadata.context_kernel.status == "ok"
    assert first.metadata.context_kernel.bytes_returned == len("x is 42")
    assert "image/png" in image.outputs[-1].data
    full = "".join(o.get("text", "") for o in long.outputs if o.get("name") == "stdout")
    assert "2999\n" in full and long.metadata.context_kernel.agent_saw == "trimmed"
    assert "cut" in long.metadata.context_kernel.agent_reply
    assert error.outputs[-1].output_type == "error" and error.metadata.context_kernel.status == "error"
    assert "Refused call" in refused.source and "unknown language" in refused.source


@pytest.mark.kernels
async def test_a_mixed_session_exports_one_notebook_per_kernel_and_an_index(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py one')"})
    await client.call_tool("ctx_execute", {"language": "shell", "code": "echo sh one"})
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py two')"})
    text = text_of(await client.call_tool("ctx_export", {}))
    index_path = Path(text.split(" to ", 1)[1].split(";")[0])
    index = nbformat.read(index_path, as_version=4)
    nbformat.validate(index)
    assert [c.source.split("\n")[0].split(" — ")[0] for c in index.cells[1:]] == [
        "**Step 1**", "**Step 2**", "**Step 3**"]
    py = nbformat.read(index_path.with_name(index_path.stem + "-python3.ipynb"), as_version=4)
    sh = nbformat.read(index_path.with_name(index_path.stem + "-ck-bash.ipynb"), as_version=4)
    assert [c.source for c in session_cells(py)] == ["print('py one')", "print('py two')"]
    assert [c.source for c in session_cells(sh)] == ["echo sh one"] and sh.metadata.kernelspec.name == "ck-bash"


@pytest.mark.kernels
async def test_export_refuses_a_path_outside_the_project_naming_itself_and_the_path_given(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "1"})
    result = await client.call_tool("ctx_export", {"path": "../../elsewhere/deeper"})
    text = text_of(result)
    assert result.is_error and "outside the project directory" in text
    # It used to name ctx_execute_file and the parent directory ("../../elsewhere").
    assert "ctx_export" in text and "'../../elsewhere/deeper'" in text and "ctx_execute_file" not in text


@pytest.mark.kernels
async def test_export_makes_a_new_nested_folder(client: Client, project: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('nested')"})
    result = await client.call_tool("ctx_export", {"path": "reports/2026/run-1"})
    text = text_of(result)
    assert not result.is_error, text  # was: "no such directory: reports/2026"
    path = Path(text.split(" to ", 1)[1].split(";")[0])
    assert path.parent == project / "reports" / "2026" / "run-1"
    assert session_cells(nbformat.read(path, as_version=4))[0].outputs[0].text == "nested\n"


@pytest.mark.kernels
async def test_export_into_a_path_that_is_a_file_says_so(client: Client, project: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "1"})
    (project / "taken").write_text("a file")
    result = await client.call_tool("ctx_export", {"path": "taken/sub"})
    text = text_of(result)
    assert result.is_error and "ctx_export" in text and "'taken/sub'" in text and "not a directory" in text


def test_a_cell_left_pending_by_a_killed_server_exports_as_interrupted(settings: Settings, tmp_path: Path) -> None:
    executions = ExecutionRepository(open_engine(settings.db_path))  # the record a killed server left
    executions.touch_session("dead", client=None, transport="stdio", project_dir="/p")
    executions.start(ExecutionStart(session_id="dead", tool="ctx_execute", code="train_model()", language="python",
                                    kernel_name="python3"))
    done = export_session("dead", executions.for_session("dead"), executions.outputs, tmp_path / "out",
                          lambda _name: None)
    nb = json.loads(done.main.read_text())
    cell = nb["cells"][0]
    assert cell["source"] == "train_model()" and cell["metadata"]["context_kernel"]["status"] == "interrupted"
    assert "never finished" in cell["outputs"][-1]["text"]


@pytest.mark.kernels
async def test_html_export_marks_what_the_agent_saw(client: Client, project: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('small')"})
    await client.call_tool("ctx_execute", {"language": "python", "code": "for i in range(3000): print('row', i)"})
    text = text_of(await client.call_tool("ctx_export", {"path": "html", "format": "html"}))
    path = Path(text.split(" to ", 1)[1].split(";")[0])
    assert path.suffix == ".html" and path.with_suffix(".ipynb").is_file()
    html = await anyio.Path(path).read_text()
    assert html.count("Shown to the agent:") == 2
    assert "trimmed output" in html and "row 2999" in html and "<html" in html


@pytest.mark.kernels
async def test_batch_commands_export_as_shell_cells_marked_as_batch(client: Client) -> None:
    await client.call_tool("ctx_batch_execute", {"commands": [
        {"label": "count lines", "command": "printf 'a\\nb\\n' | wc -l"}, {"label": "say hi", "command": "echo hi"}]})
    text = text_of(await client.call_tool("ctx_export", {}))
    nb = nbformat.read(Path(text.split(" to ", 1)[1].split(";")[0]), as_version=4)
    assert nb.metadata.kernelspec.name == "ck-bash"
    call, first, second = session_cells(nb)  # the batch call (tests/e2e/test_export_conversation.py), then its commands
    assert call.cell_type == "markdown" and call.metadata.context_kernel.tool == "ctx_batch_execute"
    assert first.source == "# batch: count lines\n(\nprintf 'a\\nb\\n' | wc -l\n)"
    assert second.source == "# batch: say hi\n(\necho hi\n)"
    assert first.metadata.context_kernel.tool == "ctx_batch_execute" and first.outputs[0].text.strip() == "2"


def test_a_batch_command_s_label_heads_its_cell(settings: Settings, tmp_path: Path) -> None:
    executions = ExecutionRepository(open_engine(settings.db_path))
    executions.touch_session("b", client=None, transport="stdio", project_dir="/p")
    for label in ("disk usage", 'odd "label"\nwith a newline'):
        exec_id = executions.start(ExecutionStart(
            session_id="b", tool="ctx_batch_execute", code="df -h", language="shell", kernel_name="ck-bash"))
        executions.finish(exec_id, ExecutionEnd(
            status="ok", returned_kind="indexed",
            note=f"batch command {json.dumps(label)}: output indexed, the reply carries search results"))
    done = export_session("b", executions.for_session("b"), executions.outputs, tmp_path / "out",
                          lambda _name: None)
    cells = json.loads(done.main.read_text())["cells"]
    assert [c["source"] for c in cells] == ["# batch: disk usage\n(\ndf -h\n)",
                                            '# batch: odd "label" with a newline\n(\ndf -h\n)']
    assert cells[0]["metadata"]["context_kernel"]["batch_label"] == "disk usage"


@pytest.mark.kernels
async def test_the_html_index_of_a_mixed_session_links_the_rendered_pages(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py')"})
    await client.call_tool("ctx_execute", {"language": "shell", "code": "echo sh"})
    text = text_of(await client.call_tool("ctx_export", {"path": "html", "format": "html"}))
    index = Path(text.split(" to ", 1)[1].split(";")[0])
    html = await anyio.Path(index).read_text()
    for kernel in ("python3", "ck-bash"):
        page = index.with_name(f"{index.stem}-{kernel}.html")
        assert page.is_file() and f'href="{page.name}"' in html
    assert ".ipynb\"" not in html

"""Replay: an exported session re-runs in a fresh kernel and matches; a changed input file is named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from nbformat import v4
from tests.helpers import session_cells, text_of

from context_kernel.notebooks.output_comparison import normalise
from context_kernel.notebooks.replay import replay

pytestmark = pytest.mark.anyio


@pytest.mark.kernels
async def test_a_replayed_session_matches_then_names_the_cell_and_file_that_changed(client: Client,
                                                                                   project: Path) -> None:
    (project / "sales.csv").write_text("region,amount\nnorth,10\nsouth,32\n")
    await client.call_tool("ctx_execute", {"language": "python", "code": "rate = 2\nprint('rate', rate)"})
    await client.call_tool("ctx_execute_file", {"path": "sales.csv", "language": "python", "code": (
        "rows = [line.split(',') for line in FILE_CONTENT.splitlines()[1:]]\n"
        "print('total', sum(int(a) for _, a in rows) * rate)")})
    await client.call_tool("ctx_execute", {"language": "python", "code": "print(object())"})  # an address
    text = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    notebook = Path(text.split(" to ", 1)[1].split(";")[0])

    report = replay(notebook, timeout_s=60, cwd=project)
    assert report.ok, report.render()
    assert [c.status for c in report.cells] == ["match", "match", "match"]

    (project / "sales.csv").write_text("region,amount\nnorth,10\nsouth,33\n")
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(project.parent / "home")}
    with anyio.fail_after(120):
        out = await anyio.run_process([sys.executable, "-m", "context_kernel", "replay", str(notebook)],
                                      check=False, env=env, cwd=project)
    stdout = out.stdout.decode()
    assert out.returncode == 1
    assert "cell 2 (execution #" in stdout and "differ" in stdout and "file changed" in stdout
    assert "-[stdout] total 84" in stdout and "+[stdout] total 86" in stdout
    assert "2 of 3 cells match" in stdout
    # the CLI says which cell it is on while it replays
    assert "replaying " in out.stderr.decode() and "cell 3 of 3" in out.stderr.decode()


def test_volatile_parts_are_normalised() -> None:
    assert normalise("<object at 0x7f3a2b1c9d80> took 12.5 ms at 2026-11-30T05:00:00Z in /tmp/abc/x.py") == \
        "<object at 0xADDR> took DURATION at TIMESTAMP in /tmp/PATH"
    assert normalise("\x1b[31mCell In[12], line 3\x1b[0m") == "Cell In[N], line 3"


# Each prints the file's length and name, read through the variables ctx_execute_file defines.
FILE_CELLS = {
    "shell": 'echo "${#FILE_CONTENT} $(basename "$file_path") ${FILE_CONTENT_PATH##*/}"',
    "javascript": "console.log(FILE_CONTENT.length, require('path').basename(file_path))",
    "typescript": "const n: number = FILE_CONTENT.length;\nconsole.log(n, FILE_CONTENT_PATH.split('/').pop())",
    "ruby": 'puts "#{FILE_CONTENT.length} #{File.basename(file_path)}"',
    "perl": 'print length($FILE_CONTENT), " ", $file_path =~ s{.*/}{}r, "\\n";',
    "php": 'echo strlen($FILE_CONTENT), " ", basename($file_path), "\\n";',
    "elixir": 'IO.puts("#{String.length(file_content)} #{Path.basename(file_path)}")',
    "go": "fmt.Println(len(FILE_CONTENT), filepath.Base(file_path))",
    "rust": "println!(\"{} {}\", file_content.len(), file_path.rsplit('/').next().unwrap());",
    "csharp": 'Console.WriteLine(FILE_CONTENT.Length + " " + Path.GetFileName(file_path));',
    "r": "cat(nchar(FILE_CONTENT), basename(file_path), '\\n')",
}


@pytest.mark.kernels
@pytest.mark.timeout(300)
async def test_file_cells_of_every_language_replay_without_the_server(client: Client, project: Path) -> None:
    # Our own kernels define FILE_CONTENT from cell metadata nbclient never sends: the export must.
    (project / "notes.txt").write_text("twelve chars")
    for language, code in FILE_CELLS.items():
        result = await client.call_tool("ctx_execute_file", {"path": "notes.txt", "language": language, "code": code})
        assert not result.is_error and "12 notes.txt" in text_of(result), (language, text_of(result))
    text = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    index = Path(text.split(" to ", 1)[1].split(";")[0])

    report = replay(index, timeout_s=120)
    assert report.ok, report.render()
    assert len(report.cells) == len(FILE_CELLS) and {c.status for c in report.cells} == {"match"}


@pytest.mark.kernels
def test_replay_skips_unfinished_and_kernel_killing_cells_and_interrupts_a_cell_past_the_limit(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}

    def cell(code: str, status: str, text: str = "") -> Any:
        c = v4.new_code_cell(code, outputs=[v4.new_output("stream", name="stdout", text=text)] if text else [])
        c.metadata["context_kernel"] = {"execution_id": len(nb.cells) + 1, "status": status}
        return c

    nb.cells = [
        cell(f"open({str(marker)!r}, 'w').write('x')", "interrupted"),  # the server died while it ran
        cell("import time\nprint('start')\ntime.sleep(60)\nprint('done')", "ok", "start\ndone\n"),
        cell("print('still replaying')", "ok", "still replaying\n"),
        cell("import os\nos._exit(1)", "died"),  # it killed the session's kernel
        cell("print('and after')", "ok", "and after\n"),
    ]
    path = tmp_path / "hand-made.ipynb"
    nbformat.write(nb, path)

    report = replay(path, timeout_s=3)
    assert [c.status for c in report.cells] == ["skipped", "differ", "match", "skipped", "match"], report.render()
    assert not marker.exists()
    assert "interrupted at the 3 s replay limit" in report.cells[1].note
    assert "2 of 3 cells match, 2 skipped" in report.render()


def test_replay_explains_a_missing_kernel_or_per_kernel_notebook(tmp_path: Path) -> None:
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "no-such-kernel", "display_name": "Nope", "language": "nope"}
    nb.cells = [v4.new_code_cell("1")]
    nbformat.write(nb, tmp_path / "alien.ipynb")
    index = v4.new_notebook()
    index.metadata["context_kernel"] = {"notebooks": ["session-x-python3.ipynb"]}
    nbformat.write(index, tmp_path / "index.ipynb")
    for name, expected in [("alien.ipynb", "needs the kernel 'no-such-kernel', which is not installed"),
                           ("index.ipynb", "lists notebooks that are not next to it: session-x-python3.ipynb")]:
        out = subprocess.run([sys.executable, "-m", "context_kernel", "replay", str(tmp_path / name)],
                             capture_output=True, text=True, timeout=60, check=False,
                             env={**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home")})
        assert out.returncode == 2 and expected in out.stderr and "Traceback" not in out.stderr, out.stderr


@pytest.mark.kernels
async def test_a_cd_in_a_batch_command_does_not_leak_into_later_shell_cells_on_replay(client: Client,
                                                                                      project: Path) -> None:
    (project / "sub").mkdir()
    await client.call_tool("ctx_batch_execute", {"commands": [
        {"label": "into sub", "command": "cd sub && export MARK=batch && pwd | sed 's|.*/||'"}]})
    await client.call_tool("ctx_execute", {"language": "shell", "code": "basename \"$PWD\"; echo \"mark=${MARK:-}\""})
    text = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    notebook = Path(text.split(" to ", 1)[1].split(";")[0])
    report = replay(notebook, timeout_s=60, cwd=project)
    # In the session the batch ran in its own shell; on replay it must not move the next cell.
    assert report.ok, report.render()
    assert [c.status for c in report.cells] == ["match", "match"]


@pytest.mark.kernels
async def test_a_call_to_an_unknown_kernel_stays_a_note_and_every_other_notebook_replays(client: Client,
                                                                                         project: Path) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py one')"})
    refused = await client.call_tool("ctx_execute", {"language": "python", "kernel": "no-such-kernel", "code": "1"})
    assert refused.is_error and "no-such-kernel" in text_of(refused)
    await client.call_tool("ctx_execute", {"language": "shell", "code": "echo sh one"})
    text = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    index_path = Path(text.split(" to ", 1)[1].split(";")[0])
    # The call never reached a kernel: a note in the index, not a notebook of its own (which no
    # machine can replay, so the whole index could not be replayed).
    assert sorted(p.name for p in index_path.parent.iterdir()) == sorted(
        [index_path.name, index_path.stem + "-python3.ipynb", index_path.stem + "-ck-bash.ipynb"])
    index = nbformat.read(index_path, as_version=4)
    note = index.cells[2]
    assert note.cell_type == "markdown" and note.source.startswith("**Step 2**")
    assert "not run" in note.source and "no-such-kernel" in note.source

    report = replay(index_path, timeout_s=60, cwd=project)
    assert report.ok, report.render()
    assert [(c.notebook.rsplit("-", 1)[-1], c.status) for c in report.cells] == [
        ("python3.ipynb", "match"), ("bash.ipynb", "match")]
    rendered = report.render()
    assert f"{index_path.stem}-python3.ipynb: 1 of 1 cells match" in rendered
    assert f"{index_path.stem}-ck-bash.ipynb: 1 of 1 cells match" in rendered


@pytest.mark.kernels
def test_an_index_whose_notebook_needs_a_missing_kernel_still_replays_the_others(tmp_path: Path) -> None:
    good = v4.new_notebook()
    good.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    good.cells = [v4.new_code_cell("print('here')", outputs=[v4.new_output("stream", name="stdout", text="here\n")])]
    alien = v4.new_notebook()
    alien.metadata["kernelspec"] = {"name": "no-such-kernel", "display_name": "Nope", "language": "nope"}
    alien.cells = [v4.new_code_cell("1")]
    index = v4.new_notebook()
    index.metadata["context_kernel"] = {"notebooks": ["s-alien.ipynb", "s-gone.ipynb", "s-python3.ipynb"]}
    for name, nb in [("s-alien.ipynb", alien), ("s-python3.ipynb", good), ("s.ipynb", index)]:
        nbformat.write(nb, tmp_path / name)
    out = subprocess.run([sys.executable, "-m", "context_kernel", "replay", str(tmp_path / "s.ipynb")],
                         capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home")})
    # Was: exit 2 and no result for the notebook that did run.
    assert out.returncode == 1, out.stdout + out.stderr
    assert "s-python3.ipynb cell 1: match" in out.stdout
    assert "s-python3.ipynb: 1 of 1 cells match" in out.stdout
    assert "s-alien.ipynb: not replayed — s-alien.ipynb needs the kernel 'no-such-kernel'" in out.stdout
    assert "s-gone.ipynb: not replayed — it is not next to the index" in out.stdout
    # Was "1 of 1 cells match; see the differences above": nothing differed, and a cell was left out.
    assert out.stdout.splitlines()[-1] == "1 of 1 cells match; 1 cell of s-alien.ipynb, s-gone.ipynb not replayed"
    assert "Traceback" not in out.stderr


@pytest.mark.kernels
async def test_a_batch_command_stopped_by_the_batch_budget_says_so_and_replays_under_it(client: Client,
                                                                                        project: Path) -> None:
    reply = text_of(await client.call_tool("ctx_batch_execute", {"timeout": 4000, "commands": [
        {"label": "quick", "command": "echo quick"}, {"label": "slow", "command": "echo begun; sleep 30"}]}))
    assert "slow [#2]: timeout" in reply, reply
    text = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    nb = nbformat.read(Path(text.split(" to ", 1)[1].split(";")[0]), as_version=4)
    code = [c for c in session_cells(nb) if c.cell_type == "code"]  # the batch call itself is markdown
    slow = code[1].metadata.context_kernel
    # What was left of the 4 s budget when the command began is its limit, not the 600 s default.
    assert slow.status == "timeout" and 0 < slow.timeout_ms <= 4000, slow
    stderr = "".join(o.get("text", "") for o in code[1].outputs if o.get("name") == "stderr")
    assert "stopped by the batch's 4 s time budget" in stderr, stderr
    report = replay(Path(text.split(" to ", 1)[1].split(";")[0]), timeout_s=60, cwd=project)
    assert [c.status for c in report.cells] == ["match", "match"], report.render()
    assert "600" not in report.render() and "timed out again" in report.cells[1].note


HISTOGRAM = (
    "import matplotlib\n"
    "matplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\n"
    "values = [float(v) for v in open('values.txt').read().split()]\n"
    "fig, ax = plt.subplots(figsize=(4, 3), dpi=60)\n"
    "ax.hist(values, bins=10)\n"
    "import io\n"
    "from IPython.display import Image, display\n"
    "png = io.BytesIO()\n"
    "fig.savefig(png, format='png')\n"
    "plt.close(fig)\n"
    "display(Image(data=png.getvalue()))\n"
)


@pytest.mark.kernels
async def test_a_plot_of_unchanged_data_matches_and_a_plot_of_changed_data_diverges(client: Client,
                                                                                     project: Path) -> None:
    (project / "values.txt").write_text(" ".join(str((i * 37) % 100) for i in range(500)))
    result = await client.call_tool("ctx_execute", {"language": "python", "code": HISTOGRAM})
    assert not result.is_error and "image/png" in text_of(result), text_of(result)
    text = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    notebook = Path(text.split(" to ", 1)[1].split(";")[0])
    for _ in range(2):  # the same figure, drawn again in a new kernel each time
        report = replay(notebook, timeout_s=60, cwd=project)
        assert [c.status for c in report.cells] == ["match"], report.render()

    # The same number of values, a few moved to another bin: the text outputs are identical.
    (project / "values.txt").write_text(" ".join(str((i * 37) % 100 if i >= 10 else 99) for i in range(500)))
    report = replay(notebook, timeout_s=60, cwd=project)
    assert [c.status for c in report.cells] == ["differ"], report.render()  # was: match (MIME type only)
    assert "image 1 (image/png):" in report.cells[0].diff and "pixels changed" in report.cells[0].diff


@pytest.mark.kernels
def test_cells_after_the_kernel_died_in_replay_are_counted_as_not_replayed(tmp_path: Path) -> None:
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}

    def cell(code: str, text: str) -> Any:
        made = v4.new_code_cell(code, outputs=[v4.new_output("stream", name="stdout", text=text)])
        made.metadata["context_kernel"] = {"status": "ok"}
        return made

    nb.cells = [cell("print('one')", "one\n"), cell("import os\nos._exit(1)", "two\n"),
                cell("print('three')", "three\n")]
    path = tmp_path / "dies.ipynb"
    nbformat.write(nb, path)
    report = replay(path, timeout_s=30)
    # Was: the third cell compared with no outputs, "differ", as if it had run and printed nothing.
    assert [c.status for c in report.cells] == ["match", "differ", "not replayed"], report.render()
    assert report.render().splitlines()[-1] == (
        "1 of 2 cells match; 1 differ: see the differences above; 1 not replayed: the replay stopped before them")

"""A realistic agent session, end to end: run it through the MCP client, export it, pin it, replay it.

The session analyses a CSV in python (with a matplotlib plot), runs a shell command, reads the CSV
from JavaScript and the shell with ctx_execute_file, raises an error, hits a time limit, prints a
large output filtered by an intent, and makes one refused call. Its export is validated, compared
with normalised golden notebooks in tests/golden/, replayed cell for cell, then replayed again
after the CSV changed. After an intended change to the export, regenerate the golden files:
    CONTEXT_KERNEL_UPDATE_GOLDEN=1 python -m pytest tests/e2e/test_realistic_session.py
"""

from __future__ import annotations

import difflib
import json
import os
import re
import struct
import sys
from base64 import b64decode
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import text_of

from context_kernel.kernels.python_env import kernel_name_for
from context_kernel.notebooks.output_comparison import normalise
from context_kernel.notebooks.replay import replay

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300), pytest.mark.kernels]
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CSV = "region,month,amount\nnorth,jan,120\nnorth,feb,135\nsouth,jan,90\nsouth,feb,160\neast,jan,75\neast,feb,80\n"

SESSION: list[tuple[str, dict[str, Any]]] = [
    ("ctx_execute", {"language": "python", "code": (
        "import csv\n"
        "with open('data/sales.csv') as fh:\n"
        "    rows = list(csv.DictReader(fh))\n"
        "totals = {}\n"
        "for r in rows:\n"
        "    totals[r['region']] = totals.get(r['region'], 0) + int(r['amount'])\n"
        "print(totals)")}),
    ("ctx_execute", {"language": "python", "code": (
        "import io\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "from IPython.display import Image, display\n"
        "fig, ax = plt.subplots(figsize=(4, 3), dpi=50)\n"
        "ax.bar(list(totals), list(totals.values()))\n"
        "buf = io.BytesIO()\n"
        "fig.savefig(buf, format='png', metadata={'Software': None})\n"
        "plt.close(fig)\n"
        "display(Image(data=buf.getvalue()))\n"
        "print('plotted', len(totals), 'regions')")}),
    ("ctx_execute", {"language": "shell", "code": "wc -l < data/sales.csv"}),
    ("ctx_execute_file", {"path": "data/sales.csv", "language": "javascript", "code": (
        "FILE_CONTENT.trim().split('\\n').slice(1).map((l) => Number(l.split(',')[2]))"
        ".reduce((a, b) => Math.max(a, b))")}),
    ("ctx_execute", {"language": "python", "code": "totals['west']"}),
    ("ctx_execute", {"language": "python", "timeout": 1500, "code": (
        "import time\nprint('waiting for the feed')\nwhile True: time.sleep(0.05)")}),
    ("ctx_execute", {"language": "python", "intent": "north anomaly", "code": (
        "for i in range(120):\n"
        "    print(f'check {i:03d}: ' + ('north ANOMALY spike' if i == 77 else 'ok') + ' ' + '.' * 40)")}),
    ("ctx_execute_file", {"path": "data/sales.csv", "language": "python", "code": (
        "import csv, io\n"
        "feb = [r for r in csv.DictReader(io.StringIO(FILE_CONTENT)) if r['month'] == 'feb']\n"
        "print('feb total', sum(int(r['amount']) for r in feb))")}),
    ("ctx_execute_file", {"path": "data/sales.csv", "language": "shell",
                          "code": "printf '%s' \"$FILE_CONTENT\" | grep -c '^north,'"}),
    ("ctx_execute", {"language": "cobol", "code": "DISPLAY 'TOTALS'"}),
]


async def test_a_realistic_session_exports_to_the_golden_notebooks_and_replays(client: Client,
                                                                               project: Path) -> None:
    (project / "data").mkdir()
    csv_path = project / "data" / "sales.csv"
    csv_path.write_text(CSV)
    replies = [await client.call_tool(tool, args) for tool, args in SESSION]
    seen = [(r.is_error, text_of(r)) for r in replies]
    assert [e for e, _ in seen] == [False, False, False, False, True, True, False, False, False, True], seen
    assert "ANOMALY" in seen[6][1] and "check 000" not in seen[6][1]  # the agent saw the intent's line only

    text = text_of(await client.call_tool("ctx_export", {"path": "exports"}))
    index_path = Path(text.split(" to ", 1)[1].split(";")[0])
    paths = sorted(index_path.parent.glob("*.ipynb"))
    assert len(paths) == 4  # the index and one notebook per kernel (python3, ck-bash, ck-javascript)
    session = index_path.stem.removeprefix("session-")
    for path in paths:
        nbformat.validate(nbformat.read(path, as_version=4))
        name = path.name.replace(f"session-{session}", "realistic-session")
        _assert_matches_golden(GOLDEN / name, normalised(path, project=project, session=session))

    report = replay(index_path, timeout_s=60)
    assert report.ok, report.render()
    by_cell = {(c.notebook.removeprefix(f"session-{session}-"), c.index): c for c in report.cells}
    assert [c.status for c in report.cells] == ["match"] * 9
    assert "timed out again" in by_cell[("python3.ipynb", 4)].note

    csv_path.write_text(CSV.replace("south,feb,160", "south,feb,260"))
    with anyio.fail_after(200):
        done = await anyio.run_process(
            [sys.executable, "-m", "context_kernel", "replay", str(index_path), "--timeout", "60"], check=False,
            cwd=project, env={**os.environ, "CONTEXT_KERNEL_HOME": str(project.parent / "home")})
    stdout = done.stdout.decode()
    assert done.returncode == 1, stdout + done.stderr.decode()
    differ = re.findall(r"^(\S+) cell (\d+) \(execution #\d+\): differ", stdout, re.MULTILINE)
    # The plot of the changed data (python cell 2) diverges too: images are compared by their pixels.
    assert sorted((nb.removeprefix(f"session-{session}-"), int(i)) for nb, i in differ) == [
        ("ck-javascript.ipynb", 1), ("python3.ipynb", 1), ("python3.ipynb", 2), ("python3.ipynb", 6)], stdout
    assert re.search(r"^image 1 \(image/png\): [\d.]+% of its pixels changed", stdout, re.MULTILINE), stdout
    changed = re.findall(r"^(\S+) cell (\d+) .*file changed: (.*)$", stdout, re.MULTILINE)
    # three file cells (ctx_execute_file) name the file they were given; the python cell that read it with
    # pandas names it from its recorded inputs (project-relative)
    read_by_pandas = [c for c in changed if c[2] == "data/sales.csv (changed since the session)"]
    assert [(nb.rsplit("-", 1)[-1], i) for nb, i, _ in read_by_pandas] == [("python3.ipynb", "1")], stdout
    given = [line for nb, i, line in changed if (nb, i, line) not in read_by_pandas]
    assert len(given) == 3 and all(str(csv_path) in line for line in given), stdout
    assert "-[stdout] feb total 375" in stdout and "+[stdout] feb total 475" in stdout
    assert "5 of 9 cells match" in stdout


def normalised(path: Path, *, project: Path, session: str) -> dict[str, Any]:
    """The notebook without what changes from run to run: times, paths, counts, image bytes."""
    text = path.read_text().replace(str(project), "{PROJECT}").replace(session, "{SESSION}")
    # The python kernel ran in the server's own Python (no project environment): its paths vary by machine.
    text = text.replace(json.dumps(sys.executable), '"{SERVER_PYTHON}"').replace(json.dumps(sys.prefix),
                                                                                  '"{SERVER_PREFIX}"')
    text = text.replace(sys.executable, "{SERVER_PYTHON}").replace(kernel_name_for(Path(sys.executable)),
                                                                   "{SERVER_KERNEL}")
    nb = json.loads(text)
    if nb["metadata"].get("kernelspec", {}).get("name") == "{SERVER_KERNEL}":  # Python's version, the venv's name
        nb["metadata"]["kernelspec"]["display_name"] = "{SERVER_PYTHON_NAME}"
    if "version" in nb["metadata"].get("language_info", {}):  # the kernel's language: bash 5.2, python 3.11, node 22
        nb["metadata"]["language_info"]["version"] = "{VERSION}"
    for cell in nb["cells"]:
        meta = cell["metadata"].get("context_kernel", {})
        for volatile in ("started", "duration_ms"):
            meta.pop(volatile, None)
        images = any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
        if meta.get("status") in ("error", "timeout") or images:
            # tracebacks (colours, frames) vary with the IPython version, PNG bytes with matplotlib's
            meta.pop("bytes_produced", None)
            meta.pop("bytes_returned", None)
        if "agent_reply" in meta:
            meta["agent_reply"] = normalise(meta["agent_reply"])
        if cell["cell_type"] == "code":
            cell["execution_count"] = None
            cell["outputs"] = [_output(o) for o in cell["outputs"]]
        if images:  # the placeholder line and our marker name the PNG's size
            for out in cell["outputs"]:
                if out["output_type"] == "stream":
                    out["text"] = _sizes("".join(out["text"]))
            if "agent_reply" in meta:
                meta["agent_reply"] = _sizes(meta["agent_reply"])
    return nb


def _sizes(text: str) -> str:
    return re.sub(r"\d[\d,.]*(-byte| bytes| KB)", r"N\1", text)


def _output(out: dict[str, Any]) -> dict[str, Any]:
    out = dict(out)
    if "execution_count" in out:
        out["execution_count"] = None
    if out["output_type"] == "stream" and not "".join(out["text"]).lstrip().startswith("[context-kernel:"):
        out["text"] = normalise("".join(out["text"]))
    elif out["output_type"] == "error":
        out["traceback"] = [normalise(out["traceback"][-1]).splitlines()[-1]] if out["traceback"] else []
    elif "data" in out:
        # PNG bytes differ across matplotlib and zlib versions; the image's size does not
        out["data"] = {mime: _png(value) if mime == "image/png" else value for mime, value in out["data"].items()}
    return out


def _png(b64: str) -> str:
    width, height = struct.unpack(">II", b64decode(b64)[16:24])  # the IHDR chunk
    return f"<png {width}x{height}>"


def _assert_matches_golden(golden: Path, actual: dict[str, Any]) -> None:
    rendered = json.dumps(actual, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("CONTEXT_KERNEL_UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert golden.is_file(), f"no golden file {golden.name}: run with CONTEXT_KERNEL_UPDATE_GOLDEN=1"
    expected = golden.read_text()
    assert rendered == expected, "\n".join(difflib.unified_diff(
        expected.splitlines(), rendered.splitlines(), golden.name, "exported", lineterm="", n=2))

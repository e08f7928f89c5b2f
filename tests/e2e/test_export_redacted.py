"""`ctx_export(redact=True)` and `context-kernel export --redact`: notebooks for other eyes, with the
probe's secrets taken out of code, outputs, errors and what the agent saw. The record is stored
without them too, so a plain export holds none either; `redact` is for records written before."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of
from tests.security.secret_probe import PROBE, SECRETS

from context_kernel.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


async def test_a_redacted_export_holds_no_secret_and_stays_a_valid_notebook(
        client: Client, settings: Settings, project: Path) -> None:
    printed = "\n".join(PROBE.values())
    await client.call_tool("ctx_execute", {"language": "python", "code": f"creds = {printed!r}\nprint(creds)"})
    await client.call_tool("ctx_execute", {"language": "python", "code": f"raise ValueError({PROBE['ghp_']!r})"})
    await client.call_tool("ctx_execute", {"language": "python",
                                           "code": "for i in range(3000): print(i)\nprint(creds)"})
    await client.call_tool("ctx_execute", {"language": "python", "code": (
        "from IPython.display import Image, display\nimport base64\n"
        f"display(Image(data=base64.b64decode('{PNG}')))")})

    raw = await client.call_tool("ctx_export", {"path": "raw"})
    assert not raw.is_error, text_of(raw)
    raw_text = (project / "raw").joinpath(next(p.name for p in (project / "raw").glob("*.ipynb"))).read_text()
    assert leaked(raw_text) == [] and "[REDACTED github-token]" in raw_text  # the record was stored redacted

    done = await client.call_tool("ctx_export", {"path": "shared", "redact": True})
    assert not done.is_error and "secrets redacted" in text_of(done)
    notebook = next((project / "shared").glob("*.ipynb"))
    text = notebook.read_text()
    assert leaked(text) == []
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    cells = session_cells(nb)
    assert len(cells) == 4 and "[REDACTED" in cells[0].source
    assert PNG in text  # binary output is left as it was
    assert cells[1].outputs[0]["ename"] == "ValueError"
    assert cells[1].outputs[0]["evalue"] == "use this token [REDACTED github-token] for the API calls"

    # The person's CLI, on the same data dir.
    out = project.parent / "cli-export"
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(settings.home)}
    with anyio.fail_after(120):
        done_cli = await anyio.run_process([sys.executable, "-m", "context_kernel", "export", "--redact", "-o",
                                            str(out), "--project", str(project)], env=env, check=False)
    assert done_cli.returncode == 0, done_cli.stderr.decode()
    assert leaked("".join(p.read_text() for p in out.glob("*.ipynb"))) == []

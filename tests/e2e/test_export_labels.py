"""The export's "what the agent saw" is computed from the reply that was sent, on every path: a shortened
traceback, a timeout, a DataFrame's renderings, an HTML display."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import AsyncKernelManager
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


async def run(client: Client, code: str, language: str = "python", **extra: object) -> str:
    return text_of(await client.call_tool("ctx_execute", {"language": language, "code": code, **extra}))


async def exported(client: Client) -> list[dict[str, Any]]:
    """Each code cell's context_kernel metadata, in order (one notebook per kernel, the index aside)."""
    done = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    main = Path(done.split(" to ", 1)[1].split(";")[0])
    cells = []
    for path in sorted(main.parent.glob("*.ipynb")):
        cells += [c for c in session_cells(nbformat.read(path, as_version=4)) if c.cell_type == "code"]
    return [dict(c.metadata.context_kernel) | {"outputs": c.outputs}
            for c in sorted(cells, key=lambda c: c.metadata.context_kernel.execution_id)]


async def test_a_chained_pandas_error_keeps_the_agents_own_line_and_is_labelled_partial(client: Client) -> None:
    reply = await run(client, "import pandas as pd\ndf = pd.DataFrame({'mass': [1, 2]})\nx = 1\n"
                              "print(df['body_mass_g'].max())")
    # Was: cut in the middle, pandas internals kept and `Cell In[1], line 4` gone; labelled "full".
    assert "Cell In[1], line 4" in reply and "----> 4 print(df['body_mass_g'].max())" in reply, reply
    assert reply.rstrip().endswith("KeyError: 'body_mass_g'") and len(reply.splitlines()) <= 30
    assert "The above exception was the direct cause" in reply
    (cell,) = await exported(client)
    assert cell["agent_saw"] == "partial" and cell["agent_reply"] == reply


async def test_a_timeout_without_its_interrupt_traceback_is_labelled_partial(client: Client) -> None:
    reply = await run(client, "import time\nprint('started', flush=True)\ntime.sleep(30)", timeout=1000)
    assert reply.startswith("started\n[timed out after 1 s")
    (cell,) = await exported(client)
    assert cell["status"] == "timeout" and cell["agent_saw"] == "partial", cell  # was "full"


async def test_a_dataframes_html_is_its_text_and_an_html_display_is_named_not_reprd(client: Client) -> None:
    table = await run(client, "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3, 4]})")
    shown = await run(client, "from IPython.display import HTML, display\ndisplay(HTML('<b>bold</b> table'))")
    assert table.split() == ["a", "b", "0", "1", "3", "1", "2", "4"]
    # Was: `<IPython.core.display.HTML object>`, as if nothing had been displayed.
    assert shown.startswith("[text/html output recorded (") and "object>" not in shown, shown
    frame, html = await exported(client)
    assert "text/html" in frame["outputs"][0]["data"]
    assert frame["agent_saw"] == "full" and "placeholders" not in frame  # was "placeholder"
    assert html["agent_saw"] == "placeholder" and html["placeholders"] == ["text/html"]


async def test_an_r_data_frame_is_labelled_as_seen_whole(client: Client) -> None:
    reply = await run(client, "data.frame(mass = c(6300, 4200), island = c('Biscoe', 'Dream'))", "r")
    assert "6300" in reply and "Biscoe" in reply
    (frame,) = await exported(client)
    assert {"text/html", "text/latex", "text/markdown"} <= set(frame["outputs"][0]["data"])
    assert frame["agent_saw"] == "full" and "placeholders" not in frame, frame  # was "placeholder"


async def test_the_exported_language_info_is_the_kernels_own(client: Client, project: Path) -> None:
    # Was {"name": "python"}: JupyterLab rewrote it from the kernel on opening, and the notebook opened modified.
    await run(client, "print(1)")
    done = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    nb = nbformat.read(Path(done.split(" to ", 1)[1].split(";")[0]), as_version=4)
    km = AsyncKernelManager(kernel_name=nb.metadata.kernelspec.name)
    await km.start_kernel(cwd=str(project))
    try:
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        reply = await kc.kernel_info(reply=True, timeout=30)
        kc.stop_channels()
    finally:
        await km.shutdown_kernel(now=True)
    assert nb.metadata.language_info == reply["content"]["language_info"]
    assert {"version", "mimetype", "file_extension", "pygments_lexer"} <= set(nb.metadata.language_info)

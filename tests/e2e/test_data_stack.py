"""The data stack a fresh install brings (`context-kernel[analysis]`): load a CSV with pandas, aggregate, plot.

Through the MCP client a python cell reads a CSV with pandas, groups it, and draws the result with
matplotlib (Agg): the agent reads the aggregate; the plot is recorded (and exported) as an image,
not returned. tests/setup/test_install_extras.py checks that `make serve`/`make test` install it.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

CSV = "region,month,amount\nnorth,jan,120\nnorth,feb,135\nsouth,jan,90\nsouth,feb,160\neast,jan,75\neast,feb,80\n"
ANALYSIS = (
    "import pandas as pd\n"
    "import matplotlib\n"
    "matplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\n"
    "from IPython.display import Image, display\n"
    "sales = pd.read_csv('sales.csv')\n"
    "by_region = sales.groupby('region')['amount'].sum().sort_values(ascending=False)\n"
    "print(by_region.to_string())\n"
    "fig, ax = plt.subplots(figsize=(4, 3), dpi=50)\n"
    "by_region.plot.bar(ax=ax, title='amount by region')\n"
    "fig.savefig('by_region.png')\n"
    "plt.close(fig)\n"
    "display(Image(filename='by_region.png'))\n"
)


@pytest.mark.anyio
@pytest.mark.kernels
async def test_a_python_cell_loads_a_csv_with_pandas_groups_it_and_plots_an_image_that_is_recorded(
        client: Client, project: Path) -> None:
    (project / "sales.csv").write_text(CSV)
    result = await client.call_tool("ctx_execute", {"language": "python", "code": ANALYSIS})
    text = text_of(result)
    assert not result.is_error, text
    assert re.search(r"north\s+255\nsouth\s+250\neast\s+155", text), text  # largest first
    assert "image/png output recorded" in text and "iVBOR" not in text  # named, not returned as base64

    exported = text_of(await client.call_tool("ctx_export", {"path": "exports"}))
    [cell] = session_cells(nbformat.read(Path(exported.split(" to ", 1)[1].split(";")[0]), as_version=4))
    [png] = [o.data["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
    assert (project / "by_region.png").read_bytes() == base64.b64decode(png)


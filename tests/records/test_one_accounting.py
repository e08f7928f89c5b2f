"""One accounting: a session with text, a plot, a fetched page and a search has the same figures in ctx_stats, the
insight page and `context-kernel sessions`, by records/stats.py's definition; a plot counts as kept out (the reply
named it instead of sending it), a fetched page's "in" is its body for the tool and for its source alike, sizes
scale their unit, and the output cap's message states the configured cap."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of

from context_kernel.settings import Settings
from context_kernel.tools.server import create_server
from context_kernel.wording import size_text

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
PAGE = "<html><head><title>Notes</title><style>" + "p{color:red}" * 800 + "</style></head><body><h1>Notes</h1>" + \
       "".join(f"<p>Paragraph {i} about penguins and their weights.</p>" for i in range(200)) + "</body></html>"
PLOT = ("import io\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nfrom IPython.display "
        "import Image, display\nfig = plt.figure(figsize=(6, 4))\nplt.plot(range(50))\nbuf = io.BytesIO()\n"
        "fig.savefig(buf, format='png')\nplt.close(fig)\ndisplay(Image(data=buf.getvalue()))")


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
        yield f"http://127.0.0.1:{server.server_address[1]}/notes.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def figure(text: str, name: str) -> str:
    found = re.search(rf"{name} ([\d.]+ (?:B|KB|MB|GB))", text)
    assert found, (name, text)
    return found.group(1)


async def test_stats_insight_and_sessions_tell_the_same_figures(client: Client, settings: Settings, site: str) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('mean mass', 4201.75)"})
    plotted = text_of(await client.call_tool("ctx_execute", {"language": "python", "code": PLOT}))
    assert "image/png output recorded" in plotted
    assert not (await client.call_tool("ctx_fetch_and_index", {"url": site})).is_error
    assert "Paragraph" in text_of(await client.call_tool("ctx_search", {"queries": ["penguin weights"]}))

    stats = text_of(await client.call_tool("ctx_stats", {})).split("Lifetime")[0]
    took, kept = figure(stats, "in"), figure(stats, "kept out")
    plot_row = next(line for line in stats.splitlines() if line.strip().startswith("ctx_execute"))
    assert not plot_row.rstrip().endswith(" 0 B"), plot_row  # the plot was kept out, not "shown whole"
    fetch_row = next(line for line in stats.splitlines() if line.strip().startswith("ctx_fetch_and_index"))
    source_row = next(line for line in stats.splitlines() if line.strip().startswith(site))
    body = size_text(len(PAGE.encode()))
    assert body in fetch_row and body in source_row, (fetch_row, source_row)  # the body, for tool and source

    page = Path(text_of(await client.call_tool("ctx_insight", {})).split("Wrote ", 1)[1].split(" (")[0])
    row = re.search(r"<tr><td><code>[^<]+</code></td>.*?</tr>", await anyio.Path(page).read_text()).group(0)  # type: ignore[union-attr]
    cells = re.findall(r"<td class=n>([^<]+)</td>", row)
    assert cells[2] == took and cells[4] == kept, (cells, took, kept)  # in, returned, kept out

    listed = await anyio.run_process([sys.executable, "-m", "context_kernel", "sessions", "--project",
                                      str(settings.project_dir)], env={"CONTEXT_KERNEL_HOME": str(settings.home),
                                                                      "PATH": "/usr/bin:/bin"})
    (line,) = [ln for ln in listed.stdout.decode().splitlines()[1:] if ln.strip()]
    assert line.split("  ")[-2].strip() == kept or f" {kept} " in line, (line, kept)


async def test_the_output_cap_message_states_the_configured_cap(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project, hard_output_cap=2_000_000)
    async with Client(create_server(settings)) as client:
        reply = text_of(await client.call_tool("ctx_execute", {"language": "python", "code": (
            "import sys\nfor _ in range(4000): sys.stdout.write('z' * 1000 + '\\n')")}))
    assert "1.9 MB cap" in reply and "1 MB cap" not in reply, reply[-400:]


def test_sizes_scale_their_unit() -> None:
    assert [size_text(n) for n in (512, 56_934, 113 * 1024 * 1024 + 99_000, 8 * 1024 * 1024, 3 * 1024 ** 3)] == [
        "512 B", "55.6 KB", "113.1 MB", "8 MB", "3 GB"]

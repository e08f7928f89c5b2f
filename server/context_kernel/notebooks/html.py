"""HTML export via nbconvert, for people without Jupyter, with what the agent saw marked per cell."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import nbformat
from nbconvert import HTMLExporter
from nbformat import v4

from ..datadir import write_private
from .export import agent_view
from .notebook_head import SETUP_ROLE


def to_html(notebook_path: Path) -> Path:
    """Write `<notebook>.html` next to the notebook and return its path."""
    nb = nbformat.read(notebook_path, as_version=4)
    marked = copy.deepcopy(nb)
    marked.cells = []
    # An index notebook links its per-kernel notebooks; they are rendered next to it, so link those.
    listed = nb.metadata.get("context_kernel", {}).get("notebooks", [])
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for name in listed:
                cell.source = cell.source.replace(f"]({name})", f"]({Path(name).with_suffix('.html')})")
        marked.cells.append(cell)
        meta = cell.get("metadata", {}).get("context_kernel")
        if cell.cell_type == "code" and meta and meta.get("role") != SETUP_ROLE:
            marked.cells.append(v4.new_markdown_cell(_agent_view(meta)))
    html, _ = HTMLExporter().from_notebook_node(marked)
    out = notebook_path.with_suffix(".html")
    write_private(out, html.encode("utf-8"))
    return out


def _agent_view(meta: dict[str, Any]) -> str:
    # The anchor a citation in the agent's answer (`[#42]`) links to: page.html#exec-42
    cited = meta.get("execution_id")
    anchor = f'<a id="exec-{cited}"></a>**[#{cited}]** ' if cited else ""
    head = (f"> {anchor}**Shown to the agent:** {agent_view(meta)} · {meta.get('status')} · "
            f"{meta.get('duration_ms', '?')} ms")
    if meta.get("intent"):
        head += f" · intent: *{meta['intent']}*"
    reply = meta.get("agent_reply")
    if not reply:
        return head
    ticks = "```"
    while ticks in reply:
        ticks += "`"
    return f"{head}\n\n{ticks}text\n{reply}\n{ticks}"

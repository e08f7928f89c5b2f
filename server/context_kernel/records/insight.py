"""The local session viewer (ctx_insight, `context-kernel insight`): one static HTML page.

The reference's ctx_insight opens a hosted dashboard; ours writes a file next to the data and
sends nothing anywhere. It lists every recorded session with its accounting and links to the
notebooks already exported for it, and the sessions hooks remembered, so a person can find the
session to review and then export or replay it.
"""

from __future__ import annotations

import html
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..datadir import write_private
from ..wording import counted, size_text
from .stats import BYTES_PER_TOKEN

if TYPE_CHECKING:  # the store imports SQLAlchemy, which the handshake path must not load
    from ..store.events import EventRepository, ToolTotals
    from ..store.executions import ExecutionRepository, SessionSummary

MAX_SESSIONS = 500
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f4f4;padding:1px 4px}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}.muted{color:#777}td a{white-space:nowrap}
"""


@dataclass(frozen=True)
class SessionView:
    summary: SessionSummary
    totals: Sequence[ToolTotals] = ()
    exports: Sequence[Path] = field(default_factory=list)


def exports_of(export_dir: Path, session_id: str) -> list[Path]:
    """Notebooks and HTML pages already exported for a session (the file names export writes)."""
    import re

    stem = "session-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", session_id)[:60] or "session")
    try:
        return sorted(p for p in export_dir.iterdir()
                      if p.name.startswith(stem) and p.suffix in (".ipynb", ".html"))
    except OSError:
        return []


def _kb(n: int) -> str:
    return size_text(n)


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def _session_row(view: SessionView, page_dir: Path) -> str:
    s, e = view.summary, html.escape
    # ctx_stats' figures (records/stats.py): what the session's tool calls took in, returned and kept out.
    calls = sum(t.calls for t in view.totals)
    took = sum(t.bytes_in for t in view.totals)
    returned = sum(t.bytes_returned for t in view.totals)
    kept = sum(t.bytes_kept_out for t in view.totals)
    # The pages first and the entry point (the shortest name: the index) first among them, one a line.
    ordered = sorted(view.exports, key=lambda p: (p.suffix != ".html", len(p.name), p.name))
    links = "<br>".join(f'<a href="{e(os.path.relpath(p, page_dir))}">{e(p.name)}</a>' for p in ordered)
    export_hint = links or f'<code>context-kernel export {e(s.id)} --format html</code>'
    return (f"<tr><td><code>{e(s.id)}</code></td><td>{_when(s.started_at)}</td><td>{e(s.client or '-')}</td>"
            f"<td>{e(', '.join(s.languages) or '-')}</td><td class=n>{s.executions}</td><td class=n>{calls}</td>"
            f"<td class=n>{_kb(took)}</td><td class=n>{_kb(returned)}</td>"
            f"<td class=n>{_kb(kept)}</td><td>{export_hint}</td></tr>")


def _totals_table(rows: Sequence[ToolTotals]) -> str:
    head = ("<tr><th>tool</th><th>calls</th><th>errors</th><th>in</th><th>indexed</th><th>returned</th>"
            "<th>kept out</th></tr>")
    body = "".join(f"<tr><td>{html.escape(r.tool)}</td><td class=n>{r.calls}</td><td class=n>{r.errors}</td>"
                   f"<td class=n>{_kb(r.bytes_in)}</td><td class=n>{_kb(r.bytes_indexed)}</td>"
                   f"<td class=n>{_kb(r.bytes_returned)}</td><td class=n>{_kb(r.bytes_kept_out)}</td></tr>"
                   for r in rows)
    return f"<table>{head}{body}</table>" if rows else "<p class=muted>No tool calls recorded yet.</p>"


def render_insight(page: Path, home: Path, views: Sequence[SessionView], lifetime: Sequence[ToolTotals],
                   hook_sessions: Mapping[str, int], now: float | None = None) -> str:
    """The page for `page` (links to exports are relative to it, so the folder can be moved)."""
    took = sum(r.bytes_in for r in lifetime)
    kept = sum(r.bytes_kept_out for r in lifetime)
    saved = f"{kept / took:.1%}" if took else "n/a"
    rows = "".join(_session_row(v, page.parent) for v in views[:MAX_SESSIONS])
    hidden = len(views) - MAX_SESSIONS
    more = f"<p class=muted>{counted(hidden, 'older session')} not shown.</p>" if hidden > 0 else ""
    hooks = "".join(f"<tr><td><code>{html.escape(sid)}</code></td><td class=n>{n}</td></tr>"
                    for sid, n in sorted(hook_sessions.items()))
    hooks_table = (f"<table><tr><th>client session</th><th>events</th></tr>{hooks}</table>"
                   '<p class=muted>Search them with <code>ctx_search(queries=[...], source="session-events")</code>.'
                   "</p>") if hooks else \
        "<p class=muted>No hook events recorded (see <code>context-kernel setup</code>).</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>context-kernel sessions</title><style>{STYLE}</style></head>
<body>
<h1>context-kernel sessions</h1>
<p class=muted>Data dir <code>{html.escape(str(home))}</code> · written {_when(now or time.time())} · a local file:
nothing is sent anywhere.</p>
<h2>All sessions: what the tools took in and gave back</h2>
<p>In {_kb(took)}, kept out of the conversation {_kb(kept)} (≈{kept // BYTES_PER_TOKEN:,} tokens), saved {saved}.
In = output produced, pages fetched, files indexed; returned = bytes the agent received; kept out = per call
max(0, in − returned); tokens ≈ bytes ÷ 4.</p>
{_totals_table(lifetime)}
<h2>Sessions ({len(views):,})</h2>
<p>Export one as notebooks, then replay it: <code>context-kernel export SESSION --format html</code>,
<code>context-kernel replay NOTEBOOK</code>.</p>
<table><tr><th>session</th><th>started</th><th>client</th><th>languages</th><th>executions</th><th>tool calls</th>
<th>in</th><th>returned</th><th>kept out</th><th>exported</th></tr>{rows}</table>{more}
<h2>Session memory (hooks)</h2>
{hooks_table}
</body></html>
"""


@dataclass(frozen=True)
class InsightData:
    """What the page shows, read from the store in one hop."""

    sessions: Sequence[SessionSummary]
    totals: Mapping[str, Sequence[ToolTotals]]
    lifetime: Sequence[ToolTotals]
    hook_sessions: Mapping[str, int]


def read_insight(executions: ExecutionRepository, events: EventRepository) -> InsightData:
    """Everything the page needs from the store (blocking SQL: the database thread)."""
    sessions = executions.sessions()
    return InsightData(sessions, {s.id: events.tool_totals(s.id) for s in sessions}, events.tool_totals(),
                       events.event_counts())


def write_insight(data: InsightData, home: Path, export_dir: Path, page: Path) -> int:
    """Write the page atomically (blocking file work: a worker thread); returns how many sessions it lists."""
    views = [SessionView(s, data.totals.get(s.id, ()), exports_of(export_dir, s.id)) for s in data.sessions]
    text = render_insight(page, home, views, data.lifetime, data.hook_sessions)
    page.parent.mkdir(parents=True, exist_ok=True)
    write_private(page, text.encode("utf-8"))  # whole or not at all: a browser reloading it never sees half a page
    return len(views)

"""ctx_stats: what the tools took in, kept in the knowledge base and gave back, with every number defined.

Definitions (docs/stats.md repeats them; the reply prints the short form):
- bytes in: what a call took in on the agent's behalf — output its code produced (stdout, stderr,
  results, errors as recorded), pages it fetched (decoded body), files it indexed.
- indexed: bytes written into the knowledge base (searchable later).
- returned: UTF-8 bytes of the text the agent received.
- came back: bytes of the search hits (`### title — source: X` and the snippet) that ctx_search
  later sent from a source; counted for the source and for the tool that first took it in.
- kept out, of a call: 0 when its reply carried everything it took in (a cell's whole output),
  else max(0, in − (returned − the search hits in it)): hits are charged to their sources. Of a
  tool: its calls' kept out less what came back from its sources, never below 0. Of a source:
  max(0, in − came back). Total: the tools' kept out, summed.
- saved: kept out ÷ in; "n/a" while nothing was taken in.
- tokens: ≈ bytes ÷ 4, a rule of thumb for English text and code, not a tokenizer count.
So indexing a 114 KB file and searching 30 KB of it back keeps out 114 − 30 KB (less the index
call's own reply), and a session whose replies showed everything keeps out nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..wording import counted, size_text

if TYPE_CHECKING:  # the store imports SQLAlchemy, which the handshake path must not load
    from ..store.events import SourceTotals, ToolTotals

BYTES_PER_TOKEN = 4


def _kb(n: int) -> str:
    return size_text(n)


def _table(rows: Sequence[ToolTotals]) -> list[str]:
    lines = [f"  {'tool':<20} {'calls':>5} {'errors':>6} {'in':>10} {'indexed':>10} {'returned':>10} "
             f"{'came back':>10} {'kept out':>10}"]
    for r in rows:
        lines.append(f"  {r.tool:<20} {r.calls:>5} {r.errors:>6} {_kb(r.bytes_in):>10} {_kb(r.bytes_indexed):>10} "
                     f"{_kb(r.bytes_returned):>10} {_kb(r.bytes_back):>10} {_kb(r.bytes_kept_out):>10}")
    return lines


def _sources(rows: Sequence[SourceTotals]) -> list[str]:
    lines = [f"  {'source':<40} {'taken in by':<20} {'in':>10} {'came back':>10} {'kept out':>10}"]
    for r in rows:
        name = r.source if len(r.source) <= 40 else r.source[:39] + "…"
        lines.append(f"  {name:<40} {r.tool or '-':<20} {_kb(r.bytes_in):>10} {_kb(r.bytes_back):>10} "
                     f"{_kb(r.bytes_kept_out):>10}")
    return lines


def _summary(rows: Sequence[ToolTotals]) -> str:
    took = sum(r.bytes_in for r in rows)
    returned = sum(r.bytes_returned for r in rows)
    kept = sum(r.bytes_kept_out for r in rows)
    saved = f"{kept / took:.1%}" if took else "n/a (nothing taken in yet)"
    return (f"  {sum(r.calls for r in rows)} calls; in {_kb(took)}, returned {_kb(returned)} "
            f"(≈{returned // BYTES_PER_TOKEN:,} tokens), kept out {_kb(kept)} (≈{kept // BYTES_PER_TOKEN:,} tokens); "
            f"saved {saved}")


def render_stats(session_id: str, session: Sequence[ToolTotals], lifetime: Sequence[ToolTotals], sessions: int,
                 events: int, sources: Sequence[SourceTotals] = ()) -> str:
    lines = [f"This session ({session_id}):"]
    lines += [_summary(session), *(_table(session) if session else ["  no tool calls yet"])]
    if sources:
        lines += ["  per source (most taken in first):", *_sources(sources)]
    lines += ["", f"Lifetime (this data dir, {counted(sessions, 'session')}):", _summary(lifetime), *_table(lifetime)]
    lines += [f"  session events remembered by hooks: {events}", "",
              "in = output produced, pages fetched, files indexed; returned = bytes the agent received; "
              "came back = search hits sent later from a source; kept out = in − returned − came back (0 for a "
              "reply that showed all it took in); saved = kept out ÷ in; tokens ≈ bytes ÷ 4."]
    return "\n".join(lines)

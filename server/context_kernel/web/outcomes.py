"""What a fetch produced and how the reply says it (no heavy imports: the MCP layer uses it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..wording import counted

if TYPE_CHECKING:
    from ..store.knowledge import SourceRow

PREVIEW_BYTES = 3 * 1024


@dataclass(frozen=True)
class FetchRequest:
    url: str
    source: str | None = None


@dataclass
class FetchOutcome:
    url: str
    label: str
    status: Literal["new", "cached", "error"]
    source: SourceRow | None = None
    fetched_bytes: int = 0
    kind: str = ""
    age_s: float = 0.0
    preview: str = ""
    error: str = ""
    replaced: str = ""
    """The URL (or kind of content) this fetch replaced under the same label, or empty."""


@dataclass(frozen=True)
class FetchReply:
    """What ctx_fetch_and_index answers: an error when the one URL (or every URL of a batch) failed."""

    text: str
    is_error: bool


def preview(text: str) -> str:
    """At most 3 KB of the converted page, cut at a line end: enough to tell what was indexed."""
    data = text.encode("utf-8", "replace")
    if len(data) <= PREVIEW_BYTES:
        return text.strip()
    cut = data[:PREVIEW_BYTES].decode("utf-8", "ignore")
    return cut.rsplit("\n", 1)[0].strip() + "\n…"


def render_one(o: FetchOutcome) -> str:
    if o.status == "error":
        return f"Could not fetch {o.url}: {o.error}"
    assert o.source is not None
    search = f'ctx_search(queries=[...], source="{o.label}")'
    sections = counted(o.source.chunk_count, "section")
    if o.status == "cached":
        return (f'Cached: "{o.label}" was fetched {_age(o.age_s)} ago ({sections}); '
                f"searching it needs no refetch: {search}. Pass force=true (or ttl=0) to refetch.")
    replaced = (f' This replaced the page previously indexed as "{o.label}" ({o.replaced}); to keep both, fetch '
                "each under its own source label." if o.replaced else "")
    return (f'Fetched {o.url} ({o.kind}, {o.fetched_bytes / 1024:.1f} KB) and indexed {sections} '
            f'({o.source.code_chunks} with code) as "{o.label}".{replaced} Search it: {search}'
            f"\n\n--- preview ---\n{o.preview}")


def render_many(outcomes: list[FetchOutcome]) -> tuple[str, bool]:
    lines = []
    for i, o in enumerate(outcomes, 1):
        if o.status == "error":
            lines.append(f"{i}. {o.url} — error: {o.error.splitlines()[0]}")
        elif o.status == "cached":
            lines.append(f'{i}. {o.url} — cached ({_age(o.age_s)} old) as "{o.label}"')
        else:
            assert o.source is not None
            sections = counted(o.source.chunk_count, "section")
            lines.append(f'{i}. {o.url} — new: {sections} ({o.fetched_bytes / 1024:.1f} KB) '
                         f'as "{o.label}"' + (f" (replaced {o.replaced})" if o.replaced else ""))
    ok = sum(o.status != "error" for o in outcomes)
    lines.append(f"{ok} of {len(outcomes)} indexed; search them with ctx_search(queries=[...], source=...).")
    return "\n".join(lines), ok == 0


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"

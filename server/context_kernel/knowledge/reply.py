"""The text of a ctx_search reply: hits grouped by query, within the call's byte budget, each new hit cut to
its share (snippets around its best passages), hits sent before only named."""

from __future__ import annotations

import re

from .fusion import window_snippet
from .model import MAX_CHUNK_BYTES
from .search import Hit, SearchResult
from .snippets import MAX_SNIPPET_CHARS, share_out, snippet

# Room a hit's heading line takes in the reply, besides its snippet.
HIT_OVERHEAD = 160


def snippet_chars(budget: int, limit: int) -> int:
    """A hit's share of the reply budget: fewer hits asked for, longer snippets (never below the
    lexical default, never above a whole chunk)."""
    return max(MAX_SNIPPET_CHARS, min(MAX_CHUNK_BYTES, (budget - HIT_OVERHEAD) // max(1, limit) - HIT_OVERHEAD))


def render(results: list[SearchResult], already: dict[int, int], budget: int, notes: list[str],
           kind: str | None = None, *, projects: bool = False, twins: dict[int, tuple[int, str]] | None = None
           ) -> tuple[str, list[int], int, dict[str, int]]:
    """The reply: hits grouped by query, within `budget` bytes; chunks sent before are only named.
    Also the bytes of the hits sent, per source label. `projects`: each label names its project
    (a search over every project's sources).

    New hits share the budget left after headers: each may grow to its share, and what a short
    hit does not need goes to the others (a fixed 1,500-character snippet cut answers out of
    replies that used half their budget).
    """
    parts: list[str] = list(notes)
    headers = [_header(result, kind) for result in results]
    twins = twins or {}
    named = {**already, **{k: call for k, (call, _) in twins.items()}}  # only named: no snippet budget for them
    snippets = _sized_snippets(results, named, budget - sum(len(p.encode()) + 2 for p in parts), headers,
                               projects)
    used = sum(len(p.encode()) for p in parts)
    sent: list[int] = []
    seen_now: set[int] = set()
    shown = 0
    left_out = 0
    back: dict[str, int] = {}
    for result, header in zip(results, headers, strict=True):
        block = [header]
        for hit in result.hits:
            c = hit.chunk
            where = _where(hit, projects)
            if c.id in already or c.id in seen_now:
                when = f"search call {already[c.id]}" if c.id in already else "this reply"
                entry = f"### {where}\n(already sent in {when}; not repeated)"
            elif c.id in twins:
                call_no, label = twins[c.id]
                entry = f"### {where}\n(same text as {label}, sent in search call {call_no}; not repeated)"
            elif c.id in snippets:
                entry = f"### {where}\n{snippets[c.id]}"
            else:
                left_out += 1
                continue
            size = len(entry.encode()) + 1
            if used + size > budget and shown:
                left_out += 1
                continue
            block.append(entry)
            used += size
            shown += 1
            if c.id not in already and c.id not in seen_now:
                sent.append(c.id)
                seen_now.add(c.id)
                if c.id not in twins:  # a twin is only named: nothing of its source came back
                    back[c.label] = back.get(c.label, 0) + size
        parts.append("\n".join(block))
        used += len(header.encode())
    if left_out:
        parts.append(f"[{left_out} more hit(s) left out to stay within {budget // 1024} KB: narrow with source= "
                     "or a more specific query]")
    return "\n\n".join(parts), sent, shown, back


# A hit is worth showing with at least this much text; below it, lower-ranked hits are left out.
MIN_SHARE = 500
# A section up to WHOLE_BYTES is shown whole; a longer one gets HIT_BYTES around its best passages.
# An answer is a sentence or a code block: two hits of a kilobyte each carried it as often as two of
# three (bench/retrieval, dev), at half the bytes an agent reads.
HIT_BYTES = 1600
WHOLE_BYTES = 2000


# The source an execution's large output is indexed under (execution/service.py names it so).
EXECUTION_LABEL = re.compile(r"exec-(\d+)")


def _want(size: int) -> int:
    return size if size <= WHOLE_BYTES else HIT_BYTES
# Room kept for entry separators and the "left out" note.
RESERVE = 160


def _where(hit: Hit, projects: bool = False) -> str:
    where = f"{hit.chunk.title} — source: {hit.chunk.label}"
    if (cell := EXECUTION_LABEL.fullmatch(hit.chunk.label)) is not None:
        where += f" [#{cell[1]}]"  # an execution's output: cited as its reply was, for the agent to cite
    if projects:
        project = hit.chunk.project_dir
        where += f" (project: {project})" if project else " (project: unknown, indexed before projects were recorded)"
    if hit.also_in:
        where += " (same text in " + ", ".join(hit.also_in[:5]) + (", …" if len(hit.also_in) > 5 else "") + ")"
    return where


def _header(result: SearchResult, kind: str | None) -> str:
    header = f"## {result.query}"
    if result.corrections:
        header += "\n(no match for " + ", ".join(f"'{a}' — searched '{b}'" for a, b in result.corrections.items())
        header += ")"
    if result.missing:
        names = ", ".join(f"'{m}'" for m in result.missing)
        header += f"\n(no {kind + ' ' if kind else ''}section holds {names}"
        header += "; the results match the query's other words)" if result.hits else ")"
    if not result.hits:
        header += "\n(no results)"
    return header


def _sized_snippets(results: list[SearchResult], already: dict[int, int], budget: int,
                    headers: list[str], projects: bool = False) -> dict[int, str]:
    """Chunk id → its snippet, for the new hits that get a share of the budget."""
    fixed = sum(len(h.encode()) + 2 for h in headers) + RESERVE
    fresh: list[tuple[int, int, SearchResult, int]] = []  # (rank in its query, query, result, hit index)
    seen: set[int] = set()
    for q, result in enumerate(results):
        for rank, hit in enumerate(result.hits):
            c = hit.chunk
            fixed += len(f"### {_where(hit, projects)}\n".encode()) + 1
            if c.id in already or c.id in seen:
                fixed += 48  # "(already sent in ...; not repeated)"
                continue
            seen.add(c.id)
            fresh.append((rank, q, result, rank))
    # Best hits of every query first: when the budget cannot give each a useful share, the
    # lowest-ranked ones are left out, not every one cut to a few lines.
    fresh.sort(key=lambda item: (item[0], item[1]))
    room = max(0, budget - fixed)
    fresh = fresh[:max(1, room // MIN_SHARE)]
    sizes = [len(r.hits[i].chunk.content.encode()) for _, _, r, i in fresh]
    # A lone hit may be shown whole: the reply has no other passage to spend its bytes on.
    wants = [_want(size) for size in sizes] if len(sizes) > 1 else sizes
    out: dict[int, str] = {}
    for (_, _, result, i), share in zip(fresh, share_out(wants, room), strict=True):
        hit = result.hits[i]
        content = hit.chunk.content
        if share >= len(content.encode()):
            out[hit.chunk.id] = content
            continue
        # Shares are bytes, snippets count characters: scale by the chunk's own ratio.
        chars = max(MIN_SHARE // 2, share * len(content) // max(1, len(content.encode())) - 8)
        if hit.window is not None:  # a hybrid hit: around where the model found the meaning
            out[hit.chunk.id] = window_snippet(content, *hit.window, chars, result.matcher)
        elif result.matcher is None:
            out[hit.chunk.id] = hit.snippet
        else:
            out[hit.chunk.id] = snippet(content, result.matcher, limit=chars)
    return out

"""The agent's reading between its cells, in the exported notebook: each search, fetch, index call and batch, as
a markdown cell at its place in time, with what was asked and what came back (records/conversation.py keeps them,
capped and redacted). A reviewer then sees what the agent had read before the cell that used it."""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from nbformat import v4

from ..store.events import ConversationCall
from ..store.executions import ExecutionRow
from .narration import Narration


def in_order(rows: Sequence[ExecutionRow], calls: Sequence[ConversationCall], said: Sequence[Narration] = ()
             ) -> Iterator[ExecutionRow | ConversationCall | Narration]:
    """Executions, conversation calls and what was said, merged by when they happened (each list is in order
    already); what was said comes first at the same instant: a prompt leads to its cells."""
    def when(item: ExecutionRow | ConversationCall | Narration) -> float:
        return item.at if isinstance(item, Narration) else item.started_at

    return heapq.merge(said, rows, calls, key=when)


def narration_cell(item: Narration, index: int) -> Any:
    """A markdown cell of the user's prompt or the agent's words, quoted as they were (redacted, capped)."""
    who = "**User**" if item.role == "user" else "**Agent**"
    quoted = "\n".join("> " + line if line else ">" for line in item.text.splitlines())
    cell = v4.new_markdown_cell(f"{who}:\n\n{quoted}")
    cell.id = f"said-{index}"
    cell.metadata["context_kernel"] = {"role": "narration", "said_by": item.role,
                                       "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(item.at))}
    return cell


def call_cell(call: ConversationCall) -> Any:
    """A markdown cell: the tool, what it was asked, and its reply as the agent read it."""
    try:
        asked = _asked(call.tool, json.loads(call.arguments))
    except ValueError:  # capped mid-way: not JSON any more, shown as it is
        asked = call.arguments
    ticks = "```"
    while ticks in call.reply:
        ticks += "`"
    failed = " — answered with an error" if call.is_error else ""
    cell = v4.new_markdown_cell(f"> **{call.tool}**{failed}: {asked}\n\n{ticks}text\n{call.reply}\n{ticks}")
    cell.id = f"call-{call.id}"
    cell.metadata["context_kernel"] = {
        "call_id": call.id, "tool": call.tool, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                        time.gmtime(call.started_at))}
    return cell


def _asked(tool: str, arguments: Any) -> str:
    """The question in a line: a search's queries, a fetch's URL, an index call's path or source."""
    if not isinstance(arguments, dict):
        return f"`{json.dumps(arguments, ensure_ascii=False)}`"
    if tool == "ctx_search" and isinstance(arguments.get("queries"), list):
        scope = f" in `{arguments['source']}`" if arguments.get("source") else ""
        return ", ".join(f"*{q}*" for q in arguments["queries"]) + scope
    shown = {k: v for k, v in arguments.items() if k != "content"}
    if "content" in arguments:
        shown["content"] = f"{len(str(arguments['content'])):,} characters"
    return f"`{json.dumps(shown, ensure_ascii=False)}`"

"""What the agent reads after a cell: stdout (+ last value), and on failure stderr and a traceback; and every
other piece of text an execution's reply carries (the kernel-stopped notice, the python header, the intent
excerpt's head, the note on a record that could not be saved): one author for what the agent reads."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..kernels.languages import Language
from ..wording import size_text
from .collector import OutputCollector
from .runner import CellOutcome
from .text import strip_ansi
from .tracebacks import compact_traceback

ReplyKind = Literal["full", "trimmed", "intent", "partial"]


@dataclass(frozen=True)
class ShapedReply:
    text: str
    is_error: bool
    kind: ReplyKind
    """Whether the agent saw all of the output, its head and tail, the lines matching the intent, or all of it
    but a part left out (a traceback shortened, stderr counted but not shown, a timeout's interrupt traceback)."""


def shape_reply(
    collector: OutputCollector,
    outcome: CellOutcome,
    *,
    exec_id: int,
    language: Language | None,
    notes: list[str],
    body: str | None = None,
    source_label: str | None = None,
) -> ShapedReply:
    """`body` replaces the stdout text (intent excerpts); `source_label` names where the full output is indexed."""
    if source_label:
        marker = f'; the full output is indexed: ctx_search(queries=[...], source="{source_label}")'
    else:
        marker = f"; the full output is recorded as execution #{exec_id}"
    stdout = body if body is not None else strip_ansi(collector.stdout.render(marker))
    trimmed = collector.stdout.trimmed or collector.stderr.trimmed
    parts: list[str] = [stdout.rstrip("\n")] if stdout.strip() else []
    is_error = outcome.status not in ("ok", "running")
    left_out = False  # a part of the output the reply does not carry (not a cut: a whole part)
    if _answered_with_exit_1(collector, outcome, language, stdout):
        is_error = False
        parts += ([] if parts else ["(no output)"]) + ["[exit code 1]"]
    if is_error:
        failure, left_out = _failure(collector, outcome)
        parts += failure
    elif collector.stderr.total_bytes:
        parts.append(f"[stderr: {collector.stderr.total_bytes} bytes, not shown; recorded with execution #{exec_id}]")
        left_out = True
    parts += _endings(collector, outcome, exec_id, notes)
    if not parts:
        parts.append("(no output)")
    kind: ReplyKind = ("intent" if body is not None else "trimmed" if trimmed else "partial" if left_out
                       else "full")
    return ShapedReply("\n".join(parts), is_error, kind)


def _answered_with_exit_1(collector: OutputCollector, outcome: CellOutcome, language: Language | None,
                          stdout: str) -> bool:
    """A shell command that exits 1 after printing an answer (grep found some lines, diff found
    differences) or quietly (grep found nothing, test said no) answered; exit 1 with a complaint on
    stderr (`cat missing-file`) is a failure."""
    return (language is not None and language.name == "shell" and outcome.status == "error"
            and outcome.error_name == "ExitCode" and outcome.error_value == "1"
            and (bool(stdout.strip()) or not collector.stderr_text.strip()))


def _failure(collector: OutputCollector, outcome: CellOutcome) -> tuple[list[str], bool]:
    """What a failed cell adds: its stderr, then its traceback or its error's name; and whether a part of the
    failure was left out (a shortened traceback, or the interrupt's traceback of a timed-out cell)."""
    parts = []
    err_text = collector.stderr_text.strip()
    if err_text:
        parts.append("--- stderr ---\n" + err_text)
    traceback = collector.error.get("traceback") if collector.error else None
    if outcome.status == "timeout":
        return parts, bool(traceback)  # the KeyboardInterrupt traceback of our own interrupt says nothing new
    if traceback:
        compact = compact_traceback(traceback)
        return [*parts, compact.text], compact.shortened
    if outcome.error_name and outcome.error_name not in ("Timeout",):
        parts.append(f"{outcome.error_name}: {outcome.error_value or ''}".rstrip(": "))
    return parts, False


def _endings(collector: OutputCollector, outcome: CellOutcome, exec_id: int, notes: list[str]) -> list[str]:
    """The bracketed lines at the end: how the cell ended when not by itself, the cap, the notes."""
    parts = []
    if outcome.status == "timeout":
        parts.append(f"[{'; '.join(notes) or 'timed out'}: {outcome.error_value}]")
        notes = []
    elif outcome.status == "died":
        parts.append(f"[{outcome.error_value}; its variables are lost and the next call starts a new kernel]")
    elif outcome.status == "running":
        parts.append(f"[still running in the background as execution #{exec_id}; its further output is recorded]")
    if collector.capped:
        parts.append(f"[output passed the {size_text(collector.hard_cap)} cap: the cell was interrupted and "
                     f"{collector.dropped_after_cap} later bytes were dropped]")
    if notes:
        parts.append("[" + "; ".join(notes) + "]")
    return parts


def prefixed(reply: ShapedReply, *lines: str | None) -> ShapedReply:
    """The reply with these lines first (the ones given, in order; None and "" are skipped)."""
    head = [line for line in lines if line]
    return replace(reply, text="\n".join([*head, reply.text])) if head else reply


def stopped_notice(name: str, stopped: str) -> str:
    """Said first: the agent must read why its variables are gone before any NameError."""
    return (f"[your {name} kernel {stopped}; this call ran in a new one, so variables, imports and loaded data "
            "from before are gone]")


def citation(exec_id: int) -> str:
    """How a reply names its execution, so the agent can write "6,300 g [#42]" and a reviewer find the cell
    (`context-kernel show 42`, the export's `#exec-42` anchor). A few bytes: it ends every reply."""
    return f"[#{exec_id}]"


def sent_text(text: str, note: str | None, exec_id: int) -> str:
    """The reply as sent: its text, the recording-failure note (CellRecord.reply_note) when there is one, and
    the citation last. The record keeps the text without the citation: the id is the record's own."""
    return "\n".join([text, *([note] if note else []), citation(exec_id)])


def intent_head(*, total_lines: int, total_kb: float, label: str, sections: str, clipped: bool, matched: int,
                intent: str, shown_lines: int) -> str:
    """The line above an intent excerpt: how much output there was, where it is indexed, what is shown."""
    found = (f"{matched} line{'s' if matched != 1 else ''} hold{'s' if matched == 1 else ''} the intent's words "
             "(> marks them)" if matched else f"no line holds the words of {intent!r}")
    return (f"[{total_lines} lines / {total_kb:.1f} KB of output, indexed as source \"{label}\" ({sections}"
            f"{', first 8 MB' if clipped else ''}); {found}. Shown: {shown_lines}, ranked by the intent, rare line "
            f'shapes, failure cues and extremes; more: ctx_search(queries=[...], source="{label}")]')


"""ctx_batch_execute: gather with shell commands, index every output, answer questions from the index.

Concurrency 1 runs the commands in order on one shell kernel with one shared time budget (later
commands are skipped once it is spent). Above 1, a pool of shell kernels runs them with a
timeout each; the reply keeps the input order either way. Kernels are fresh, so a batch's `cd`
or exports never leak into the agent's own shell.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Literal

import anyio

from ..activity import doing
from ..batches import check_batch
from ..kernels.backend import Kernel
from ..kernels.languages import SHELL_KERNEL
from ..kernels.pool import KernelPool
from ..knowledge.chunking.plain import chunk_text
from ..knowledge.model import Chunk
from ..knowledge.service import KnowledgeService
from ..knowledge.terms import is_distinctive, stem, words
from ..metering import count
from ..security.call_guard import DenyGuard
from ..wording import counted
from .reply import citation
from .requests import Command, ExecuteRequest, SessionRef
from .service import ExecutionService

MAX_COMMANDS = 50


@dataclass
class CommandResult:
    command: Command
    status: Literal["skipped", "ok", "timeout", "error"] = "skipped"
    output: str = ""
    error: str = ""
    execution_id: int | None = None
    seconds: float = 0.0
    position: int = 0
    """1-based, of `total`: what the progress notification names."""
    total: int = 0


@dataclass(frozen=True)
class BatchReply:
    text: str
    execution_ids: list[int]
    """each command's execution, in the commands' order (the rows cite them: `[#42]`)"""


class BatchService:
    def __init__(self, *, execution: ExecutionService, knowledge: KnowledgeService, pool: KernelPool,
                 guard: DenyGuard | None = None) -> None:
        self._execution = execution
        self._knowledge = knowledge
        self._pool = pool
        self._guard = guard

    async def run(self, commands: list[Command], queries: list[str], *, session: SessionRef, concurrency: int = 1,
                  timeout_ms: int | None = None, query_scope: str = "batch") -> BatchReply:
        check_batch(len(commands), MAX_COMMANDS, concurrency, noun="commands",
                    example="commands=[{label, command}, ...]")
        timeout, _ = self._execution.clamp_timeout(timeout_ms)
        if self._guard is not None:
            for c in commands:  # one denied command refuses the batch before anything runs
                self._guard.check_shell(c.command)
        results = [CommandResult(c, position=i, total=len(commands)) for i, c in enumerate(commands, 1)]
        started = time.monotonic()
        if concurrency == 1:
            await self._serial(results, session, started + timeout / 1000,
                               f"the batch's {timeout / 1000:g} s time budget")
        else:
            await self._parallel(results, session, concurrency, timeout / 1000,
                                 f"the batch's {timeout / 1000:g} s timeout per command")
        label = f"batch-{next((r.execution_id for r in results if r.execution_id), 0)}"
        document = "\n".join(f"# {r.command.label}\n{r.output}" for r in results)
        count(bytes_in=sum(len(r.output.encode()) for r in results))
        chunks = _chunks(results)
        row = await self._knowledge.index_chunks(label=label, chunks=chunks, text=document, kind="batch",
                                                 session_id=session.id, origin="ctx_batch_execute")
        ran = counted(len(results), "command")
        lines = [f"Ran {ran} (concurrency {concurrency}, {time.monotonic() - started:.1f} s); "
                 f'output indexed as source "{label}" ({counted(row.chunk_count, "section")}):']
        lines += _inventory_rows(results)
        if any(q.strip() for q in queries):
            reply = await self._knowledge.search(queries, session_id=session.id,
                                                 source=label if query_scope == "batch" else None)
            lines += ["", reply.text]
        terms = await self._distinctive([c.content for c in chunks])
        if terms:
            lines += ["", "Distinctive terms for follow-up ctx_search: " + ", ".join(terms)]
        return BatchReply("\n".join(lines), [r.execution_id for r in results if r.execution_id])

    async def _serial(self, results: list[CommandResult], session: SessionRef, deadline: float, limit: str) -> None:
        async with self._pool.throwaway(SHELL_KERNEL) as kernel:
            for r in results:
                if time.monotonic() >= deadline:
                    break  # the rest stay "skipped"
                await self._one(kernel, r, session, deadline, limit)

    async def _parallel(self, results: list[CommandResult], session: SessionRef, concurrency: int,
                        per_command_s: float, limit: str) -> None:
        queue = list(results)

        async def worker() -> None:
            async with self._pool.throwaway(SHELL_KERNEL) as kernel:
                while queue:
                    r = queue.pop(0)
                    await self._one(kernel, r, session, time.monotonic() + per_command_s, limit)

        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, len(results))):
                tg.start_soon(worker)

    async def _one(self, kernel: Kernel, r: CommandResult, session: SessionRef, deadline: float,
                   limit: str) -> None:
        began = time.monotonic()
        doing(f"batch command {r.position} of {r.total}: {r.command.label}")
        req = ExecuteRequest(code=r.command.command, language="shell", tool="ctx_batch_execute")
        exec_id, outcome, collector = await self._execution.run_recorded(
            kernel, req, session, deadline, r.command.label, limit)
        r.execution_id = exec_id
        r.output = await self._execution.recorded_output(exec_id)
        stderr = collector.stderr_text.strip()
        if outcome.status == "ok":
            r.status = "ok"
        elif outcome.status == "timeout":
            r.status, r.error = "timeout", "interrupted at the time limit"
        else:
            r.status = "error"
            r.error = f"{outcome.error_name}: {outcome.error_value}" if outcome.error_name else "failed"
            if stderr:
                r.output += ("\n" if r.output and not r.output.endswith("\n") else "") + stderr + "\n"
                r.error += " — " + stderr.splitlines()[-1][:200]
        r.seconds = time.monotonic() - began

    async def _distinctive(self, sections: list[str], count: int = 12) -> list[str]:
        """Words worth a follow-up search: rare across the batch's sections and the rest of the index.

        Term frequency picked the filler (`description, available, none, package` from a dozen
        outputs saying "(no description available)"): a word in every section says nothing about
        any of them. So a word scores by how concentrated it is (inverse section frequency within
        the batch), a little by how often it occurs there, and less the more other sources hold it.
        """
        tf: Counter[str] = Counter()
        sf: Counter[str] = Counter()
        budget = 4_000_000
        for text in sections:
            found = [w for w in words(text[:budget]) if is_distinctive(w)]
            budget -= len(text)
            tf.update(found)
            sf.update(set(found))
            if budget <= 0:
                break
        n = len(sections)
        # A word in more than a quarter of the sections names none of them.
        local = {w: math.log(1 + tf[w]) * math.log(1 + n / sf[w]) for w in tf if sf[w] <= max(1, n // 4)}
        candidates = sorted(local, key=lambda w: -local[w])[:300]
        df = await self._knowledge.stem_frequencies([stem(w) for w in candidates])
        # df counts this batch's own sections too: what is left is how common the word is elsewhere.
        scored = sorted(candidates, key=lambda w: -local[w] / math.log(2 + max(0, df.get(stem(w), 0) - sf[w])))
        return scored[:count]


def _cited(r: CommandResult) -> str:
    """' [#42]' after a command that ran: its execution, for the agent to cite (a skipped one has none)."""
    return f" {citation(r.execution_id)}" if r.execution_id else ""


def _inventory_rows(results: list[CommandResult]) -> list[str]:
    """One row per command; a run of commands repeating an earlier output is one row (a dozen
    identical rows told the agent nothing twelve times)."""
    first_with: dict[str, int] = {}
    same: list[int | None] = []
    for i, r in enumerate(results, 1):
        same.append(first_with.get(r.output) if r.output.strip() else None)
        if r.output.strip():
            first_with.setdefault(r.output, i)
    rows = []
    i = 0
    while i < len(results):
        r = results[i]
        j = i
        while (j + 1 < len(results) and same[i] is not None and same[j + 1] == same[i]
               and results[j + 1].status == r.status):
            j += 1
        if j - i >= 2:
            labels = [x.command.label + _cited(x) for x in results[i:j + 1]]
            shown = ", ".join(labels[:4]) + (", …" if len(labels) > 4 else "")
            rows.append(f"  {i + 1}–{j + 1}. {shown} ({len(labels)} commands): {r.status}, same output as {same[i]}")
        else:
            j = i
            rows.append(f"  {i + 1}. {r.command.label}{_cited(r)}: {r.status}, {_inventory(r, same[i])}")
        i = j + 1
    return rows


def _inventory(r: CommandResult, same_as: int | None) -> str:
    """One command's row after its label and status: size, or that it repeats an earlier output."""
    if r.status == "skipped":
        return "not run: the batch's time budget was spent"
    n = r.output.count("\n")
    size = len(r.output.encode())
    info = f"{n} line{'s' if n != 1 else ''}, " + (f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB")
    if same_as is not None:
        info += f", same output as {same_as}"
    return info + (f" — {r.error}" if r.error else "")


def _chunks(results: list[CommandResult]) -> list[Chunk]:
    chunks: list[Chunk] = []
    for r in results:
        if not r.output.strip():
            chunks.append(Chunk(title=r.command.label, content=f"(no output; {r.status})", kind="prose"))
            continue
        for part in chunk_text(r.output):
            chunks.append(Chunk(title=f"{r.command.label} > {part.title}", content=part.content, kind=part.kind))
    return chunks

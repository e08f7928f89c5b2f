"""The execution service behind ctx_execute and ctx_execute_file.

Order of work for one call: validate → record `pending` → get a kernel → run the cell →
shape the reply → complete the record. Every path, refused ones included, ends in the record.
"""

from __future__ import annotations

import json
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio

from ..activity import doing
from ..errors import ContextKernelError, InvalidRequest, KernelError, StoreError
from ..kernels.backend import Kernel
from ..kernels.languages import SHELL_KERNEL, Language, language_for_kernel, resolve_language
from ..kernels.pool import KernelPool
from ..kernels.python_env import ProjectPython
from ..knowledge.intent import intent_excerpt
from ..knowledge.service import KnowledgeService
from ..metering import count
from ..paths import resolve_in_project
from ..security.call_guard import DenyGuard
from ..settings import INTENT_REPLY_BUDGET, INTENT_REPLY_OVERHEAD, INTENT_THRESHOLD
from ..store.db import Database
from ..store.executions import ExecutionRepository, ExecutionStart, recorded_stdout
from ..wording import counted
from .background import BackgroundCells, Spawn
from .collector import OutputCollector
from .files import file_hash
from .provenance import FileHashes, written_images
from .recording import CellRecord, Recorder
from .remote_files import read_for_remote
from .reply import intent_head, prefixed, sent_text, shape_reply, stopped_notice
from .requests import ExecuteReply, ExecuteRequest, SessionRef
from .runner import CellOutcome, CellRun, Progress, run_quietly

# Output beyond this is recorded but not indexed: indexing holds the text and its chunks in
# memory (about six times its size), and the server must stay small whatever a cell prints.
MAX_INDEXED_OUTPUT = 8 * 1024 * 1024


@dataclass(frozen=True)
class ExecutionLimits:
    return_budget: int
    hard_output_cap: int
    default_timeout_ms: int
    max_timeout_ms: int
    progress_interval_s: float = 5.0
    restart_timeout_s: float = 60.0


class ExecutionService:
    def __init__(
        self, *, db: Database, executions: ExecutionRepository, pool: KernelPool, project_dir: Path,
        limits: ExecutionLimits, spawn: Spawn, knowledge: KnowledgeService | None = None,
        guard: DenyGuard | None = None, python: ProjectPython | None = None,
    ) -> None:
        self._db = db
        self._executions = executions
        self._recorder = Recorder(db, executions)
        self._pool = pool
        self._project_dir = project_dir
        self._hashes = FileHashes()
        self._limits = limits
        self._spawn = spawn
        self._knowledge = knowledge
        self.guard = guard
        self._known_sessions: set[str] = set()
        self.background = BackgroundCells(db=db, executions=executions, pool=pool, hashes=self._hashes,
                                          project_dir=project_dir, spawn=spawn,
                                          max_timeout_s=limits.max_timeout_ms / 1000, knowledge=knowledge,
                                          restart_timeout_s=limits.restart_timeout_s)
        self._python = python
        self._told_python: set[str] = set()  # sessions whose first python reply named the interpreter

    async def execute(self, req: ExecuteRequest, session: SessionRef, progress: Progress | None = None) -> ExecuteReply:
        """ctx_execute / ctx_execute_file. Code that fails in the kernel is a reply (`is_error`); a call
        refused before it runs, or a kernel that cannot be had, is recorded and then raised."""
        reply = await self._execute(req, session, progress)
        count(bytes_in=reply.bytes_produced, shown_whole=reply.whole)
        return reply

    async def _execute(self, req: ExecuteRequest, session: SessionRef, progress: Progress | None) -> ExecuteReply:
        await self._touch(session)
        file_path: Path | None = None
        digest: str | None = None
        try:
            language, kernel_name = self._resolve(req)
            timeout_ms, clamp_note = self._timeout(req.timeout_ms)
            if self.guard is not None:
                # Checked before anything runs; a denial is recorded as a refused call.
                if req.path is not None:
                    self.guard.check_path(req.path)
                self.guard.check_code(language.name if language else (req.language or ""), req.code)
            if req.path is not None:
                file_path = resolve_in_project(self._project_dir, req.path, tool=req.tool)
                digest = await anyio.to_thread.run_sync(file_hash, file_path)
        except ContextKernelError as exc:
            await self._refuse(req, session, exc)
            raise
        python, python_env = self._interpreter_of(kernel_name)
        record = await self._recorder.start(ExecutionStart(
            session_id=session.id, tool=req.tool, code=req.code, language=language.name if language else req.language,
            kernel_name=kernel_name, fresh=req.fresh, background=req.background, intent=req.intent,
            file_path=str(file_path) if file_path else None, file_hash=digest, timeout_ms=timeout_ms,
            python=python, python_env=python_env,
        ))
        collector = OutputCollector(self._limits.return_budget, self._limits.hard_output_cap)
        stack = AsyncExitStack()
        run: CellRun | None = None
        try:
            kernel = await self._kernel(stack, req, session, kernel_name, language)
            stopped = None if req.fresh or req.background else self._pool.take_notice(session.id, kernel_name)
            # The timeout is the cell's own: a kernel start has its own limit.
            deadline = time.monotonic() + timeout_ms / 1000
            if file_path is not None:
                await self._define_file_vars(kernel, language, file_path, deadline)
            record.outputs = collector  # the outputs left at idle are written with the end
            run = CellRun(kernel, collector, record.add_outputs, progress, self._limits.progress_interval_s,
                          final_flush=False)
            # Our kernels read the file named in the metadata; a remote kernel got its content instead.
            metadata = ({"context_kernel": {"file_path": str(file_path)}}
                        if file_path and kernel.sees_server_files else None)
            run.send(req.code, metadata)
            if await run.wait(deadline):
                outcome = await run.outcome()
            elif req.background:
                reply = prefixed(shape_reply(run.collector, CellOutcome(status="running"), exec_id=record.exec_id,
                                             language=language, notes=[n for n in [clamp_note] if n]),
                                 self._python_header(session, run.kernel.kernel_name))
                return await self.background.start(run, stack, record, req, session.id, reply)
            else:
                outcome = await run.stop_after_timeout(self._limits.restart_timeout_s)
                outcome.note = f"timed out after {timeout_ms / 1000:g} s"
            if (outcome.status == "died" or outcome.replace_kernel) and not req.fresh:
                await self._pool.discard(session.id, kernel_name)
        except KernelError as exc:
            await stack.aclose()
            await record.kernel_failed(exc, str(exc))  # str(exc): what the MCP edge will answer
            raise
        except BaseException:
            # Cancelled (the client went away — on the 2026-07-28 protocol closing the response
            # stream is how a client cancels — or the server is stopping) or a bug. A cell left
            # running would hold the kernel and delay the session's next call, its output
            # unrecorded: interrupt it (bounded), keep what it printed, never leave it `pending`.
            with _shielded():
                if run is not None and not run.finished:
                    with anyio.move_on_after(2 * self._limits.restart_timeout_s):
                        await run.stop_after_timeout(self._limits.restart_timeout_s)
                    await run.flush()
                await stack.aclose()
                await record.cancelled(collector.bytes_produced)
            raise
        await stack.aclose()
        return await self._complete(record, req, session, language, collector, outcome, clamp_note, kernel,
                                    stopped)

    async def prewarm(self, count: int) -> list[str]:
        """Start, before any call asks, the python kernel and the languages this project used most
        recently (`count` kernels in all, within the pool's room); returns the kernel names started."""
        if count <= 0:
            return []
        recent = await self._db.run(self._executions.recent_languages, str(self._project_dir), count)
        names: list[str] = []
        for language in ["python", *recent]:
            try:
                lang = resolve_language(language)
            except ContextKernelError:
                continue  # a language of an older version, or a kernelspec's own name
            python = lang.name == "python" and self._python is not None
            names.append(self._python.kernel_name if python and self._python else lang.kernel_name)
        return await self._pool.prewarm(list(dict.fromkeys(names))[:count])

    def _resolve(self, req: ExecuteRequest) -> tuple[Language | None, str]:
        if req.kernel:
            # The kernel decides; `language` only names one for a kernelspec we do not know.
            known = language_for_kernel(req.kernel)
            return known or (resolve_language(req.language) if req.language else None), req.kernel
        if not req.language:
            raise InvalidRequest("language is required", hint="pass language (e.g. python, shell, r) or kernel")
        lang = resolve_language(req.language)
        if lang.name == "python" and self._python is not None:
            return lang, self._python.kernel_name  # the project's interpreter (kernels/interpreters.py)
        return lang, lang.kernel_name

    def _interpreter_of(self, kernel_name: str) -> tuple[str | None, str | None]:
        """What the record keeps of the Python a cell ran with: the python kernel's interpreter, or the one
        the shell's PATH leads with when the project's environment is activated in it."""
        python = self._python
        if python is None:
            return None, None
        interp = python.interpreter
        activated = not interp.is_server and interp.problem is None
        if kernel_name == python.kernel_name or (kernel_name == SHELL_KERNEL and activated):
            return str(interp.python), str(interp.prefix) if interp.prefix else None
        return None, None

    def _python_header(self, session: SessionRef, kernel_name: str) -> str | None:
        """Once per session, the first python reply names the interpreter it ran in (not the server's own)."""
        python = self._python
        if python is None or kernel_name != python.kernel_name or session.id in self._told_python:
            return None
        header = python.header()
        if header:
            self._told_python.add(session.id)
        return header

    def _timeout(self, timeout_ms: int | None) -> tuple[int, str]:
        if timeout_ms is None:
            return self._limits.default_timeout_ms, ""
        if timeout_ms <= 0:
            raise InvalidRequest(f"timeout must be a positive number of milliseconds, not {timeout_ms}",
                                 hint=f"omit it for the default of {self._limits.default_timeout_ms} ms")
        if timeout_ms > self._limits.max_timeout_ms:
            return self._limits.max_timeout_ms, f"timeout clamped to the maximum of {self._limits.max_timeout_ms} ms"
        return timeout_ms, ""

    async def _kernel(self, stack: AsyncExitStack, req: ExecuteRequest, session: SessionRef,
                      name: str, language: Language | None) -> Kernel:
        """The kernel the cell runs in; the progress notifications say when it is being started."""
        shown = language.name if language else name
        fresh = req.fresh or req.background
        doing(f"starting the {shown} kernel" if fresh or not self._pool.has(session.id, name) else f"running {shown}")
        if fresh:
            kernel = await stack.enter_async_context(self._pool.throwaway(name, keep=req.background))
        else:
            kernel = await stack.enter_async_context(self._pool.lease(session.id, name))
        doing(f"running {shown}")
        return kernel

    async def _define_file_vars(self, kernel: Kernel, language: Language | None, path: Path,
                                deadline: float) -> None:
        if not kernel.sees_server_files:  # on a gateway: the content travels with the cell
            text = await anyio.to_thread.run_sync(read_for_remote, path)
            code = language.file_text_code(str(path), text) if language and language.file_text_code else None
            if code is None:
                raise InvalidRequest(f"ctx_execute_file cannot give a file's content to a "
                                     f"{language.name if language else kernel.kernel_name} kernel on a gateway",
                                     hint="read the file in python, r, shell or javascript, or use ctx_execute "
                                          "with the data inline")
        else:
            code = (language.file_code(str(path)) if language and language.file_code and language.file_code_sent_first
                    else None)
        if code is None:
            return  # the kernel defines them from the cell metadata
        scratch, outcome = await run_quietly(kernel, code, deadline)
        if outcome is None or outcome.status != "ok":
            detail = scratch.error.get("evalue", "") if scratch.error else scratch.stderr_text
            raise InvalidRequest(f"could not load {path} into the kernel: {detail}".strip(),
                                 hint="check that the file is readable text")

    async def run_recorded(self, kernel: Kernel, req: ExecuteRequest, session: SessionRef,
                           deadline: float, label: str = "",
                           limit: str = "") -> tuple[int, CellOutcome, OutputCollector]:
        """Run one cell on a kernel the caller owns (batch commands), recorded like any execution.

        The note carries the command's label as a JSON string; notebook export shows it. The time
        the cell had is recorded as its timeout (so replay runs it under the same limit) and, when
        it was stopped, `limit` says what stopped it (e.g. "the batch's 2 s time budget").
        """
        await self._touch(session)
        python, python_env = self._interpreter_of(kernel.kernel_name)
        record = await self._recorder.start(ExecutionStart(
            session_id=session.id, tool=req.tool, code=req.code, language=req.language, kernel_name=kernel.kernel_name,
            timeout_ms=max(1, round((deadline - time.monotonic()) * 1000)), fresh=True, python=python,
            python_env=python_env,
        ))
        collector = OutputCollector(self._limits.return_budget, self._limits.hard_output_cap)
        record.outputs = collector
        run = CellRun(kernel, collector, record.add_outputs, final_flush=False)
        run.send(req.code)
        if await run.wait(deadline):
            outcome = await run.outcome()
        else:
            outcome = await run.stop_after_timeout(self._limits.restart_timeout_s)
        await record.batch_done(outcome, kernel.instance_id, collector.bytes_produced,
                                f"batch command {json.dumps(label)}: output indexed, the reply carries search results"
                                + (f"; stopped by {limit}" if outcome.status == "timeout" and limit else ""))
        return record.exec_id, outcome, collector

    async def recorded_output(self, exec_id: int) -> str:
        text, _ = await self._db.run(recorded_stdout, self._executions, exec_id, MAX_INDEXED_OUTPUT)
        return text

    def clamp_timeout(self, timeout_ms: int | None) -> tuple[int, str]:
        return self._timeout(timeout_ms)

    async def wait_background(self, exec_id: int, timeout: float) -> bool:
        """Wait until background execution `exec_id` has finished and been recorded; False on timeout."""
        return await self.background.wait(exec_id, timeout)

    async def _complete(self, record: CellRecord, req: ExecuteRequest, session: SessionRef, language: Language | None,
                        collector: OutputCollector, outcome: CellOutcome, clamp_note: str,
                        kernel: Kernel, stopped: str | None = None) -> ExecuteReply:
        exec_id = record.exec_id
        files = await self._hashes.of(outcome.files, self._project_dir, req.code, outcome.cwd)
        images, image_note = await written_images(files, self._project_dir, collector.shown_images)
        collector.record(images)
        notes = [n for n in [clamp_note, outcome.note, image_note] if n]
        body, label = None, None
        if record.problem is None:  # with outputs missing from the record, the reply's head and tail is all there is
            try:
                body, label = await self._index_large_output(record, req, session, collector)
            except StoreError as exc:
                record.problem = exc
        reply = shape_reply(collector, outcome, exec_id=exec_id, language=language, notes=notes, body=body,
                            source_label=label)
        notice = stopped_notice(language.name if language else kernel.kernel_name, stopped) if stopped else None
        reply = prefixed(reply, self._python_header(session, kernel.kernel_name), notice)
        await record.completed(outcome, kernel.instance_id, collector.bytes_produced, reply, "; ".join(notes) or None,
                               files, kernel.language_info)
        text = sent_text(reply.text, record.reply_note(), exec_id)
        return ExecuteReply(text, reply.is_error, outcome.status, exec_id, collector.bytes_produced,
                            len(text.encode()), whole=reply.kind == "full" and not collector.withheld_bytes)

    async def _index_large_output(self, record: CellRecord, req: ExecuteRequest, session: SessionRef,
                                  collector: OutputCollector) -> tuple[str | None, str | None]:
        """Index output the reply cannot hold; with an intent, answer with the lines that match it."""
        exec_id = record.exec_id
        wants_intent = bool(req.intent) and collector.stdout.total_bytes > INTENT_THRESHOLD
        if self._knowledge is None or not (collector.stdout.trimmed or wants_intent):
            return None, None
        await record.flush()  # read back below: every output must be in the record
        full, clipped = await self._db.run(recorded_stdout, self._executions, exec_id, MAX_INDEXED_OUTPUT)
        label = f"exec-{exec_id}"
        row = await self._knowledge.index_text(label=label, text=full, name="output.txt", kind="execution",
                                               origin=f"execution #{exec_id}", session_id=session.id)
        if not wants_intent:
            return None, label
        assert req.intent is not None
        budget = min(self._limits.return_budget, INTENT_REPLY_BUDGET) - INTENT_REPLY_OVERHEAD
        excerpt = intent_excerpt(full, req.intent, budget)
        head = intent_head(total_lines=excerpt.total_lines, total_kb=collector.stdout.total_bytes / 1024, label=label,
                           sections=counted(row.chunk_count, "section"), clipped=clipped,
                           matched=excerpt.matched_lines, intent=req.intent, shown_lines=excerpt.shown_lines)
        return head + "\n" + excerpt.text, label

    async def _refuse(self, req: ExecuteRequest, session: SessionRef, exc: ContextKernelError) -> None:
        """Record a call refused before it ran; the caller raises `exc` (the MCP edge answers `str(exc)`)."""
        text = str(exc)
        try:
            record = await self._recorder.start(ExecutionStart(
                session_id=session.id, tool=req.tool, code=req.code, language=req.language, kernel_name=req.kernel,
                intent=req.intent, file_path=req.path,
            ))
        except StoreError:
            return  # the refusal is the answer; the store's failure shows on the next call that needs it
        await record.refused(exc, text)

    def forget_sessions(self) -> None:
        """A purge deleted session rows: the next call of each session records its row again."""
        self._known_sessions.clear()

    async def _touch(self, session: SessionRef) -> None:
        if session.id in self._known_sessions:
            return
        await self._db.run(self._executions.touch_session, session.id, client=session.client,
                           transport=session.transport, project_dir=str(self._project_dir))
        self._known_sessions.add(session.id)


def _shielded() -> anyio.CancelScope:
    return anyio.CancelScope(shield=True)

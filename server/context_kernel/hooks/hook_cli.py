"""`context-kernel hook <client> <event>`: one hook invocation, JSON in on stdin, JSON out on stdout.

This runs on every tool call of the agent, so everything imported here is standard library or our
own stdlib-only modules; the database (`memory`) is imported only inside the PreCompact and
SessionStart branches. And it never blocks or fails the tool: whatever goes wrong (bad JSON,
unknown client or event, a missing module, a full disk) is logged as one line in
`<home>/logs/hooks.log` and the client gets a neutral answer with exit status 0.
"""

from __future__ import annotations

import io
import json
import os
import select
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from ..locations import claude_user_settings, data_home, project_dir, user_home
from .adapters import CLIENTS
from .model import MAX_EVENTS_PER_SESSION, NEUTRAL, HookAnswer, HookCall, most_important

if TYPE_CHECKING:
    from .adapters import Adapter
    from .routing import DenyRulesLike

# Modules needed by one kind of event only are imported in its branch: every hook pays for the
# imports at the top, and PostToolUse (the most frequent event with PreToolUse) needs no routing.

LOG_MAX_BYTES = 1024 * 1024
# A client that never closes our stdin (or sends without end) must not hang its agent: the read stops
# after STDIN_DEADLINE_S, and a payload over STDIN_MAX_BYTES is not parsed (a TodoWrite of 50,000
# todos is ~8 MB). Either way the answer is neutral and one line in hooks.log says why.
STDIN_DEADLINE_S = 5.0
STDIN_MAX_BYTES = 32 * 1024 * 1024


def read_stdin(stream: BinaryIO, deadline_s: float = STDIN_DEADLINE_S,
               max_bytes: int = STDIN_MAX_BYTES) -> tuple[str, str | None]:
    """(text, problem): problem is None when stdin ended within the deadline and the size cap."""
    try:
        fd = stream.fileno()
        select.select([fd], [], [], 0)
    except (OSError, ValueError, io.UnsupportedOperation):  # not a pollable file (Windows pipes, a test's buffer)
        data = stream.read(max_bytes + 1)
        if len(data) > max_bytes:
            return "", f"stdin is over {max_bytes} bytes; not read"
        return data.decode("utf-8", "replace"), None
    end = time.monotonic() + deadline_s
    chunks: list[bytes] = []
    size = 0
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return "", f"stdin was not closed within {deadline_s:g} s ({size} bytes read)"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        size += len(chunk)
        if size <= max_bytes:
            chunks.append(chunk)
        else:
            chunks = []  # over the cap: read on to the end (the client's write must not fail), keep nothing
    if size > max_bytes:
        return "", f"stdin is over {max_bytes} bytes ({size} bytes); not parsed"
    return b"".join(chunks).decode("utf-8", "replace"), None


def main(client: str, event: str, stdin_text: str, env: dict[str, str],
         stdout: TextIO | None = None, stderr: TextIO | None = None, stdin_problem: str | None = None) -> int:
    """Answer one hook; always returns 0 (a broken hook must not break the agent).

    `stdin_problem`: why stdin could not be read whole (`read_stdin`); the answer is then neutral.
    """
    out = stdout or sys.stdout
    started = time.perf_counter()
    try:
        home = data_home(env)
    except RuntimeError:  # no HOME and no passwd entry: answer anyway, under the working directory
        home = Path(".context-kernel")
    adapter = CLIENTS.get(client)
    if adapter is None:
        print(f"context-kernel hook: unknown client {client!r} (known: {', '.join(CLIENTS)}); doing nothing",
              file=stderr or sys.stderr)
        return 0
    if event not in adapter.EVENTS:
        print(f"context-kernel hook: {client} has no event {event!r} (known: {', '.join(adapter.EVENTS)}); "
              f"doing nothing", file=stderr or sys.stderr)
        _emit(out, adapter.NEUTRAL_OUTPUT)
        return 0
    if stdin_problem is not None:
        log(home, f"{client} {event}: {stdin_problem}; answered neutrally")
        _emit(out, adapter.NEUTRAL_OUTPUT)
        return 0
    try:
        text = _answer(adapter, event, stdin_text, env, home)
    except Exception as exc:  # noqa: BLE001 - by contract nothing may escape a hook
        log(home, f"{client} {event} failed: {_summary(exc)}")
        text = adapter.NEUTRAL_OUTPUT
    _emit(out, text)
    if env.get("CONTEXT_KERNEL_HOOK_LOG") == "1":
        log(home, f"{client} {event} {(time.perf_counter() - started) * 1000:.1f} ms")
    return 0


def _answer(adapter: Adapter, event: str, stdin_text: str, env: dict[str, str], home: Path) -> str:
    payload = json.loads(stdin_text)
    if not isinstance(payload, dict):
        raise TypeError(f"hook input is a JSON {type(payload).__name__}, not an object")
    call = adapter.parse(event, payload)
    project = project_dir(env, agent_cwd=call.cwd)
    answer: HookAnswer = NEUTRAL
    if call.event == "pre_tool":
        from . import liveness, routing

        ctx = routing.RoutingContext(home=home, project_dir=project, server_alive=liveness.server_alive(home, project),
                                     load_rules=lambda: _load_rules(project, env, home),
                                     can_nudge=adapter.can_add_context(call), user_home=user_home(env))
        answer = routing.decide(call, ctx)
    elif call.event in ("post_tool", "prompt"):
        record(home, call, env, project)  # nothing to answer: these events only feed session memory
    elif call.event == "pre_compact":
        from .memory import on_pre_compact  # SQLAlchemy: only for this rare event

        answer = on_pre_compact(home, call.client, call.session_id, project)
        _restore_marker(home, call.session_id).touch()
        _compacted(home, project)
    elif call.event == "session_start":
        from . import nudges

        nudges.prune(home)
        try:
            record(home, call, env, project)  # cwd, resume… : recorded, but never at the cost of the guide
        except Exception as exc:  # noqa: BLE001 - a failed recording must not cost the agent its guide
            log(home, f"{call.client} {event} recording failed: {_summary(exc)}")
        if call.source == "compact":
            _compacted(home, project)  # a client may compact without a PreCompact hook
        if call.source in ("compact", "resume"):
            from .memory import on_session_start  # SQLAlchemy: only when there is a session to restore

            _take_restore(home, call.session_id)
            answer = on_session_start(home, call.client, call.session_id, call.source, project)
        else:
            from .guide import routing_guide  # a fresh start needs only the guide: no database

            answer = HookAnswer(context=routing_guide())
    if call.event in ("prompt", "post_tool") and answer.context is None and adapter.can_add_context(call) \
            and _take_restore(home, call.session_id):
        # Clients without SessionStart(compact) (Gemini, Cursor, Copilot's prompt hook) get the
        # snapshot with the first answer after PreCompact that can carry text.
        from .memory import on_session_start

        restored = on_session_start(home, call.client, call.session_id, "compact", project)
        answer = replace(answer, context=restored.context)
    return adapter.render(call, answer)


def _compacted(home: Path, project: Path) -> None:
    """Sections sent to the agent before now are forgotten: the next search sends them again."""
    from .compaction import mark_compacted

    try:
        mark_compacted(home, project)
    except OSError as exc:
        log(home, f"compaction marker not written: {_summary(exc)}")


def _restore_marker(home: Path, session_id: str) -> Path:
    from ..datadir import private_dir
    from . import nudges

    path = nudges.marker(home, session_id, "restore-pending")
    private_dir(home, str(path.parent.relative_to(home)))
    return path


def _take_restore(home: Path, session_id: str) -> bool:
    """True once after a PreCompact of this session: unlinking is atomic, so one hook wins."""
    from . import nudges

    try:
        nudges.marker(home, session_id, "restore-pending").unlink()
    except OSError:
        return False
    return True


def record(home: Path, call: HookCall, env: dict[str, str], project: Path | None = None) -> int:
    """Extract the call's events, redact them and append them to the session's spool."""
    try:
        from .extract import events_from
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.extract":
            raise
        return 0  # event extraction not installed: nothing to record
    events = events_from(call)
    if not events:
        return 0
    if len(events) > MAX_EVENTS_PER_SESSION:  # a TodoWrite of 50,000 todos: keep what the session's cap would
        events = [events[i] for i in most_important([e.effective_priority() for e in events], MAX_EVENTS_PER_SESSION)]
    # No redaction, no storage: a missing security module raises here and nothing is written.
    from ..datadir import private_dir
    from ..security.redact import redact_text, secret_env_values
    from ..security.secret_shapes import cached_shapes

    secrets = secret_env_values(env)
    private_dir(home, "cache")  # made 0700 here, not by the cache's own mkdir
    shapes = cached_shapes(home / "cache")  # detect-secrets' patterns without its 110 ms import
    clean = [replace(ev, data=redact_text(ev.data, secrets, shapes)) for ev in events]
    from . import spool

    # Resolved like the server's own project dir, so purging the project finds these events.
    return spool.append(home, call.client, call.session_id, clean,
                        project=str(project.resolve()) if project else None)


def _load_rules(project: Path, env: dict[str, str], home: Path) -> DenyRulesLike | None:
    try:
        from ..security.deny import DenyRules
    except ModuleNotFoundError as exc:
        if exc.name not in ("context_kernel.security", "context_kernel.security.deny"):
            raise
        log(home, "deny rules not applied: context_kernel.security.deny is not installed")
        return None
    rules = DenyRules.load(project, claude_user_settings(env))
    for warning in rules.warnings:  # e.g. a settings file with invalid JSON: its rules are not applied
        log(home, f"deny rules: {warning}")
    checked: DenyRulesLike = rules
    return checked


def log(home: Path, message: str) -> None:
    """Append one line to <home>/logs/hooks.log; never raises (the log is best effort)."""
    from ..datadir import open_private, private_dir

    path = home / "logs" / "hooks.log"
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {message}".replace("\n", " ") + "\n"
    try:
        private_dir(home, "logs")
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, path.with_suffix(".log.1"))
        except FileNotFoundError:
            pass
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def _summary(exc: BaseException) -> str:
    """`Type: message (file:line in function)` of the innermost frame."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    message = str(exc)
    if len(message) > 300:
        message = message[:300] + "…"
    return f"{type(exc).__name__}: {message}{where}"


def _emit(out: TextIO, text: str) -> None:
    if not text:
        return
    try:
        out.write(text + "\n")
        out.flush()
    except (OSError, ValueError):
        pass  # the client went away; nothing to answer

"""`context-kernel hook <client> <event>`: one hook invocation, JSON in on stdin, JSON out on stdout.

This runs on every tool call of the agent, so everything imported here is standard library or our
own stdlib-only modules; the database (`memory`) is imported only inside the PreCompact and
SessionStart branches. And it never blocks or fails the tool: whatever goes wrong (bad JSON,
unknown client or event, a missing module, a full disk) is logged as one line in
`<home>/logs/hooks.log` and the client gets a neutral answer with exit status 0.

The client waits for the process to exit, so the answer is written before the recording is done.
On an overloaded machine (the process is already `deferral.DEFER_AFTER_S` old) the recording is left
to a child at the lowest priority (`deferral.py`). That is decided twice: at the first step, for an
event that only feeds session memory, which has imported nothing but this module, `client_events`
and `deferral` (json, pathlib, typing and dataclasses come later) and answers neutrally there; and
once the answer is written, for a hook that became late on the way (its imports, the parse). In a
burst of parallel hooks every one pays the first step; the rest waits until the answers are out.
"""

from __future__ import annotations

import io
import os
import select
import sys
import time

from . import client_events, deferral

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the first step
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import BinaryIO, TextIO

    from .adapters import Adapter
    from .model import HookCall
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
         stdout: TextIO | None = None, stderr: TextIO | None = None, stdin_problem: str | None = None,
         may_detach: bool = False) -> int:
    """Answer one hook; always returns 0 (a broken hook must not break the agent).

    `stdin_problem`: why stdin could not be read whole (`read_stdin`); the answer is then neutral.
    `may_detach`: this is the hook's own process (the CLI's), which may exit before its recording is
    done when the machine is overloaded (`deferral.py`); never in a caller's process.
    """
    out = stdout or sys.stdout
    started = time.perf_counter()
    early = None
    if may_detach and stdin_problem is None and client_events.recording_only(client, event):
        early = _answer_early(client, env, out)  # past it: the child, when the answer went out here
    try:
        _answer_and_record(client, event, stdin_text, env, out, stderr, stdin_problem, started,
                           answered_at=early[0] if early else None, may_detach=may_detach and early is None)
    finally:
        if early is not None and early[1] is not None:
            early[1]()
    return 0


def _answer_early(client: str, env: dict[str, str], out: TextIO) -> tuple[float, Callable[[], None] | None] | None:
    """On an overloaded machine, the neutral answer of an event that only feeds memory, written before
    anything else is imported, and the rest left to a child (`deferral.detach`).

    None when the machine is not overloaded (the caller goes on as usual); else the process's age at
    the answer, and what the child calls when it is done (None: no child was made, so this process
    records, its client already answered). A restore pending for the session waits for a later call.
    """
    from ..datadir import data_dir

    age = deferral.process_age()
    if age is None or not deferral.overloaded(age, _defer_after(env)):
        return None
    try:
        home = data_dir(env)
    except RuntimeError:
        return None  # no home directory at all: the ordinary path copes with that
    _emit(out, client_events.NEUTRAL_OUTPUT[client])
    return age, deferral.detach(home, _defer_niceness(env))


def _answer_and_record(client: str, event: str, stdin_text: str, env: dict[str, str], out: TextIO,
                       stderr: TextIO | None, stdin_problem: str | None, started: float, *,
                       answered_at: float | None, may_detach: bool) -> None:
    """The hook proper. `answered_at`: the process's age when `_answer_early` answered already;
    `may_detach`: the recording may still be deferred, if the process is late by the time it answered."""
    from pathlib import Path

    from ..locations import data_home
    from .adapters import CLIENTS

    try:
        home = data_home(env)
    except RuntimeError:  # no HOME and no passwd entry: answer anyway, under the working directory
        home = Path(".context-kernel")
    adapter = CLIENTS.get(client)
    if adapter is None:
        print(f"context-kernel hook: unknown client {client!r} (known: {', '.join(CLIENTS)}); doing nothing",
              file=stderr or sys.stderr)
        return
    if event not in adapter.EVENTS:
        print(f"context-kernel hook: {client} has no event {event!r} (known: {', '.join(adapter.EVENTS)}); "
              f"doing nothing", file=stderr or sys.stderr)
        _emit(out, adapter.NEUTRAL_OUTPUT)
        return
    if stdin_problem is not None:
        log(home, f"{client} {event}: {stdin_problem}; answered neutrally")
        _emit(out, adapter.NEUTRAL_OUTPUT)
        return
    later: Callable[[], object] | None = None
    try:
        text, later = _answer(adapter, event, stdin_text, env, home, restore=answered_at is None)
    except Exception as exc:  # noqa: BLE001 - by contract nothing may escape a hook
        log(home, f"{client} {event} failed: {_summary(exc, home)}")
        text = adapter.NEUTRAL_OUTPUT
    if answered_at is None:
        _emit(out, text)  # the answer goes first: what is left to do is for the record, not for the client
    if later is not None:
        done = None
        if may_detach:  # a hook that was not late at its first step may be by now (its imports, the parse)
            age = deferral.process_age()
            if age is not None and deferral.overloaded(age, _defer_after(env)):
                answered_at, done = age, deferral.detach(home, _defer_niceness(env))
        try:
            later()
        except Exception as exc:  # noqa: BLE001 - a failed recording is logged; the answer is out already
            log(home, f"{client} {event} recording failed: {_summary(exc, home)}")
        finally:
            if done is not None:
                done()
    if env.get("CONTEXT_KERNEL_HOOK_LOG") == "1":
        took = f"{(time.perf_counter() - started) * 1000:.1f} ms"
        log(home, f"{client} {event} {took}" if answered_at is None else
            f"{client} {event} answered {answered_at * 1000:.0f} ms after its process started; "
            f"recording deferred (done {took} after main began)")


def _defer_niceness(env: dict[str, str]) -> int:
    """CONTEXT_KERNEL_HOOK_DEFER_NICE: the deferred recording's nice value (19; the tests that count events on
    a machine kept busy use 0, where a nice-19 child may not run within their bound)."""
    try:
        return int(env.get("CONTEXT_KERNEL_HOOK_DEFER_NICE", deferral.DEFERRED_NICENESS))
    except ValueError:
        return deferral.DEFERRED_NICENESS


def _defer_after(env: dict[str, str]) -> float:
    """CONTEXT_KERNEL_HOOK_DEFER_AFTER_S: the process age from which a hook defers (0: always; tests)."""
    try:
        return float(env.get("CONTEXT_KERNEL_HOOK_DEFER_AFTER_S", deferral.DEFER_AFTER_S))
    except ValueError:
        return deferral.DEFER_AFTER_S


def _answer(adapter: Adapter, event: str, stdin_text: str, env: dict[str, str], home: Path, *, restore: bool = True
            ) -> tuple[str, Callable[[], object] | None]:
    """The client's answer, and the recording to do once it is sent (None: nothing, or done already).

    `restore`: whether this answer may carry a snapshot pending after PreCompact (not when the
    client was answered already).
    """
    import json
    from dataclasses import replace
    from functools import partial

    from ..locations import project_dir, user_home
    from .model import NEUTRAL, HookAnswer

    payload = json.loads(stdin_text)
    if not isinstance(payload, dict):
        raise TypeError(f"hook input is a JSON {type(payload).__name__}, not an object")
    call = adapter.parse(event, payload)
    project = project_dir(env, agent_cwd=call.cwd)
    answer: HookAnswer = NEUTRAL
    later: Callable[[], object] | None = None
    if call.event == "pre_tool":
        from . import liveness, routing

        ctx = routing.RoutingContext(home=home, project_dir=project, server_alive=liveness.server_alive(home, project),
                                     load_rules=lambda: _load_rules(project, env, home),
                                     can_nudge=adapter.can_add_context(call), user_home=user_home(env))
        answer = routing.decide(call, ctx)
    elif call.event in ("post_tool", "prompt"):
        later = partial(record, home, call, env, project)  # nothing to answer: these events only feed memory
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
            log(home, f"{call.client} {event} recording failed: {_summary(exc, home)}")
        if call.source == "compact":
            _compacted(home, project)  # a client may compact without a PreCompact hook
        if call.source in ("compact", "resume"):
            from .memory import on_session_start  # SQLAlchemy: only when there is a session to restore

            _take_restore(home, call.session_id)
            answer = on_session_start(home, call.client, call.session_id, call.source, project)
        else:
            from .guide import routing_guide  # a fresh start needs only the guide: no database

            answer = HookAnswer(context=routing_guide())
    if call.event in ("prompt", "post_tool") and restore and answer.context is None \
            and adapter.can_add_context(call) and _take_restore(home, call.session_id):
        # Clients without SessionStart(compact) (Gemini, Cursor, Copilot's prompt hook) get the
        # snapshot with the first answer after PreCompact that can carry text.
        from .memory import on_session_start

        if later is not None:  # this call's events belong in the snapshot it restores
            later()
            later = None
        restored = on_session_start(home, call.client, call.session_id, "compact", project)
        answer = replace(answer, context=restored.context)
    return adapter.render(call, answer), later


def _compacted(home: Path, project: Path) -> None:
    """Sections sent to the agent before now are forgotten: the next search sends them again."""
    from .compaction import mark_compacted

    try:
        mark_compacted(home, project)
    except OSError as exc:
        log(home, f"compaction marker not written: {_summary(exc, home)}")


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
    from dataclasses import replace

    from .model import MAX_EVENTS_PER_SESSION, most_important, transcript_event

    try:
        from .extract import events_from
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.extract":
            raise
        return 0  # event extraction not installed: nothing to record
    events = events_from(call) + transcript_event(call)
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
    from ..locations import claude_user_settings

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


def _summary(exc: BaseException, home: Path) -> str:
    """`Type: message (file:line in function)` of the innermost frame. The message is redacted (it
    may quote the payload: a prompt, a command); one that cannot be is not logged."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    message = str(exc)
    if len(message) > 300:
        message = message[:300] + "…"
    try:
        from ..security.redact import redact_text
        from ..security.secret_shapes import cached_shapes

        message = redact_text(message, shapes=cached_shapes(home / "cache"))
    except Exception:  # noqa: BLE001 - no redaction, no message: the log must not keep a secret
        message = "(message not logged: it could not be redacted)"
    return f"{type(exc).__name__}: {message}{where}"


def _emit(out: TextIO, text: str) -> None:
    if not text:
        return
    try:
        out.write(text + "\n")
        out.flush()
    except (OSError, ValueError):
        pass  # the client went away; nothing to answer

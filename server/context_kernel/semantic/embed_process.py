"""The embedder in a process of its own, so that it never holds the server's GIL.

In a thread of the server, even at nice 19, embedding doubled a kernel's warm call while it ran
(median 8.3 → 18.5 ms over a 5 MB index, bench/semantic_coverage.py): nice lowers a thread's share
of the CPU, not its share of the interpreter lock that the event loop needs for every message of
the call. Here the same `EmbeddingWorker` runs in a child process at nice 19 with its own
connection to the database (SQLite's WAL lets one process write while others read; writes take
turns through the busy timeout, as the hooks' already do).

The parent speaks to it over pipes: a `wake` line per `EmbeddingProcess.wake()`, and the child
answers with one JSON line of progress whenever its state changes (and every half second while it
embeds). Closing the child's stdin stops it; it also dies with the server (lifeline).

    python -m context_kernel.semantic.embed_process DB MODEL_FILES_JSON KINDS NICE
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from ..errors import SemanticUnavailable
from ..lifeline import die_with_parent
from .files import ModelFiles
from .worker import Progress

log = logging.getLogger(__name__)

REPORT_EVERY_S = 0.5
_CHILD_MAIN = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
               "from context_kernel.semantic.embed_process import main; main()")
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 2.0


class EmbeddingProcess:
    """EmbeddingWorker's interface (wake, wait_idle, stop, progress, failure), served by a child process."""

    def __init__(self, *, db_path: Path, files: ModelFiles, kinds: Sequence[str], nice: int = 19,
                 python: str = sys.executable) -> None:
        spec = json.dumps({**asdict(files), "onnx": str(files.onnx), "tokenizer": str(files.tokenizer)})
        # The child finds this package where the server found it (a checkout run from its source root
        # need not be installed): the source root goes first on its path, the environment stays as it is.
        self._argv = [python, "-c", _CHILD_MAIN, str(Path(__file__).parents[2]), str(db_path), spec,
                      ",".join(kinds), str(nice)]
        self._cond = threading.Condition()
        self._proc: subprocess.Popen[bytes] | None = None
        self._requested = 0
        self._report: dict[str, Any] = {}
        self._failure: SemanticUnavailable | None = None
        self._stopping = False
        self._reader: threading.Thread | None = None

    # -- the server's side -----------------------------------------------------------------------

    def wake(self) -> None:
        with self._cond:
            if self._stopping or self._failure is not None:
                return
            if self._proc is None:
                self._start()
                if self._proc is None:
                    return
            self._requested += 1
            self._send(b"wake\n")

    def wait_idle(self, timeout: float) -> bool:
        """Until the child has embedded everything queued before this call (or failed, or stopped)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            target = self._requested
            while (int(self._report.get("done", 0)) < target and self._failure is None and not self._stopping
                   and self._proc is not None):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def stop(self, grace: float = STOP_GRACE_S) -> None:
        with self._cond:
            self._stopping = True
            proc = self._proc
            self._cond.notify_all()
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(grace)
        except (OSError, subprocess.TimeoutExpired):
            # On a machine busy on every core an idle-priority child may not run for minutes, so it cannot
            # take its own exit. Killing it loses at most the batch in hand (one SQLite transaction, rolled
            # back whole); the next start embeds it again.
            proc.kill()
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:  # even dying waits for a core there: reap it when it ends
                threading.Thread(target=proc.wait, name="ck-embedder-reaper", daemon=True).start()
        if self._reader is not None:
            self._reader.join(grace)  # it reads the child's last report, then its end

    @property
    def failure(self) -> SemanticUnavailable | None:
        return self._failure

    def progress(self) -> Progress:
        with self._cond:
            report = self._report
            rate = report.get("rate")
            return Progress(str(report.get("state", "idle")), int(report.get("cursor", 0)),
                            float(rate) if rate else None, self._failure.message if self._failure else None)

    @property
    def embedded_bytes(self) -> int:
        return int(self._report.get("embedded_bytes", 0))

    @property
    def busy_seconds(self) -> float:
        return float(self._report.get("busy_seconds", 0.0))

    def _start(self) -> None:
        """Spawn the child from the thread that reads its reports (called holding the condition).

        The child's death signal follows the thread that spawned it, not the server's process: spawned
        from the caller's thread (a pool worker, ended after 10 s idle), the embedder was killed with it.
        The reader thread lives exactly as long as the child.
        """
        spawned: list[subprocess.Popen[bytes] | BaseException] = []
        self._reader = threading.Thread(target=self._spawn_and_read, args=(spawned,), name="ck-embedder-reports",
                                        daemon=True)
        self._reader.start()
        self._cond.wait_for(lambda: bool(spawned), START_TIMEOUT_S)
        if not spawned or isinstance(spawned[0], BaseException):
            reason = spawned[0] if spawned else "no answer"
            self._failure = SemanticUnavailable(f"the embedder process could not start ({reason})", state="broken",
                                                hint="restart the server; search works by words meanwhile")
            return
        self._proc = spawned[0]

    def _spawn_and_read(self, spawned: list[subprocess.Popen[bytes] | BaseException]) -> None:
        try:
            proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, close_fds=True,
                                    preexec_fn=functools.partial(die_with_parent, signal.SIGKILL, os.getpid()))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller, who reports it
            with self._cond:
                spawned.append(exc)
                self._cond.notify_all()
            return
        with self._cond:
            spawned.append(proc)
            self._cond.notify_all()
        self._read(proc.stdout)

    def _send(self, line: bytes) -> None:
        proc = self._proc
        try:
            assert proc is not None and proc.stdin is not None
            proc.stdin.write(line)
            proc.stdin.flush()
        except (OSError, ValueError) as exc:  # the child is gone: its last report says why, if it could
            self._failure = self._failure or SemanticUnavailable(
                f"the embedder process stopped ({exc})", state="broken",
                hint="restart the server; search works by words meanwhile")
            self._cond.notify_all()

    def _read(self, out: IO[bytes] | None) -> None:
        assert out is not None
        with out:
            self._read_reports(out)
        with self._cond:  # the child exited
            if not self._stopping and self._failure is None:
                self._failure = SemanticUnavailable("the embedder process exited", state="broken",
                                                    hint="restart the server; search works by words meanwhile")
            self._cond.notify_all()

    def _read_reports(self, out: IO[bytes]) -> None:
        for raw in out:
            try:
                report = json.loads(raw)
            except ValueError:
                continue
            with self._cond:
                failure = report.get("failure")
                if failure:
                    self._failure = SemanticUnavailable(failure["message"], state=failure.get("state", "broken"),
                                                        hint=failure.get("hint", ""))
                self._report = report
                self._cond.notify_all()


# -- the child's side ----------------------------------------------------------------------------

def _child(db_path: Path, files: ModelFiles, kinds: tuple[str, ...], nice: int) -> None:
    from ..store.db import Database
    from ..store.vectors import VectorRepository
    from .encoding import make_encoder, vector_model_id
    from .worker import EmbeddingWorker

    if nice:
        with contextlib.suppress(OSError):  # not allowed here: run at the server's priority
            os.nice(nice)
        # SCHED_IDLE: only when no other task wants the core. At nice 19 alone a warm call waited for the
        # embedder's time slice to end (1.3–1.9× its idle latency on an idle 2-core machine).
        if nice >= 19:
            with contextlib.suppress(OSError, AttributeError):
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    out = sys.stdout.buffer
    lock = threading.Lock()

    def report(worker: EmbeddingWorker | None, failure: SemanticUnavailable | None = None) -> None:
        data: dict[str, Any] = {"state": "failed" if failure else "idle"}
        if worker is not None:
            progress = worker.progress()
            data.update(state=progress.state, cursor=progress.cursor, rate=progress.bytes_per_s,
                        done=worker.done, embedded_bytes=worker.embedded_bytes, busy_seconds=worker.busy_seconds)
            failure = failure or worker.failure
        if failure is not None:
            data["failure"] = {"message": failure.message, "state": failure.state, "hint": failure.hint}
        with lock:
            out.write(json.dumps(data).encode() + b"\n")
            out.flush()

    encoder = make_encoder(files)  # loads in the worker's thread (load() raises there; the report says it)
    db = Database.open(db_path)
    worker = EmbeddingWorker(run_sync=db.run_sync, repo=VectorRepository(db.engine, kinds=kinds,
                                                                           model=vector_model_id(files)),
                             encoder=encoder, nice=0, batch_chunks=64 if files.kind == "static" else 4)
    ended = threading.Event()

    def listen() -> None:
        for line in sys.stdin.buffer:
            if line.strip() == b"wake":
                worker.wake()
        ended.set()

    threading.Thread(target=listen, name="ck-embedder-wakes", daemon=True).start()
    last: tuple[object, ...] = ()
    try:
        while not ended.wait(REPORT_EVERY_S if worker.progress().state == "embedding" else 0.05):
            now = (worker.progress().state, worker.done, worker.failure)
            if now != last or now[0] == "embedding":
                report(worker)
                last = now
    finally:
        worker.stop()
        report(worker)
        db.close()


def main() -> None:
    db, spec, kinds, nice = sys.argv[1:5]
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    fields = json.loads(spec)
    files = ModelFiles(**{**fields, "onnx": Path(fields["onnx"]), "tokenizer": Path(fields["tokenizer"])})
    _child(Path(db), files, tuple(kinds.split(",")), int(nice))


if __name__ == "__main__":
    main()

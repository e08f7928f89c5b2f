"""The execution service without MCP: background cells and the record they leave."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_kernel.app import AppHolder
from context_kernel.errors import InvalidRequest
from context_kernel.execution import collector
from context_kernel.execution.requests import ExecuteRequest, SessionRef
from context_kernel.settings import Settings
from context_kernel.store.db import open_engine
from context_kernel.store.executions import ExecutionRepository

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
SESSION = SessionRef(id="core-test")


def record(settings: Settings) -> ExecutionRepository:
    """The execution record as another reader of the database file sees it (the App hands out no store)."""
    return ExecutionRepository(open_engine(settings.db_path))


async def test_background_cell_returns_partial_output_and_records_the_rest(settings: Settings) -> None:
    async with AppHolder(settings) as holder:
        app = await holder.get()
        code = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('later')"
        reply = await app.execution.execute(
            ExecuteRequest(code=code, language="python", timeout_ms=700, background=True), SESSION)
        assert not reply.is_error and reply.status == "running"
        assert reply.text.startswith("first") and "still running in the background" in reply.text
        assert reply.execution_id is not None
        assert await app.execution.wait_background(reply.execution_id, timeout=30)
    row, outputs = record(settings).get(reply.execution_id), record(settings).outputs(reply.execution_id)
    assert row is not None and row.status == "ok" and row.background
    assert "".join(o.get("text", "") for o in outputs) == "first\nlater\n"


async def test_every_call_is_recorded_with_what_the_agent_saw(settings: Settings, project: Path) -> None:
    async with AppHolder(settings) as holder:
        app = await holder.get()
        ok = await app.execution.execute(ExecuteRequest(code="print('hi')", language="python"), SESSION)
        with pytest.raises(InvalidRequest) as refused:  # recorded, then raised for the MCP edge to answer
            await app.execution.execute(ExecuteRequest(code="x", language="cobol"), SESSION)
    rows = record(settings).for_session(SESSION.id)
    assert [r.status for r in rows] == ["ok", "refused"]
    # the reply ends with its citation; the record keeps the text the agent read above it
    assert ok.text == f"hi\n[#{ok.execution_id}]" and rows[0].returned_text == "hi" and rows[0].bytes_returned == 2
    assert rows[0].bytes_produced == 3 and rows[0].kernel_name == "python3" and rows[0].duration_ms
    assert rows[1].returned_text == str(refused.value) and rows[1].error_name == "InvalidRequest"


async def test_the_record_of_a_cell_is_pending_in_the_database_while_its_code_runs(settings: Settings) -> None:
    # Recording is crash-safe: the row is committed before the code runs, so a server killed now
    # leaves it `pending`. The cell itself reads the database file to see it.
    code = ("import sqlite3\n"
            f"db = sqlite3.connect({str(settings.db_path)!r})\n"
            "print(db.execute('SELECT status FROM executions ORDER BY id DESC LIMIT 1').fetchone()[0])")
    async with AppHolder(settings) as holder:
        app = await holder.get()
        reply = await app.execution.execute(ExecuteRequest(code=code, language="python"), SESSION)
    assert reply.text == f"pending\n[#{reply.execution_id}]"


async def test_a_large_output_is_recorded_in_full_while_the_reply_is_trimmed(settings: Settings) -> None:
    lines = 5000  # 5000 lines of 4 KB: 20 MB, under the cap
    async with AppHolder(settings) as holder:
        app = await holder.get()
        code = f"import sys\nfor i in range({lines}): sys.stdout.write(str(i).rjust(4095, '.') + '\\n')"
        reply = await app.execution.execute(ExecuteRequest(code=code, language="python"), SESSION)
    assert reply.execution_id is not None
    outputs = record(settings).outputs(reply.execution_id)
    recorded = "".join(o.get("text", "") for o in outputs)
    assert reply.bytes_produced == len(recorded) == lines * 4096
    assert recorded.splitlines()[-1].endswith("4999")
    assert len(reply.text.encode()) < settings.return_budget + 400 and "cut" in reply.text


async def test_a_quick_cells_outputs_are_written_with_its_end(settings: Settings,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # One write before the code runs (the pending row), one after (outputs and end together): the
    # separate output batch write is for cells that run long enough to flush (about once a second).
    batches: list[int] = []
    add_outputs = ExecutionRepository.add_outputs

    def counted(self: ExecutionRepository, exec_id: int, first: int, outputs: list[dict[str, object]]) -> None:
        batches.append(len(outputs))
        add_outputs(self, exec_id, first, outputs)

    monkeypatch.setattr(ExecutionRepository, "add_outputs", counted)
    # "Quick" is "ends before the flush interval": on a loaded machine the cell's 3 prints could take
    # longer than the real 1 s, and the test would then see a batch write that is right for a slow cell.
    monkeypatch.setattr(collector, "FLUSH_INTERVAL_S", 3600.0)
    async with AppHolder(settings) as holder:
        app = await holder.get()
        code = "import sys\nprint('out')\nprint('err', file=sys.stderr)\nprint('more')"
        reply = await app.execution.execute(ExecuteRequest(code=code, language="python"), SESSION)
    assert reply.execution_id is not None and not reply.is_error
    assert batches == []
    outputs = record(settings).outputs(reply.execution_id)
    streams = {name: "".join(o.get("text", "") for o in outputs if o.get("name") == name)
               for name in ("stdout", "stderr")}
    assert streams == {"stdout": "out\nmore\n", "stderr": "err\n"}
    row = record(settings).get(reply.execution_id)
    assert row is not None and row.status == "ok"

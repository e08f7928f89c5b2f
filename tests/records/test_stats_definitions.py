"""ctx_stats against sessions computed by hand (records/stats.py defines every figure): indexing then
searching back, a large execution then searching its output, a fetched page, tiny outputs shown
whole, and an empty session.

Hand computation: a call's kept out is its in less its reply (0 when the reply showed all it took
in); a search's hits (`### title — source: X` + snippet, and the newline joining them) come back
from source X and are netted out of the tool that took X in.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import text_of

from context_kernel.settings import Settings
from context_kernel.store.db import open_engine
from context_kernel.store.executions import ExecutionRepository

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
KB = 1024
TOLERANCE = 0.06  # figures are printed in KB with one decimal


UNITS = {"B": 1 / KB, "KB": 1.0, "MB": KB, "GB": KB * KB}
SIZE = re.compile(r"([\d.]+) (B|KB|MB|GB)\b")


def kb_of(value: str, unit: str) -> float:
    """A printed size ('512 B', '55.6 KB', '1.2 MB': the unit scales) in KB."""
    return float(value) * UNITS[unit]


def session_part(stats: str) -> str:
    return stats.split("Lifetime")[0]


def tool_row(stats: str, tool: str) -> dict[str, float]:
    """in, indexed, returned, came back, kept out (KB) of a tool in this session's table."""
    for line in session_part(stats).splitlines():
        cells = line.split()
        if cells and cells[0] == tool:
            values = [kb_of(v, u) for v, u in SIZE.findall(line)]
            return dict(zip(("in", "indexed", "returned", "back", "kept"), values, strict=True))
    raise AssertionError(f"no row for {tool} in:\n{stats}")


def source_row(stats: str, source: str) -> dict[str, float]:
    for line in session_part(stats).splitlines():
        if line.strip().startswith(source + " "):
            values = [kb_of(v, u) for v, u in SIZE.findall(line)]
            return dict(zip(("in", "back", "kept"), values, strict=True))
    raise AssertionError(f"no row for source {source} in:\n{stats}")


def summary(stats: str) -> tuple[float, float, str]:
    head = session_part(stats).splitlines()[1]
    took = kb_of(*re.search(r"in ([\d.]+) (B|KB|MB|GB)", head).groups())  # type: ignore[union-attr]
    kept = kb_of(*re.search(r"kept out ([\d.]+) (B|KB|MB|GB)", head).groups())  # type: ignore[union-attr]
    return took, kept, head.split("saved ")[1]


def hits_bytes(reply: str) -> int:
    """Bytes of the hits a search reply sent (entries that repeat an earlier one are only named)."""
    total = 0
    reply = re.sub(r"\n\n\[\d+ more hit\(s\) left out[^\]]*\]$", "", reply)  # a note, not a hit
    for block in reply.split("\n\n## "):
        for entry in block.split("\n### ")[1:]:
            if "(already sent in" not in entry and "(same text as " not in entry:
                total += len(("### " + entry).encode()) + 1
    return total


def approx(kb: float) -> object:
    return pytest.approx(kb, abs=TOLERANCE)


async def test_an_empty_session_saved_nothing(client: Client) -> None:
    stats = text_of(await client.call_tool("ctx_stats", {}))
    assert summary(stats) == (0.0, 0.0, "n/a (nothing taken in yet)")


@pytest.mark.kernels
async def test_outputs_shown_whole_keep_nothing_out(client: Client, settings: Settings) -> None:
    for _ in range(3):  # 10 bytes produced, 9 shown (the reply drops the final newline): nothing kept out
        done = await client.call_tool("ctx_execute", {"language": "python", "code": "print('123456789')"})
        assert not done.is_error
    took, kept, saved = summary(text_of(await client.call_tool("ctx_stats", {})))
    assert (kept, saved) == (0.0, "0.0%")  # was 10.0%: the missing newline counted as kept out
    assert took == approx(30 / KB)
    # `context-kernel sessions` and the insight page count executions the same way.
    engine = open_engine(settings.db_path)
    try:
        assert [(s.bytes_produced, s.bytes_kept_out) for s in ExecutionRepository(engine).sessions()] == [(30, 0)]
    finally:
        engine.dispose()


async def test_an_indexed_file_searched_back_keeps_out_only_what_stayed_out(client: Client, project: Path) -> None:
    lines = [f"record {i:05d}: shipment {i % 97} left dock {i % 13} with {i % 7} pallets of item{i}"
             for i in range(1600)]
    (project / "ledger.txt").write_text("\n".join(lines) + "\n")
    size = (project / "ledger.txt").stat().st_size
    assert size > 100 * KB
    indexed = await client.call_tool("ctx_index", {"path": "ledger.txt"})
    own_reply = len(text_of(indexed).encode())
    back = 0
    for words in (["shipment 5 dock 3"], ["pallets item7"], ["record 01200"], ["dock 12 shipment 40"], ["item99"]):
        reply = text_of(await client.call_tool("ctx_search", {"queries": words, "limit": 10}))
        back += hits_bytes(reply)
    assert back > 10 * KB
    stats = text_of(await client.call_tool("ctx_stats", {}))
    index = tool_row(stats, "ctx_index")
    assert index["in"] == approx(size / KB) and index["back"] == approx(back / KB)
    assert index["kept"] == approx((size - own_reply - back) / KB)
    assert tool_row(stats, "ctx_search")["kept"] == 0.0
    assert source_row(stats, "ledger.txt") == {"in": approx(size / KB), "back": approx(back / KB),
                                               "kept": approx((size - back) / KB)}
    _, kept, saved = summary(stats)
    assert kept == approx((size - own_reply - back) / KB)
    assert float(saved.rstrip("%")) == pytest.approx(100 * (size - own_reply - back) / size, abs=0.2)


@pytest.mark.kernels
async def test_a_large_output_searched_back(client: Client) -> None:
    code = "for i in range(4000): print(f'line {i}: sensor {i % 50} read {i * 7 % 1000} units')"
    result = await client.call_tool("ctx_execute", {"language": "python", "code": code})
    produced = sum(len(f"line {i}: sensor {i % 50} read {i * 7 % 1000} units\n") for i in range(4000))
    shown = len(text_of(result).encode())
    label = re.search(r'source="(exec-\d+)"', text_of(result)).group(1)  # type: ignore[union-attr]
    reply = text_of(await client.call_tool("ctx_search", {"queries": ["sensor 7 read"], "source": label,
                                                          "limit": 10}))
    back = hits_bytes(reply)
    assert back > 0
    stats = text_of(await client.call_tool("ctx_stats", {}))
    row = tool_row(stats, "ctx_execute")
    assert row["in"] == approx(produced / KB) and row["back"] == approx(back / KB)
    assert row["kept"] == approx((produced - shown - back) / KB)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def page(tmp_path: Path) -> Iterator[tuple[str, int]]:
    root = tmp_path / "site"
    root.mkdir()
    body = "".join(f"Paragraph {i}: the harbour crane {i % 9} lifts {i} containers at noon.\n\n" for i in range(600))
    (root / "crane.txt").write_text(body)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/crane.txt", len(body.encode())
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


async def test_a_fetched_page_searched_back(client: Client, page: tuple[str, int]) -> None:
    url, body = page
    fetched = await client.call_tool("ctx_fetch_and_index", {"url": url})
    assert not fetched.is_error, text_of(fetched)
    own_reply = len(text_of(fetched).encode())
    reply = text_of(await client.call_tool("ctx_search", {"queries": ["harbour crane 4 containers"], "limit": 10}))
    back = hits_bytes(reply)
    stats = text_of(await client.call_tool("ctx_stats", {}))
    row = tool_row(stats, "ctx_fetch_and_index")
    assert row["in"] == approx(body / KB) and row["back"] == approx(back / KB)
    assert row["kept"] == approx((body - own_reply - back) / KB)
    assert source_row(stats, url)["back"] == approx(back / KB)


@pytest.mark.kernels
async def test_a_batch_whose_queries_search_its_own_output_is_not_counted_twice(client: Client) -> None:
    loop = "for i in $(seq 1 400); do echo \"part {n} row $i gauge $((i % 17))\"; done"
    commands = [{"label": f"part {n}", "command": loop.format(n=n)} for n in range(3)]
    result = await client.call_tool("ctx_batch_execute", {"commands": commands, "queries": ["gauge 5 row"]})
    assert not result.is_error, text_of(result)
    produced = sum(len(f"part {n} row {i} gauge {i % 17}\n") for n in range(3) for i in range(1, 401))
    reply = text_of(result)
    stats = text_of(await client.call_tool("ctx_stats", {}))
    row = tool_row(stats, "ctx_batch_execute")
    # Its hits are part of its own reply: they come back once, not once in the reply and once more.
    assert row["in"] == approx(produced / KB) and row["back"] == approx(hits_bytes(reply.split("\n\n", 1)[1]) / KB)
    assert row["kept"] == approx((produced - len(reply.encode())) / KB)

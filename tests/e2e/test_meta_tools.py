"""ctx_stats (defined accounting), ctx_upgrade, ctx_doctor and the compact tools/list."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from tests.helpers import text_of

from context_kernel.setup.installation import this_installation
from context_kernel.tools.schema import compact_schema

pytestmark = pytest.mark.anyio


UNITS = {"B": 1 / 1024, "KB": 1.0, "MB": 1024.0, "GB": 1024.0 ** 2}


def _kb(text: str, label: str) -> float:
    """A figure of the summary line in KB (sizes scale their unit: 512 B, 20.0 KB, 2 MB)."""
    match = re.search(rf"{label} ([\d.]+) (B|KB|MB|GB)\b", text)
    assert match, f"no '{label}' figure in:\n{text}"
    return float(match.group(1)) * UNITS[match.group(2)]


def column(row: list[str], k: int) -> float:
    """The k-th figure of a tool's row in KB (tool, calls, errors, then value-unit pairs)."""
    return float(row[3 + 2 * k]) * UNITS[row[4 + 2 * k]]


@pytest.mark.kernels
async def test_stats_count_what_came_in_and_what_went_back(client: Client, project: Path) -> None:
    big = await client.call_tool("ctx_execute", {"language": "python", "code": "print('x' * 20480)"})
    small = await client.call_tool("ctx_execute", {"language": "python", "code": "print('done')"})
    (project / "notes.md").write_text("# Notes\n\n" + "alpha beta gamma\n" * 300)
    await client.call_tool("ctx_index", {"path": "notes.md"})
    returned = sum(len(text_of(r).encode()) for r in (big, small))
    stats = text_of(await client.call_tool("ctx_stats", {}))
    session_part = stats.split("Lifetime")[0]
    rows = {line.split()[0]: line.split() for line in session_part.splitlines() if line.startswith("  ctx_")}
    assert rows["ctx_execute"][1] == "2" and rows["ctx_execute"][2] == "0"
    # in: 20 KB + newline + 'done\n' as produced by the cells
    assert column(rows["ctx_execute"], 0) == pytest.approx((20481 + 5) / 1024, abs=0.06)
    assert column(rows["ctx_execute"], 2) == pytest.approx(returned / 1024, abs=0.06)
    notes = (project / "notes.md").stat().st_size
    assert column(rows["ctx_index"], 0) == pytest.approx(notes / 1024, abs=0.06)
    assert column(rows["ctx_index"], 1) == pytest.approx(notes / 1024, abs=0.06)
    took, kept = _kb(session_part, "in"), _kb(session_part, "kept out")
    saved = float(re.search(r"saved ([\d.]+)%", session_part).group(1))  # type: ignore[union-attr]
    assert saved == pytest.approx(100 * kept / took, abs=0.6)
    assert "tokens ≈ bytes ÷ 4" in stats


async def test_search_only_adds_to_returned(client: Client) -> None:
    await client.call_tool("ctx_index", {"content": "# Cache\n\nThe cache lives in sqlite.", "source": "doc"})
    before = text_of(await client.call_tool("ctx_stats", {}))
    await client.call_tool("ctx_search", {"queries": ["cache sqlite"]})
    after = text_of(await client.call_tool("ctx_stats", {}))
    row = next(line.split() for line in after.split("Lifetime")[0].splitlines() if line.startswith("  ctx_search"))
    assert column(row, 0) == 0 and column(row, 2) > 0  # took nothing in, returned the snippet
    assert _kb(after.split("Lifetime")[0], "in") == _kb(before.split("Lifetime")[0], "in")


async def test_upgrade_names_the_command_for_this_install(client: Client) -> None:
    text = text_of(await client.call_tool("ctx_upgrade", {}))
    installed = this_installation()  # the cases of each install: tests/setup/test_installation.py
    assert installed.how in text and installed.upgrade() in text


def test_compact_schema_keeps_parameter_names_and_drops_noise() -> None:
    schema = {"title": "fArguments", "type": "object", "required": ["title"], "properties": {
        "title": {"title": "Title", "type": "string"},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "Limit",
                  "description": "How many."}}}
    assert compact_schema(schema) == {"type": "object", "required": ["title"], "properties": {
        "title": {"type": "string"}, "limit": {"type": "integer", "description": "How many."}}}


@pytest.mark.kernels
async def test_explicit_null_for_an_optional_parameter_is_still_accepted(client: Client) -> None:
    result = await client.call_tool("ctx_execute", {"language": "python", "code": "print(6*7)", "timeout": None})
    assert not result.is_error and text_of(result).strip() == "42"


@pytest.mark.kernels
async def test_doctor_tool_checks_kernels_store_hooks_and_versions(client: Client) -> None:
    result = await client.call_tool("ctx_doctor", {})
    lines = text_of(result).splitlines()
    assert all(line.startswith(("[OK]", "[WARN]", "[FAIL]")) for line in lines)
    assert any(line.startswith("[OK] versions") for line in lines)
    assert any(line.startswith("[OK] sqlite") and "trigram" in line for line in lines)
    python = next(line for line in lines if line.split(":")[0].split()[1:2] == ["python"])
    assert python.startswith("[OK]") and "starts and runs code" in python
    # the test settings carry no user home: the hooks line says so instead of guessing
    assert any(line.startswith("[WARN] hooks") for line in lines)


@pytest.mark.kernels
async def test_insight_writes_a_local_page_of_sessions_with_their_exports(client: Client) -> None:
    from html.parser import HTMLParser

    await client.call_tool("ctx_execute", {"language": "python", "code": "print('<b>&amp;</b>' * 3000)"})
    exported = text_of(await client.call_tool("ctx_export", {"format": "html"}))
    reply = await client.call_tool("ctx_insight", {})
    assert not reply.is_error
    page = Path(text_of(reply).split("Wrote ", 1)[1].split(" (", 1)[0])
    assert " (1 session)" in text_of(reply)
    doc = await anyio.Path(page).read_text()
    HTMLParser().feed(doc)  # well-formed enough to parse
    links = [line for line in doc.split('href="')[1:]]
    assert links, "the exported notebook is linked"
    target = (page.parent / links[0].split('"', 1)[0]).resolve()
    assert target.is_file() and target.suffix in (".html", ".ipynb") and target.name in exported
    assert "ctx_execute" in doc and "kept out" in doc


def test_insight_escapes_what_clients_and_sessions_are_called(tmp_path: Path) -> None:
    from context_kernel.records.insight import SessionView, render_insight
    from context_kernel.store.executions import SessionSummary

    hostile = SessionSummary(id='s"><script>x()</script>', client="<img src=x onerror=y>", started_at=0.0,
                             project_dir=None, executions=1, languages=["python"], bytes_produced=10,
                             bytes_returned=5)
    doc = render_insight(tmp_path / "insight.html", tmp_path, [SessionView(hostile)], [], {"<hook>": 2})
    assert "<script>" not in doc and "<img" not in doc and "<hook>" not in doc
    assert "&lt;script&gt;" in doc and "&lt;img src=x onerror=y&gt;" in doc

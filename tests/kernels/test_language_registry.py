"""Adding a language is one entry in kernels/languages.py. A toy language registered so (the shell kernel
under another name) is resolved by name, checked by doctor, runs cells and file cells through the tools,
and exports its file cells with its own preamble: nothing else is edited."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from tests.helpers import text_of

from context_kernel.doctor import check_language
from context_kernel.kernels.factory import kernel_factory
from context_kernel.kernels.file_content import shell_preamble, shell_text_preamble
from context_kernel.kernels.languages import LANGUAGES, Language, resolve_language
from context_kernel.notebooks.preambles import with_file_preamble
from context_kernel.settings import Settings

pytestmark = pytest.mark.kernels

TOY = Language("toysh", "ck-bash", "nothing to install: the shell kernel under another name", hello="echo ok",
               comment="#", file_code=shell_preamble, file_text_code=shell_text_preamble, aliases=("toy",))


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Language]:
    monkeypatch.setitem(LANGUAGES, TOY.name, TOY)  # the one entry
    yield TOY


def test_one_entry_is_resolved_checked_by_doctor_and_exported(toy: Language, settings: Settings) -> None:
    assert resolve_language(" ToySH ") is toy and resolve_language("toy") is toy
    check = anyio.run(check_language, settings, toy, True, kernel_factory(settings))
    assert (check.level, check.subject.split()[0]) == ("OK", "toysh"), check.line()
    cell = with_file_preamble(toy, "echo done", "data/x.txt", "sha256:ab")
    assert cell is not None
    assert cell.startswith("# context-kernel: FILE_CONTENT from data/x.txt (sha256:ab)\nFILE_CONTENT_PATH=")
    assert cell.endswith("\necho done")


@pytest.mark.anyio
async def test_one_entry_runs_cells_and_file_cells_through_the_tools(toy: Language, client: Client,
                                                                     project: Path) -> None:
    (project / "notes.txt").write_text("hello toy\n")
    first = await client.call_tool("ctx_execute", {"language": "toysh", "code": "X=41; echo $((X + 1))"})
    assert not first.is_error and "42" in text_of(first)
    again = await client.call_tool("ctx_execute", {"language": "toysh", "code": "echo \"X is $X\""})
    assert "X is 41" in text_of(again)  # a warm kernel: the variable is still there
    read = await client.call_tool("ctx_execute_file", {"language": "toysh", "path": "notes.txt",
                                                       "code": "echo \"$FILE_CONTENT\" | tr a-z A-Z"})
    assert not read.is_error and "HELLO TOY" in text_of(read)

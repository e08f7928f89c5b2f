"""What a scenario is (a question, the naive way to answer it, our tool calls, the facts to find) and what
measuring one gives."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .site import plain_text

RawSource = Callable[[Path], bytes]
"""Produces, from the project directory, exactly the bytes the naive tool would put in the agent's context."""


@dataclass(frozen=True)
class Call:
    """One MCP tool call, as a sensible agent would write it."""

    tool: str
    args: dict[str, object]


@dataclass(frozen=True)
class Scenario:
    name: str
    question: str
    naive: str
    """The naive command or read, shown in the table (its output is `raw`)."""
    raw: RawSource
    calls: list[Call]
    expect: list[str]
    """Regular expressions (multiline) that must all match the text our calls returned."""

    @property
    def tools(self) -> str:
        return " + ".join(_short(c) for c in self.calls)


@dataclass
class Outcome:
    scenario: Scenario
    raw_bytes: int = 0
    returned_bytes: int = 0
    args_bytes: int = 0
    seconds: float = 0.0
    returned_text: str = ""
    missing: list[str] = field(default_factory=list)
    error_results: list[str] = field(default_factory=list)
    """Calls whose result was flagged as an error (reported; the answer check still decides)."""
    crash: str | None = None

    @property
    def answered(self) -> bool:
        return self.crash is None and not self.missing

    @property
    def saved(self) -> float:
        return 1 - self.returned_bytes / self.raw_bytes if self.raw_bytes else 0.0


def _short(call: Call) -> str:
    lang = call.args.get("language")
    if call.tool == "ctx_batch_execute":
        return f"ctx_batch_execute({len(call.args['commands'])} cmds, {len(call.args.get('queries') or [])} queries)"  # type: ignore[arg-type]
    if call.tool == "ctx_execute" and call.args.get("intent"):
        return f"ctx_execute({lang}, intent)"
    return f"{call.tool}({lang})" if lang else call.tool


# --- naive sources -----------------------------------------------------------------------------

def shell(command: str) -> RawSource:
    """What a plain Bash tool shows: stdout and stderr together, whatever the exit code."""

    def run(project: Path) -> bytes:
        done = subprocess.run(command, shell=True, cwd=project, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=120, check=False)
        return done.stdout

    return run


def sqlite_rows(db: str, sql: str) -> RawSource:
    """What `sqlite3 DB SQL` prints (rows, columns joined by `|`); without the CLI, the same printed by Python."""
    if shutil.which("sqlite3"):
        return shell(f"sqlite3 {db} '{sql}'")

    def dump(project: Path) -> bytes:
        with sqlite3.connect(project / db) as con:
            rows = con.execute(sql).fetchall()
        con.close()
        return "".join("|".join("" if v is None else str(v) for v in r) + "\n" for r in rows).encode()

    return dump


def http_body(url: str) -> RawSource:
    """What `curl URL` prints: the response body as sent."""
    return lambda _project: _get(url)


def http_text(url: str) -> RawSource:
    """What a plain fetch tool shows for an HTML page: all of its text, navigation and footer included."""
    return lambda _project: plain_text(_get(url).decode()).encode()


def _get(url: str) -> bytes:
    # An empty ProxyHandler: the page is on 127.0.0.1 and proxy variables must not reroute it.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=30) as response:
        body: bytes = response.read()
    return body


def literal(text: str) -> str:
    """An expectation that `text` appears verbatim."""
    return re.escape(text)

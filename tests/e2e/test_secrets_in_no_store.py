"""Issue 25, end to end: the secret corpus goes in through every way the package takes text in — the
agent's code and what it prints (python and shell, fd-level writes included), errors, batches,
ctx_index of text and of a directory, a fetched page under a URL with credentials, hook events,
a compaction snapshot and its restore, an export, the insight page — and then no file the server
or the hooks wrote holds any part of any secret: the database file and its WAL byte by byte, the
logs (the kernels', the hooks', the server's stderr), the spool, the exports. Near misses (ids,
digests, image data, prose about tokens) are all still there.
"""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from tests.helpers import server_command, text_of
from tests.hooks.hookrun import Hooks
from tests.security.secret_corpus import FORMS, NEAR_MISSES, SECRETS

from context_kernel.hooks import hook_cli
from context_kernel.settings import database_path

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
SESSION = "25aa0000-secrets-in-no-store"
PIECE, STEP = 12, 6
"""Every piece of PIECE characters, every STEP, of every secret is looked for: a surviving run of
PIECE + STEP - 1 characters or more is always found (and the FTS index's lower-cased words too)."""


def pieces(part: str) -> list[str]:
    if len(part) <= PIECE:
        return [part]
    return [part[i:i + PIECE] for i in range(0, len(part) - PIECE + 1, STEP)] + [part[-PIECE:]]


NEEDLES = [(s.name, p.encode()) for s in SECRETS for part in s.secret_parts for p in pieces(part)]
# The porter index keeps words lower-cased: a secret indexed as it was would be there as its runs
# of letters and digits.
LOWER = [(name, n.lower()) for name, n in NEEDLES if n.isalnum() and n.lower() != n]


def leaked(data: bytes) -> list[str]:
    return sorted({name for name, needle in NEEDLES if needle in data}
                  | {name for name, needle in LOWER if needle in data})


# Distinctive pieces of the near misses (no quotes: they may be JSON-escaped where stored).
NEAR_PIECES = [piece for text in NEAR_MISSES
               for piece in [w.strip("\"'<>,;:()") for w in text.replace("=", " ").split()]
               if len(piece) >= 32 and not piece.startswith(("http", "data:", "src"))]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[int]:
    root = tmp_path / "site"
    root.mkdir()
    body = "".join(f"<h2>{name}</h2><pre>{text}</pre>\n" for name, text in FORMS.items())
    (root / "docs.html").write_text(f"<!doctype html><html><head><title>Ops notes</title></head><body><main>"
                                    f"<h1>Ops notes</h1><p>Credentials we were sent by mistake.</p>{body}"
                                    f"<p>{'</p><p>'.join(NEAR_MISSES[:10])}</p></main></body></html>")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def hook(hooks: Hooks, event: str, **fields: Any) -> str:
    """One hook call through the console script's entry point, in this process (160 of them as
    processes would take most of a minute); returns what it answered."""
    payload = {"session_id": SESSION, "transcript_path": str(hooks.project / "t.jsonl"), "cwd": str(hooks.project),
               "hook_event_name": event, **fields}
    out = io.StringIO()
    assert hook_cli.main("claude-code", event, json.dumps(payload), dict(hooks.env), stdout=out) == 0
    return out.getvalue()


async def call(client: Client, tool: str, args: dict[str, Any], replies: list[str], error: bool = False) -> str:
    """One tool call; its reply joins `replies` (what is read back from the stores) unless it is
    the reply of the agent's own code."""
    result = await client.call_tool(tool, args)
    text = text_of(result)
    assert result.is_error is error, text
    if tool != "ctx_execute":  # the agent's own output comes back to it as printed; it is stored redacted
        replies.append(text)
    return text


def files_under(*roots: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file()}


async def test_no_corpus_secret_is_in_any_file_written_and_no_near_miss_is_lost(tmp_path: Path, site: int) -> None:
    hooks = Hooks(tmp_path)
    project, home = hooks.project, hooks.home
    notes = project / "notes"
    notes.mkdir()
    (notes / "creds.md").write_text("# Credentials\n\n" + "\n\n".join(f"## {k}\n\n{v}" for k, v in FORMS.items()))
    (notes / "misses.txt").write_text("\n\n".join(NEAR_MISSES))
    texts = list(FORMS.values())
    replies: list[str] = []
    errlog_path = tmp_path / "server-stderr.log"
    cmd = server_command("--project", str(project))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:],
                                   env={**os.environ, "CONTEXT_KERNEL_HOME": str(home)})
    with errlog_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            # What the agent's code holds and prints: stdout, fd-level writes (ipykernel echoes them
            # to the kernel's log), a large output (indexed), an intent, an error, a shell cell.
            code = (f"texts = {texts!r}\nmisses = {NEAR_MISSES!r}\nfor t in texts + misses:\n    print(t)\n"
                    "import subprocess\nsubprocess.run(['printf', '%s\\n', *texts[:40]])")
            await call(client, "ctx_execute", {"language": "python", "code": code}, replies)
            await call(client, "ctx_execute", {"language": "python", "intent": "password token key",
                                               "code": "for i in range(400):\n    print(i, texts[i % len(texts)])"},
                       replies)
            await call(client, "ctx_execute", {"language": "python", "code": f"raise ValueError({texts[1]!r})"},
                       replies, error=True)
            shell = "printf '%s\\n' " + " ".join(json.dumps(t) for t in texts[:60] if "\n" not in t)
            await call(client, "ctx_execute", {"language": "shell", "code": shell}, replies)
            label = "env " + FORMS["github-ghp/keyvalue"]
            await call(client, "ctx_batch_execute", {
                "commands": [{"label": "notes", "command": "cat notes/creds.md"}, {"label": label, "command": shell}],
                "queries": ["token password key"]}, replies)
            replies[-1] = replies[-1].replace(label, "<the agent's own label>")  # echoed in the inventory
            # Indexed directly: text and a directory.
            await call(client, "ctx_index", {"content": "\n\n".join(texts + NEAR_MISSES), "source": "pasted"}, replies)
            await call(client, "ctx_index", {"path": "notes"}, replies)
            # A page fetched under a URL carrying credentials; a refusal; a failure quoting a signed URL.
            api_key, user_pw = "S3cr3tV4lue99", "pw-" + SECRETS[0].value[-10:]
            url = f"http://ops:{user_pw}@127.0.0.1:{site}/docs.html?api_key={api_key}&{FORMS['query-token/url'][-46:]}"
            fetched = await call(client, "ctx_fetch_and_index", {"url": url}, replies)
            assert f"http://127.0.0.1:{site}/docs.html?api_key=[REDACTED url-credential]&token=" in fetched
            assert api_key not in fetched and user_pw not in fetched
            refused = await call(client, "ctx_fetch_and_index", {"url": "file:///etc/passwd"}, replies, error=True)
            assert "Refused file:///etc/passwd: scheme file (only http and https are fetched)" in refused
            missing = await call(client, "ctx_fetch_and_index",
                                 {"url": f"http://127.0.0.1:{site}/gone.html?access_token={api_key}x"}, replies,
                                 error=True)
            assert "access_token=[REDACTED url-credential]" in missing and api_key not in missing
            # Hook events: a prompt, a command and its error, a fetch, an MCP call, per secret.
            with anyio.fail_after(300):
                for secret in SECRETS:
                    forms = secret.forms
                    await anyio.to_thread.run_sync(partial(hook, hooks, "UserPromptSubmit", prompt=forms["prose"]))
                    await anyio.to_thread.run_sync(partial(
                        hook, hooks, "PostToolUseFailure", tool_name="Bash", tool_input={"command": forms["command"]},
                        error="Exit code 1\nerror: " + forms["keyvalue"], is_interrupt=False))
                    await anyio.to_thread.run_sync(partial(
                        hook, hooks, "PostToolUse", tool_name="WebFetch", tool_input={"url": forms["url"]},
                        tool_response={"result": "ok"}))
                    await anyio.to_thread.run_sync(partial(
                        hook, hooks, "PostToolUse", tool_name="mcp__context-kernel__ctx_execute",
                        tool_input={"language": "python", "code": forms["json"]}, tool_response=[]))
            for queries in (["password token key secret"], ["Ops notes credentials"], ["BEGIN PRIVATE KEY"],
                            ["request failed retries trace"]):
                await call(client, "ctx_search", {"queries": queries, "limit": 10}, replies)
            events = await call(client, "ctx_search", {"queries": ["deploy token key password"],
                                                       "source": f"session-events:{SESSION}", "limit": 10}, replies)
            assert "[REDACTED" in events
            # Compaction: the snapshot is stored, then restored into the context.
            await anyio.to_thread.run_sync(partial(hook, hooks, "PreCompact", trigger="manual"))
            restored = await anyio.to_thread.run_sync(partial(hook, hooks, "SessionStart", source="compact"))
            assert "[REDACTED" in restored
            replies.append(restored)
            await call(client, "ctx_export", {"path": "shared", "redact": True}, replies)
            await call(client, "ctx_export", {"path": "plain"}, replies)
            insight = await call(client, "ctx_insight", {}, replies)
    page = Path(insight.split("Wrote ", 1)[1].split(" (", 1)[0])
    written = files_under(home, project / "shared", project / "plain", page.parent)
    written[errlog_path] = errlog_path.read_bytes()
    db = database_path(home)
    assert {db, page} <= set(written)
    assert any(p.name.startswith("kernel-") and p.suffix == ".log" for p in written)
    assert any(p.suffix == ".ipynb" for p in written)

    # Every file, byte by byte: the database (its WAL and shared memory if left), logs, spool, exports.
    found = {str(p.relative_to(tmp_path)): names for p, data in written.items() if (names := leaked(data))}
    assert found == {}
    assert [(r[:80], leaked(r.encode())) for r in replies if leaked(r.encode())] == []
    # What was redacted is there as markers, and the near misses as they were.
    stored = written[db] + written.get(db.with_name(db.name + "-wal"), b"")
    for marker in ("[REDACTED github-token]", "[REDACTED aws-secret]", "[REDACTED jwt]", "[REDACTED private-key]",
                   "[REDACTED url-credential]", "[REDACTED password]"):
        assert marker.encode() in stored, marker
    export = b"".join(data for p, data in written.items() if p.suffix == ".ipynb")
    missing_near = [piece for piece in NEAR_PIECES if piece.encode() not in stored or piece.encode() not in export]
    assert NEAR_PIECES and missing_near == []

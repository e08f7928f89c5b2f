"""The exchange the README shows is real: its calls, made through the MCP client, get exactly its replies.

README.md marks each call with `<!-- exchange:call -->` and each reply with `<!-- exchange:reply -->`,
each followed by a fenced block: a call's fence names the language (```python), its body is the
code given to `ctx_execute`. Calls run in order in one session, so state kept between them counts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"<!-- exchange:(call|reply) -->\s*\n```([\w-]*)\n(.*?)\n```", re.DOTALL)


def readme_exchange() -> list[tuple[str, str, str]]:
    """(language, code, reply) for each call of the README's exchange, in order."""
    blocks = BLOCK.findall(README.read_text())
    marks = README.read_text().count("<!-- exchange:")
    assert len(blocks) == marks, "every exchange marker must be followed by a fenced block"
    kinds = [kind for kind, _, _ in blocks]
    assert kinds and kinds == ["call", "reply"] * (len(kinds) // 2), f"calls and replies must alternate: {kinds}"
    return [(lang, code, reply) for (_, lang, code), (_, _, reply) in zip(blocks[::2], blocks[1::2], strict=True)]


def test_the_readme_shows_at_least_one_python_call_and_its_reply() -> None:
    exchange = readme_exchange()
    assert exchange and all(language == "python" and code.strip() for language, code, _ in exchange)


async def test_each_call_in_the_readme_gets_exactly_the_reply_shown_there(client: Client) -> None:
    for language, code, reply in readme_exchange():
        result = await client.call_tool("ctx_execute", {"language": language, "code": code})
        assert not result.is_error, text_of(result)
        assert text_of(result) == reply

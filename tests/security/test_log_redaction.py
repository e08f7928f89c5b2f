"""The server's log records (security/log_redaction.py): our words stay, what they quote loses its secrets."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from tests.security.secret_corpus import FORMS, SECRETS

from context_kernel.security.log_redaction import install


@pytest.fixture
def logged() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    out = io.StringIO()
    root = logging.getLogger("ck-test-root")
    root.propagate = False
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root.addHandler(handler)
    install(root)
    try:
        yield root, out
    finally:
        root.removeHandler(handler)


def leaked(text: str) -> list[str]:
    return [s.name for s in SECRETS if any(part in text for part in s.secret_parts)]


def test_arguments_and_tracebacks_are_redacted_and_the_message_kept(logged: tuple[logging.Logger, io.StringIO]) -> None:
    root, out = logged
    child = root.getChild("tools")  # a module's logger: the handler's filter sees its records too
    child.warning("tool %s refused or failed: %s", "ctx_fetch_and_index", FORMS["query-api-key/url"])
    try:
        raise RuntimeError(FORMS["openai/prose"])
    except RuntimeError:
        child.exception("could not record %d tool call(s)", 2)
    child.warning("refused %(what)s", {"what": FORMS["github-ghp/keyvalue"]})
    text = out.getvalue()
    assert leaked(text) == []
    assert "tool ctx_fetch_and_index refused or failed: https://api.example.com/v2/items?page=2&api_key=" \
           "[REDACTED url-credential]" in text
    assert "could not record 2 tool call(s)" in text and "RuntimeError: Here is the OpenAI key" in text
    assert "[REDACTED openai-key]" in text and "export GITHUB_TOKEN=[REDACTED github-token]" in text


def test_installing_twice_adds_one_filter(logged: tuple[logging.Logger, io.StringIO]) -> None:
    root, out = logged
    install(root)
    ours = [h for h in root.handlers if isinstance(h, logging.StreamHandler) and h.stream is out]
    assert [len(h.filters) for h in ours] == [1]


"""What a conversation call keeps of its arguments and reply: capped, and a fetched URL without its userinfo."""

from __future__ import annotations

import json

from context_kernel.records.conversation import MAX_ARGUMENTS_CHARS, MAX_REPLY_CHARS, said


def test_other_tools_keep_nothing_and_long_texts_are_cut_with_a_count() -> None:
    assert said("ctx_execute", {"code": "print(1)"}, "1") == (None, None)
    asked, answered = said("ctx_index", {"content": "x" * 10_000_000, "source": "big"}, "y" * 50_000)
    assert asked is not None and answered is not None
    assert len(asked) < MAX_ARGUMENTS_CHARS + 100 and "more characters not kept" in asked
    assert answered.startswith("y" * MAX_REPLY_CHARS) and answered.endswith("[… 46,000 more characters not kept]")


def test_a_fetched_urls_userinfo_is_not_kept() -> None:
    asked, _ = said("ctx_fetch_and_index", {"url": "http://bob:pw-123@127.0.0.1:8000/docs.html",
                                            "requests": [{"url": "https://tok@example.org/a"}]}, "done")
    assert asked is not None and "bob" not in asked and "pw-123" not in asked and "tok@" not in asked
    assert json.loads(asked)["url"] == "http://127.0.0.1:8000/docs.html"

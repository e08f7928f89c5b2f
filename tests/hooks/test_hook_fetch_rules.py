"""WebFetch deny rules follow the page to ctx_fetch_and_index: our fetch tool is no way around them."""

from __future__ import annotations

from hookrun import Hooks


def test_webfetch_rules_also_deny_our_fetch_tool(hooks: Hooks) -> None:
    hooks.deny("WebFetch(domain:intranet.corp)")
    base = hooks.payload("claude-code", "PreToolUse-ctx_execute")
    call = {**base, "tool_name": "mcp__context-kernel__ctx_fetch_and_index",
            "tool_input": {"requests": [{"url": "https://docs.python.org/3/"},
                                        {"url": "https://wiki.intranet.corp/secrets"}]}}
    answer = hooks.run("claude-code", "PreToolUse", call).answer
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "WebFetch(domain:intranet.corp)" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    ok = {**call, "tool_input": {"url": "https://docs.python.org/3/"}}
    assert hooks.run("claude-code", "PreToolUse", ok).answer is None

"""Claude Code's PostToolUseFailure (a failed tool call) is recorded as an error event."""

from __future__ import annotations

from hookrun import Hooks


def test_a_failed_bash_call_is_remembered_with_its_error_line(hooks: Hooks) -> None:
    done = hooks.call("claude-code", "PostToolUseFailure-Bash")
    assert done.returncode == 0 and done.stdout == ""
    rows = hooks.spool_rows()
    errors = [r for r in rows if r["category"] == "errors"]
    assert len(errors) == 1, rows
    assert "pytest tests/test_parser.py" in errors[0]["data"]
    assert "AssertionError: expected 'a b' got 'a'" in errors[0]["data"]

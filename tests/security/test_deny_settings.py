"""Loading permissions.deny from the three settings files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from context_kernel.security import DenyRules, parse_rule


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def deny(*rules: str) -> dict[str, object]:
    return {"permissions": {"allow": ["Bash(ls:*)"], "deny": list(rules)}}


def test_rules_merge_from_all_three_files_highest_precedence_first(project: Path, tmp_path: Path) -> None:
    write(project / ".claude" / "settings.local.json", deny("Bash(git push:*)"))
    write(project / ".claude" / "settings.json", deny("Read(./.env)", "Bash(git push:*)"))
    user = write(tmp_path / "user" / ".claude" / "settings.json", deny("Bash(rm -rf *)", "WebFetch"))
    rules = DenyRules.load(project, user)
    assert [r.text for r in rules.rules] == ["Bash(git push:*)", "Read(./.env)", "Bash(rm -rf *)", "WebFetch"]
    assert rules.warnings == []
    # A rule written in two files is reported from the one with the higher precedence.
    denial = rules.check_shell("git push")
    assert denial is not None and denial.source == ".claude/settings.local.json"
    denial = rules.check_shell("rm -rf x")
    assert denial is not None and denial.source == f"user settings {user}"
    assert rules.check_path(".env", project) is not None


def test_missing_files_and_no_user_file_give_no_rules(project: Path) -> None:
    rules = DenyRules.load(project, None)
    assert len(rules) == 0
    assert rules.warnings == []
    assert rules.check_shell("rm -rf /") is None


def test_the_user_file_is_only_read_when_given(project: Path, tmp_path: Path) -> None:
    user = write(tmp_path / "elsewhere.json", deny("Bash(rm -rf *)"))
    assert DenyRules.load(project, None).check_shell("rm -rf x") is None
    assert DenyRules.load(project, user).check_shell("rm -rf x") is not None


def test_invalid_json_is_skipped_with_a_warning(project: Path, tmp_path: Path) -> None:
    write(project / ".claude" / "settings.local.json", "{not json")
    write(project / ".claude" / "settings.json", deny("Bash(rm -rf *)"))
    rules = DenyRules.load(project, tmp_path / "absent.json")
    assert rules.check_shell("rm -rf x") is not None
    assert len(rules.warnings) == 1
    assert rules.warnings[0].startswith(".claude/settings.local.json: invalid JSON")


@pytest.mark.parametrize(("content", "warned", "kept"), [
    ({"permissions": {"deny": "Bash(rm -rf *)"}}, True, []),
    ({"permissions": {"deny": ["Bash(rm -rf *", 42, "Bash(rm -rf *)"]}}, True, ["Bash(rm -rf *)"]),
    ({"permissions": "deny everything"}, False, []),
    ({"permissions": {"allow": ["Bash"]}}, False, []),
    (["not", "an", "object"], False, []),
    ({}, False, []),
])
def test_odd_shapes_never_raise(project: Path, content: object, warned: bool, kept: list[str]) -> None:
    write(project / ".claude" / "settings.json", content)
    rules = DenyRules.load(project, None)
    assert bool(rules.warnings) is warned
    assert [r.text for r in rules.rules] == kept  # a good entry survives bad ones next to it


def test_a_file_that_is_not_utf8_is_skipped_with_a_warning(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b"\xff\xfe\x00garbage")
    rules = DenyRules.load(project, None)
    assert len(rules) == 0
    assert "not readable" in rules.warnings[0]


def test_rules_for_tools_we_do_not_enforce_are_kept(project: Path) -> None:
    write(project / ".claude" / "settings.json",
          deny("WebFetch(domain:example.com)", "Edit(/src/**)", "mcp__github__create_issue", "Bash"))
    rules = DenyRules.load(project, None)
    assert [r.specifier for r in rules.rules_for("WebFetch")] == ["domain:example.com"]
    assert [r.text for r in rules.rules_for("Edit")] == ["Edit(/src/**)"]
    assert [r.tool for r in rules.rules_for("mcp__github__create_issue")] == ["mcp__github__create_issue"]
    assert rules.rules_for("Read") == ()
    assert rules.check_path("src/a.py", project) is None  # Edit rules do not deny reading
    assert rules.check_shell("ls") is not None  # a bare `Bash` denies every command


@pytest.mark.parametrize(("text", "tool", "specifier"), [
    ("Bash(rm -rf *)", "Bash", "rm -rf *"),
    ("  Read( ./.env )  ", "Read", "./.env"),
    ("Bash(*)", "Bash", None),
    ("Bash()", "Bash", None),
    ("WebFetch", "WebFetch", None),
    ("Bash(echo (a))", "Bash", "echo (a)"),
])
def test_parse_rule(text: str, tool: str, specifier: str | None) -> None:
    rule = parse_rule(text, "test")
    assert rule is not None
    assert (rule.tool, rule.specifier) == (tool, specifier)


@pytest.mark.parametrize("text", ["", "Bash(rm", "(rm -rf *)", "Bash rm", "1Bash(x)"])
def test_parse_rule_rejects_malformed_rules(text: str) -> None:
    assert parse_rule(text, "test") is None

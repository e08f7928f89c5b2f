"""Bash deny rules with Claude Code's matching semantics, applied to every simple command."""

from __future__ import annotations

import pytest

from context_kernel.security import DenyRules

# (rule, command, denied?)
MATCHING = [
    # `prefix:*`: the prefix as a whole word, then anything or nothing
    ("Bash(git push:*)", "git push origin main", True),
    ("Bash(git push:*)", "git push", True),
    ("Bash(git push:*)", "git pushall", False),
    ("Bash(git push:*)", "git pull", False),
    ("Bash(git push:*)", "git  push   --force", True),  # whitespace collapsed
    ("Bash(npm run test:*)", "npm run test:unit", False),  # word boundary after `test`
    ("Bash(curl http://site.com/:*)", "curl http://site.com/page", True),  # non-word end: plain prefix
    # exact command
    ("Bash(curl)", "curl", True),
    ("Bash(curl)", "curl example.com", False),
    ("Bash(npm run build)", "npm run build", True),
    ("Bash(npm run build)", "npm run build --watch", False),
    # `*` matches anything, spaces included; a lone trailing ` *` also matches nothing
    ("Bash(rm -rf *)", "rm -rf /tmp/x", True),
    ("Bash(rm -rf *)", "rm -rf", True),
    ("Bash(rm -rf *)", "rm -r x", False),
    ("Bash(ls *)", "ls -la", True),
    ("Bash(ls *)", "ls", True),
    ("Bash(ls *)", "lsof", False),
    ("Bash(ls*)", "lsof", True),
    ("Bash(git * main)", "git checkout main", True),
    ("Bash(git * main)", "git checkout dev", False),
    ("Bash(* install)", "pnpm install", True),
    ("Bash(* --force)", "git push origin --force", True),
    ("Bash(echo \\*)", "echo *", True),  # an escaped star is literal
    ("Bash(echo \\*)", "echo x", False),
    # whole tool
    ("Bash", "ls", True),
    ("Bash(*)", "anything at all", True),
    # behind wrappers with options (the hooks' event extraction and fetch routing agree: tests/hooks)
    ("Bash(git commit:*)", "timeout 5 git commit -m x", True),
    ("Bash(git push:*)", "ionice -c3 git push", True),
    ("Bash(curl:*)", "ionice -c3 curl https://x.org", True),
]


@pytest.mark.parametrize(("rule", "command", "denied"), MATCHING)
def test_bash_rule_matching(rule: str, command: str, denied: bool) -> None:
    assert (DenyRules.from_strings([rule]).check_shell(command) is not None) is denied


RM = DenyRules.from_strings(["Bash(rm -rf *)"])

DENIED_FORMS = [
    "echo hi && rm -rf /tmp/x",
    "true || rm -rf x",
    "ls; rm -rf x",
    "ls | rm -rf x",
    "sleep 5 & rm -rf x",
    "ls\nrm -rf x",
    "$(rm -rf x)",
    "echo $(rm -rf x)",
    "`rm -rf x`",
    "echo \"$(echo $(rm -rf x))\"",
    "FOO=1 sudo rm -rf x",
    "sudo -u root env A=1 nohup time rm -rf x",
    "bash -c \"rm -rf x\"",
    "sh -c 'cd / && rm -rf x'",
    "eval 'rm -rf x'",
    "/bin/rm -rf x",
    "r\"m\" -rf x",
    "\\rm -rf x",
    "(cd /tmp; rm -rf x)",
    "if true; then rm -rf x; fi",
    "for f in *; do rm -rf \"$f\"; done",
    "xs=$(ls) ; rm   -rf   x",
]


@pytest.mark.parametrize("command", DENIED_FORMS)
def test_a_denied_command_is_found_wherever_it_hides(command: str) -> None:
    denial = RM.check_shell(command)
    assert denial is not None
    assert denial.rule == "Bash(rm -rf *)"
    assert "-rf" in denial.segment


ALLOWED_FORMS = [
    "echo 'rm -rf x'",
    "echo \"rm -rf x; and more\"",
    "grep -r 'rm -rf' .",
    "echo hi # rm -rf x",
    "echo rm -rf x",
    "rm -r x",
    "rm x && ls",
    "command -v rm",
]


@pytest.mark.parametrize("command", ALLOWED_FORMS)
def test_commands_that_only_mention_the_rule_are_allowed(command: str) -> None:
    assert RM.check_shell(command) is None


def test_the_denial_names_the_rule_the_file_and_what_to_do() -> None:
    rules = DenyRules.from_strings(["Bash(git push:*)"], source=".claude/settings.json")
    denial = rules.check_shell("git add . && git push origin main")
    assert denial is not None
    assert denial.rule == "Bash(git push:*)"
    assert denial.segment == "git push origin main"
    assert denial.source == ".claude/settings.json"
    assert "denied by Bash(git push:*) in .claude/settings.json" in denial.reason
    assert "ask the user" in denial.reason


def test_the_first_denied_segment_is_reported() -> None:
    rules = DenyRules.from_strings(["Bash(git push:*)", "Bash(rm -rf *)"])
    denial = rules.check_shell("rm -rf build && git push")
    assert denial is not None
    assert denial.segment == "rm -rf build"


def test_without_bash_rules_nothing_is_denied() -> None:
    rules = DenyRules.from_strings(["Read(./.env)", "WebFetch"])
    assert rules.check_shell("rm -rf /") is None
    assert rules.check_code("python", "import os; os.system('rm -rf /')") is None

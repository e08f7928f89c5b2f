"""Bash deny rules with Claude Code's matching semantics, applied to every simple command."""

from __future__ import annotations

import time

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


# --- found in review: ways around a Bash deny rule that the design says are covered ------------------
# ("any denied segment denies"). In scope: what the shell resolves statically from the text of the
# line (quoting, escapes, redirections, wrappers and shell options that hand the rest of the line to
# another program). Out of scope, and documented in the review report: values computed at run time
# (`$cmd`, `${IFS}`, `$(printf rm)`, brace expansion), argument reordering (`rm -fr` for `rm -rf *`,
# `git -C . push`), programs that run a command and are not in the wrapper list (`watch`,
# `ssh`, `su -c`, `busybox`), and look-alike characters (they name another program, which the shell
# does not find).

@pytest.mark.parametrize(("rule", "command"), [
    ("Bash(sudo:*)", "sudo rm -rf x"),
    ("Bash(sudo *)", "sudo -u root ls"),
    ("Bash(nohup:*)", "nohup make serve &"),
    ("Bash(timeout 5 make)", "timeout 5 make"),
    ("Bash(env:*)", "FOO=1 env BAR=2 python x.py"),
])
def test_a_rule_on_a_wrapper_denies_the_command_that_uses_the_wrapper(rule: str, command: str) -> None:
    # Claude Code matches deny rules on the command as written as well as without its wrappers
    # (https://code.claude.com/docs/en/permissions, "Wrappers"): `Bash(sudo:*)` must stop `sudo ...`.
    denial = DenyRules.from_strings([rule]).check_shell(command)
    assert denial is not None
    assert denial.rule == rule


@pytest.mark.parametrize("command", [
    "ls | xargs rm -rf",
    "xargs -0 -n 1 rm -rf < list",
    "find . -print0 | xargs -0 -P 4 --max-args 2 rm -rf",
    "xargs -I{} sh -c 'rm -rf {}' < list",
    "find . -name build -exec rm -rf {} \\;",
    "find . -name build -execdir rm -rf {} +",
    "find . -ok rm -rf {} ';'",
    "coproc rm -rf x",  # a keyword that runs the rest, like `time` and `!`
    "ionice --class 3 rm -rf x",  # util-linux and coreutils wrappers, long options too
    "chrt -o 0 rm -rf x",
    "taskset -c 0 rm -rf x",
    "setsid -f rm -rf x",
    "stdbuf --output L rm -rf x",
    "flock -w 3 /tmp/lock rm -rf x",
    "flock /tmp/lock -c 'cd / && rm -rf x'",
])
def test_xargs_find_exec_coproc_and_other_wrappers_hand_their_command_to_the_rules(command: str) -> None:
    assert RM.check_shell(command) is not None


@pytest.mark.parametrize("command", ["ls | xargs echo rm -rf", "find . -name '*.py' -print", "find . -exec ls {} +"])
def test_xargs_and_find_running_something_else_pass(command: str) -> None:
    assert RM.check_shell(command) is None


@pytest.mark.parametrize("command", [
    "$'\\x72m' -rf x",  # ANSI-C hex escape
    "$'\\162m' -rf x",  # ANSI-C octal escape
    "$'r'm -rf x",  # ANSI-C quoting glued to plain text
    "r$'m' -rf x",
    "$\"rm\" -rf x",  # locale translation quoting
    "rm $'-rf' x",
])
def test_ansi_c_and_locale_quoting_is_decoded_before_matching(command: str) -> None:
    assert RM.check_shell(command) is not None


@pytest.mark.parametrize("command", ["rm 2>/dev/null -rf x", "rm >out -rf x", "rm >| out -rf x", "rm > out -rf x"])
def test_a_redirection_inside_a_command_does_not_hide_it(command: str) -> None:
    assert RM.check_shell(command) is not None


def test_an_exact_rule_matches_the_command_without_its_output_redirection() -> None:
    # Claude Code strips output redirections before matching (docs above): `npm run build > log` is
    # `npm run build`.
    assert DenyRules.from_strings(["Bash(npm run build)"]).check_shell("npm run build > build.log 2>&1") is not None


@pytest.mark.parametrize("command", [
    "bash --norc -c 'rm -rf x'",
    "bash --rcfile /dev/null -c 'rm -rf x'",
    "bash -o errexit -c 'rm -rf x'",
    "sh -O extglob -c 'rm -rf x'",
    "bash -c -- 'rm -rf x'",
    "bash -c -x 'rm -rf x'",
    "bash +x -c 'rm -rf x'",
])
def test_shell_options_before_the_script_do_not_hide_it(command: str) -> None:
    assert RM.check_shell(command) is not None


def test_nesting_deeper_than_the_python_stack_still_denies() -> None:
    # Past Python's recursion limit the parser raised RecursionError, which the hook answers
    # neutrally: the denied `rm -rf x` in front of the nesting would have run.
    command = "rm -rf x; echo " + '"$(' * 3000
    assert RM.check_shell(command) is not None


def test_a_long_quoted_argument_is_checked_in_linear_time() -> None:
    # shlex builds a token one character at a time (quadratic): 1.5 MB in one quoted word took
    # ~25 s, past a client's hook timeout, and a timed-out hook lets the command run.
    command = "python3 -c '" + "x = 1\n" * 250_000 + "' && rm -rf build"
    started = time.perf_counter()
    denial = RM.check_shell(command)
    assert time.perf_counter() - started < 8
    assert denial is not None and denial.segment == "rm -rf build"


@pytest.mark.parametrize("command", [
    # An apostrophe in a heredoc body opened a quote that swallowed the rest of the line.
    "cat > notes.md <<'EOF'\nIt's done\nEOF\nrm -rf x",
    # The same inside $( ): Claude Code's way of writing a commit message.
    "git commit -m \"$(cat <<'EOF'\nDon't crash on an empty cart\nEOF\n)\" && rm -rf x",
])
def test_an_apostrophe_in_a_heredoc_does_not_hide_the_next_command(command: str) -> None:
    denial = RM.check_shell(command)
    assert denial is not None and denial.segment == "rm -rf x"

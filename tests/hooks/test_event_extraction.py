"""events_from: realistic Claude Code hook payloads become the session events we remember."""

from __future__ import annotations

import subprocess
import sys

import claude_payloads as cc
import pytest

from context_kernel.hooks.extract import classify_prompt, events_from
from context_kernel.hooks.model import CATEGORIES, Event, HookCall
from context_kernel.hooks.shell_commands import shell_events


def events(payload: dict) -> list[Event]:
    return events_from(cc.as_call(payload))


def pairs(payload: dict) -> list[tuple[str, str]]:
    return [(e.type, e.data) for e in events(payload)]


def test_reading_a_file_inside_the_project_records_its_relative_path() -> None:
    assert pairs(cc.READ) == [("file_read", "src/cart/totals.py")]
    assert events(cc.READ)[0].category == "files"


def test_a_path_outside_the_project_stays_absolute() -> None:
    assert pairs(cc.READ_OUTSIDE) == [("file_read", "/etc/hosts")]


def test_reads_rank_below_edits() -> None:
    assert events(cc.READ)[0].effective_priority() > events(cc.EDIT)[0].effective_priority()


@pytest.mark.parametrize("payload, expected", [
    (cc.EDIT, ("file_edit", "src/cart/totals.py")),
    (cc.MULTI_EDIT, ("file_edit", "src/cart/models.py")),
    (cc.WRITE, ("file_write", "tests/test_totals.py")),
    (cc.NOTEBOOK_EDIT, ("file_edit", "notebooks/explore.ipynb")),
])
def test_edits_and_writes_are_file_events(payload: dict, expected: tuple[str, str]) -> None:
    assert pairs(payload) == [expected]


@pytest.mark.parametrize("payload, path", [(cc.READ_CLAUDE_MD, "CLAUDE.md"),
                                           (cc.READ_CURSOR_RULE, ".cursor/rules/python.mdc")])
def test_reading_an_instruction_file_records_a_rule(payload: dict, path: str) -> None:
    [event] = events(payload)
    assert (event.type, event.category, event.data) == ("rule", "rules", path)


def test_todos_become_one_event_per_todo_with_status() -> None:
    got = events(cc.TODO_WRITE)
    assert [(e.type, e.category, e.data) for e in got] == [
        ("task_done", "tasks", "[completed] Fix rounding in cart totals"),
        ("task", "tasks", "[in_progress] Add tests for discounts"),
        ("task", "tasks", "[pending] Update the changelog"),
    ]
    assert got[0].effective_priority() > got[1].effective_priority()


def test_task_create_and_update_share_the_task_id() -> None:
    assert pairs(cc.TASK_CREATE) == [("task", "[pending] Migrate prices to Decimal (#4)")]
    assert pairs(cc.TASK_UPDATE) == [("task_done", "[completed] task #4")]


def test_a_commit_made_with_a_heredoc_records_its_subject_line() -> None:
    assert pairs(cc.BASH_COMMIT) == [("git", "commit: Fix rounding in cart totals")]
    assert events(cc.BASH_COMMIT)[0].category == "environment"


def test_cd_branch_and_push_in_one_command_are_three_environment_events() -> None:
    assert pairs(cc.BASH_BRANCH) == [
        ("cwd", "src"), ("git", "checkout -b fix/rounding"), ("git", "push -u origin fix/rounding")]


def test_cd_dash_is_recorded_as_the_previous_directory_not_home() -> None:
    assert [(e.type, e.data) for e in shell_events("cd - && make", "/p")] == [("cwd", "-")]


def test_read_only_git_commands_are_not_recorded() -> None:
    assert events(cc.BASH_READ_ONLY_GIT) == []


def test_package_installs_are_environment_events() -> None:
    assert pairs(cc.BASH_INSTALL) == [("env", "uv pip install httpx==0.28.1"),
                                      ("env", "npm install --save-dev esbuild")]


def test_a_passing_command_without_side_effects_records_nothing() -> None:
    assert events(cc.BASH_OK) == []


def test_a_failed_command_records_the_command_and_the_telling_error_line() -> None:
    [event] = events(cc.BASH_FAILED)
    assert (event.type, event.category) == ("error", "errors")
    assert event.data == "python -m shop.import data/orders.csv → KeyError: 'order_id'"


def test_stderr_with_an_error_counts_even_when_the_tool_reported_success() -> None:
    [event] = events(cc.BASH_STDERR)
    assert event.type == "error"
    assert event.data == "node build.js → Error: Cannot find module 'esbuild'"


def test_an_interrupted_command_is_neither_an_error_nor_an_action() -> None:
    assert events(cc.BASH_INTERRUPTED) == []


def test_a_failed_edit_is_an_error_not_an_edit() -> None:
    assert pairs(cc.EDIT_FAILED) == [("error", "Edit src/cart/totals.py → String to replace not found in file.")]


@pytest.mark.parametrize("payload, expected", [
    (cc.SUBAGENT, ("subagent", "Explore: Find all price fields")),
    (cc.AGENT, ("subagent", "code-reviewer: Review the diff")),
    (cc.WEB_FETCH, ("web", "fetch https://docs.python.org/3/library/decimal.html")),
    (cc.WEB_SEARCH, ("web", "search: python decimal round half up")),
    (cc.GREP, ("search", "Grep def total in src")),
    (cc.GLOB, ("search", "Glob **/*.py")),
])
def test_agents_web_and_search_tools_are_tool_events(payload: dict, expected: tuple[str, str]) -> None:
    [event] = events(payload)
    assert (event.type, event.data) == expected
    assert event.category == "tools"


def test_other_mcp_tools_record_a_short_argument_summary_without_secrets() -> None:
    [event] = events(cc.MCP_OTHER)
    assert event.type == "mcp_tool"
    assert event.data.startswith("mcp__github__create_issue owner=me repo=shop title=Rounding bug")
    assert "sk-live" not in event.data
    assert len(event.data) <= 300


def test_our_ctx_execute_is_recorded_with_its_intent() -> None:
    assert pairs(cc.CTX_EXECUTE) == [("mcp_tool", "ctx_execute python: count orders")]


def test_our_ctx_execute_error_result_is_an_error_event() -> None:
    [event] = events(cc.CTX_EXECUTE_ERROR)
    assert event.type == "error"
    assert event.data == "ctx_execute python: import polars → ModuleNotFoundError: No module named 'polars'"


def test_ctx_execute_file_counts_as_reading_the_file_whatever_the_server_prefix() -> None:
    assert pairs(cc.CTX_EXECUTE_FILE) == [("mcp_tool", "ctx_execute_file logs/app.log"),
                                          ("file_read", "logs/app.log")]


def test_ctx_search_records_its_queries() -> None:
    assert pairs(cc.CTX_SEARCH) == [("mcp_tool", "ctx_search: decimal rounding | ROUND_HALF_UP")]


def test_an_approved_plan_is_a_decision() -> None:
    assert pairs(cc.EXIT_PLAN) == [("plan", "plan: Switch money to Decimal")]
    assert events(cc.EXIT_PLAN)[0].category == "decisions"


def test_unknown_tools_give_at_most_one_low_priority_event_and_bookkeeping_tools_none() -> None:
    [event] = events(cc.UNKNOWN)
    assert (event.category, event.data, event.effective_priority()) == ("tools", "SlashCommand", 4)
    assert events(cc.SILENT) == []


def test_startup_records_the_working_directory_but_resume_does_not() -> None:
    assert pairs(cc.session_start("startup")) == [("cwd", cc.CWD)]
    assert events(cc.session_start("compact")) == []


def test_every_event_uses_a_known_category_and_short_data() -> None:
    payloads = [v for k, v in vars(cc).items() if k.isupper() and isinstance(v, dict) and "hook_event_name" in v]
    assert len(payloads) > 30
    for payload in payloads:
        for event in events(payload):
            assert event.category in CATEGORIES
            assert 0 < len(event.data) <= 300


def test_odd_payloads_never_raise() -> None:
    odd = [
        HookCall("claude-code", "post_tool", "s", tool="Bash", tool_input={"command": "echo 'unbalanced"}),
        HookCall("claude-code", "post_tool", "s", tool="Edit", tool_input={"file_path": 42}),
        HookCall("claude-code", "post_tool", "s", tool="TodoWrite", tool_input={"todos": "nope"}),
        HookCall("claude-code", "post_tool", "s", tool="Bash", tool_input={"command": "x"}, tool_response="text"),
        HookCall("claude-code", "post_tool", "s", tool=None),
        HookCall("claude-code", "pre_tool", "s", tool="Read", tool_input={"file_path": "/a"}),
    ]
    assert [events_from(call) for call in odd] == [[], [], [], [], [], []]


# --- prompts -------------------------------------------------------------------------------------

def test_a_prompt_is_recorded_as_intent_trimmed_to_300_characters() -> None:
    [event] = events(cc.prompt("Please look at the checkout flow.  " + "word " * 200))
    assert (event.type, event.category) == ("prompt", "intent")
    assert event.data.startswith("Please look at the checkout flow. word")
    assert len(event.data) <= 300


@pytest.mark.parametrize("text", [
    "Let's use Decimal for all prices.",
    "Use httpx instead of requests.",
    "We'll go with Postgres for the queue.",
    "Don't touch the migrations folder.",
    "Always run the linter before committing.",
    "Never push directly to main.",
    "Please prefer small functions over classes.",
    "From now on, write tests first.",
    "Fix the parser. Also, avoid global state in the new module.",
])
def test_prompts_that_state_a_choice_are_decisions(text: str) -> None:
    kind, sentences = classify_prompt(text)
    assert kind == "decision"
    assert sentences
    decision = [e for e in events(cc.prompt(text)) if e.category == "decisions"]
    assert [e.type for e in decision] == ["decision"]


@pytest.mark.parametrize("text", [
    "No, the totals should include tax.",
    "That's wrong, the discount applies per item.",
    "Actually the file is in src/legacy.",
    "Stop doing full rewrites of the module.",
    "Put it in utils.py instead.",
    "No, use httpx instead of requests.",
])
def test_prompts_that_correct_the_agent_are_corrections(text: str) -> None:
    assert classify_prompt(text)[0] == "correction"


@pytest.mark.parametrize("text", [
    "Should we use Redis for caching?",
    "Can you always run the tests before committing?",
    "What does never_expire do?",
    "Fix the rounding bug in totals.py",
    "I never got this test to pass on CI, look at the log",
    "No problem, carry on with the next file.",
    "The docs prefer composition; summarise them for me",
    "Use the logger to find where it fails",
])
def test_questions_and_plain_requests_are_not_decisions(text: str) -> None:
    assert classify_prompt(text) == (None, [])
    assert [e.category for e in events(cc.prompt(text))] == ["intent"]


def test_only_the_sentences_that_decide_are_kept() -> None:
    kind, sentences = classify_prompt("Why is this slow? Let's use a dict for the lookup.\nThen rerun it.")
    assert (kind, sentences) == ("decision", ["Let's use a dict for the lookup."])


@pytest.mark.parametrize("prompt", ["Never mind.", "Never mind, I'll look at it myself.", "never  mind that"])
def test_never_mind_is_not_a_decision(prompt: str) -> None:
    assert classify_prompt(prompt) == (None, [])


@pytest.mark.parametrize(("prompt", "kind"), [
    ("Never commit to main.", "decision"),
    ("Never mind, let's use pytest.", "decision"),  # the decision is the second half
])
def test_never_still_starts_a_rule(prompt: str, kind: str) -> None:
    assert classify_prompt(prompt)[0] == kind


def test_extraction_imports_only_the_standard_library() -> None:
    code = ("import sys; import context_kernel.hooks.extract, context_kernel.hooks.snapshot, "
            "context_kernel.hooks.guide; heavy = {'sqlalchemy', 'anyio', 'mcp', 'pydantic', 'httpx'}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_a_huge_heredoc_command_is_examined_only_in_its_head() -> None:
    body = "row;with|shell&chars 'and quotes\n" * 40_000  # ~1.3 MB written through a heredoc
    command = f"git commit -m early && cat > data.txt <<'EOF'\n{body}EOF\ngit push origin late"
    call = HookCall("claude-code", "post_tool", "s", cwd="/p", tool="Bash", tool_input={"command": command},
                    tool_response={"stdout": "", "stderr": "", "interrupted": False, "isImage": False})
    got = [(e.type, e.data) for e in events_from(call)]
    # `git push` lies past the scanned head, so only the commit before the heredoc is seen: the proof
    # that the hook examines 16 KB, not 1.3 MB (a time limit here would only flake on a loaded machine)
    assert got == [("git", "commit: early")]


@pytest.mark.parametrize(("command", "expected"), [
    ("timeout 5 git commit -m x", [("git", "commit: x")]),
    ("ionice -c3 git push", [("git", "push")]),
])
def test_a_git_command_behind_a_wrapper_is_recorded(command: str, expected: list[tuple[str, str]]) -> None:
    # The deny rules have always seen these (`Bash(git push:*)` denies `ionice -c3 git push`); the session
    # memory did not record them.
    assert pairs(cc.post_tool("Bash", {"command": command}, {"stdout": "", "stderr": "", "interrupted": False,
                                                            "isImage": False})) == expected


def test_a_heredoc_body_is_text_unless_a_shell_reads_it() -> None:
    # Each line of a heredoc used to be read as a command: notes about a push recorded a push.
    def got(command: str) -> list[tuple[str, str]]:
        return pairs(cc.post_tool("Bash", {"command": command}, {"stdout": "", "stderr": "", "interrupted": False,
                                                                "isImage": False}))

    assert got("cat > notes.md <<'EOF'\ngit push origin main\nEOF") == []
    assert got("bash <<'EOF'\ngit push origin main\nEOF") == [("git", "push origin main")]
    assert got("eval 'git push' && bash -c 'git tag v1'") == [("git", "push"), ("git", "tag v1")]

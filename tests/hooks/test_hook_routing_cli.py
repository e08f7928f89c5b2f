"""PreToolUse through the real console script: redirects only with a live server, deny rules always,
nudges once per session, and a broken input never breaks the agent."""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hookrun import Hooks

from context_kernel.security.deny import DenyRules

WEBFETCH = ('WebFetch is routed through context-kernel while its server runs: call ctx_fetch_and_index(url="{url}", '
            'source="{host}") to fetch and index the page, then ctx_search(queries=[...], source="{host}") for the '
            'parts you need. The raw page never enters your context.')
SHELL_FETCH = ('This command would print a web page into your context ({tool}). Use ctx_fetch_and_index(url="{url}", '
               'source="{host}") and then ctx_search(queries=[...]) to read only the parts you need, or run it with '
               'ctx_execute(language="shell", code=...) where only what you print comes back. Downloads to a file '
               '(curl -o/-O, wget, > file) and silent checks (curl -s -o /dev/null -w ..., curl -I) are not '
               'redirected.')
READ_NUDGE = ("context-kernel (shown once): to analyse a large file without loading it into your context, call "
              "ctx_execute_file(path, language, code): the file is in FILE_CONTENT and only what your code prints "
              "comes back.")
GREP_NUDGE = ("context-kernel (shown once): to search fetched docs, indexed files or earlier long outputs, "
              "ctx_search(queries=[...]) returns only the matching snippets; to scan many files, "
              'ctx_execute(language="shell", code=...) and print only what you need.')
BASH_NUDGE = ('context-kernel (shown once): for commands with long output (builds, tests, logs), use '
              'ctx_execute(language="shell", code=..., intent="what you look for"): the full output is indexed and '
              'only the relevant lines come back.')


def claude_deny(reason: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def gemini_deny(reason: str) -> dict[str, Any]:
    return {"decision": "deny", "reason": reason}


def cursor_deny(reason: str) -> dict[str, Any]:
    return {"permission": "deny", "user_message": reason, "agent_message": reason}


WEBFETCH_CASES = [
    ("claude-code", "PreToolUse-WebFetch", claude_deny, "https://docs.python.org/3/library/shlex.html",
     "docs.python.org", ""),
    ("gemini", "BeforeTool-web_fetch", gemini_deny, "https://geminicli.com/docs/hooks/reference", "geminicli.com", ""),
    ("copilot", "PreToolUse-fetch_webpage", claude_deny,
     "https://code.visualstudio.com/docs/agents/reference/hooks-reference", "code.visualstudio.com", ""),
    ("cursor", "preToolUse-WebFetch", cursor_deny, "https://cursor.com/docs/agent/hooks", "cursor.com", "{}"),
]


@pytest.mark.parametrize(("client", "fixture", "shape", "url", "host", "neutral"), WEBFETCH_CASES)
def test_webfetch_is_denied_with_a_pointer_to_ctx_tools_while_a_server_runs(
        hooks: Hooks, client: str, fixture: str, shape: Any, url: str, host: str, neutral: str) -> None:
    with hooks.server_alive():
        run = hooks.call(client, fixture)
    assert run.returncode == 0
    assert run.answer == shape(WEBFETCH.format(url=url, host=host))


@pytest.mark.parametrize(("client", "fixture", "shape", "url", "host", "neutral"), WEBFETCH_CASES)
def test_webfetch_passes_untouched_when_no_server_runs(
        hooks: Hooks, client: str, fixture: str, shape: Any, url: str, host: str, neutral: str) -> None:
    run = hooks.call(client, fixture)
    assert (run.returncode, run.stdout.strip()) == (0, neutral)


def test_a_server_file_left_by_a_dead_process_does_not_count_as_alive(hooks: Hooks) -> None:
    dead = subprocess.Popen(["true"])  # a process that has exited: its pid is free
    dead.wait()
    (hooks.home / "servers").mkdir(parents=True)
    (hooks.home / "servers" / str(dead.pid)).write_text("")
    run = hooks.call("claude-code", "PreToolUse-WebFetch")
    assert (run.returncode, run.stdout) == (0, "")
    assert not (hooks.home / "servers" / str(dead.pid)).exists()


@pytest.mark.parametrize(("command", "tool", "url"), [
    ("curl https://example.com/api/items", "curl", "https://example.com/api/items"),
    ("curl -sL https://example.com/page | jq .", "curl", "https://example.com/page"),
    ("wget -qO- https://example.com/feed.xml", "wget", "https://example.com/feed.xml"),
    ("curl -s https://example.com/a | tee page.html", "curl", "https://example.com/a"),
    ("http GET https://example.com/api", "http", "https://example.com/api"),
    ("python3 -c \"import requests; print(requests.get('https://example.com/x').text)\"",
     "python3 HTTP request", "https://example.com/x"),
])
def test_a_shell_command_that_would_print_a_page_is_denied_while_a_server_runs(
        hooks: Hooks, command: str, tool: str, url: str) -> None:
    with hooks.server_alive():
        run = hooks.call("claude-code", "PreToolUse-Bash", command=command)
    assert run.answer == claude_deny(SHELL_FETCH.format(tool=tool, url=url, host="example.com"))


@pytest.mark.parametrize("command", [
    "curl -o page.html https://example.com",
    "curl -sSLO https://example.com/file.tgz",
    "wget https://example.com/file.tgz",
    "curl -s -o /dev/null -w '%{http_code}' https://example.com",
    "curl -I https://example.com",
    "curl -s https://example.com > page.html",
    "curl -fsSL https://example.com/install.sh | sh",
    "curl -s https://example.com/api | jq '.items | length'",
])
def test_downloads_silent_checks_and_filtered_fetches_are_not_redirected(hooks: Hooks, command: str) -> None:
    with hooks.server_alive():
        run = hooks.call("claude-code", "PreToolUse-Bash", command=command)
    # Allowed: at most the session's one Bash nudge, never a decision.
    assert run.answer == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": BASH_NUDGE}}


def test_a_printing_fetch_runs_normally_when_no_server_runs(hooks: Hooks) -> None:
    run = hooks.call("claude-code", "PreToolUse-Bash", command="curl https://example.com/api/items")
    assert (run.returncode, run.stdout) == (0, "")


def test_each_client_gets_the_shell_fetch_denial_in_its_own_shape(hooks: Hooks) -> None:
    command = "curl https://example.com/api/items"
    reason = SHELL_FETCH.format(tool="curl", url="https://example.com/api/items", host="example.com")
    cursor = hooks.payload("cursor", "beforeShellExecution")
    cursor["command"] = command
    with hooks.server_alive():
        answers = {
            "codex": hooks.call("codex", "PreToolUse-Bash", command=command).answer,
            "gemini": hooks.call("gemini", "BeforeTool-run_shell_command", command=command).answer,
            "copilot": hooks.call("copilot", "PreToolUse-run_in_terminal", command=command).answer,
            "cursor": hooks.run("cursor", "beforeShellExecution", cursor).answer,
        }
    assert answers == {"codex": claude_deny(reason), "gemini": gemini_deny(reason),
                       "copilot": claude_deny(reason), "cursor": cursor_deny(reason)}


def test_read_grep_and_bash_are_nudged_once_per_session_then_left_alone(hooks: Hooks) -> None:
    def context(fixture: str, session: str = "abc123") -> Any:
        payload = hooks.payload("claude-code", fixture)
        payload["session_id"] = session
        return hooks.run("claude-code", "PreToolUse", payload).answer

    def nudge(text: str) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}

    with hooks.server_alive():
        seen = [context("PreToolUse-Read"), context("PreToolUse-Read"), context("PreToolUse-Grep"),
                context("PreToolUse-Bash"), context("PreToolUse-Bash"), context("PreToolUse-Grep"),
                context("PreToolUse-Read", session="another-session")]
    assert seen == [nudge(READ_NUDGE), None, nudge(GREP_NUDGE), nudge(BASH_NUDGE), None, None, nudge(READ_NUDGE)]


def test_concurrent_hooks_of_one_session_nudge_exactly_once(hooks: Hooks) -> None:
    import json

    data = json.dumps(hooks.payload("claude-code", "PreToolUse-Read"))
    with hooks.server_alive():
        procs = [hooks.start("claude-code", "PreToolUse") for _ in range(8)]
        outputs = [p.communicate(data, timeout=60)[0] for p in procs]
    assert sorted(bool(out.strip()) for out in outputs) == [False] * 7 + [True]


def test_clients_that_cannot_show_context_before_a_tool_are_not_nudged(hooks: Hooks) -> None:
    with hooks.server_alive():
        gemini = hooks.call("gemini", "BeforeTool-read_file")
        cursor = hooks.call("cursor", "beforeReadFile")
    assert (gemini.stdout, cursor.stdout.strip()) == ("", "{}")
    assert not (hooks.home / "hooks" / "nudged").exists() or not any((hooks.home / "hooks" / "nudged").iterdir())


def test_codex_and_copilot_carry_the_nudge_without_a_permission_decision(hooks: Hooks) -> None:
    with hooks.server_alive():
        codex = hooks.call("codex", "PreToolUse-Bash")
        copilot = hooks.call("copilot", "PreToolUse-read_file")
    assert codex.answer == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": BASH_NUDGE}}
    assert copilot.answer == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": READ_NUDGE}}


# --- deny rules -------------------------------------------------------------------------------------

def denial(hooks: Hooks, check: str, *args: Any) -> str:
    """The real rule engine's reason, as the hook must pass it on (first letter capitalised)."""
    found = getattr(DenyRules.load(hooks.project, hooks.user_home / ".claude" / "settings.json"), check)(*args)
    assert found is not None
    return str(found.reason[:1].upper() + found.reason[1:])


@pytest.mark.parametrize("alive", [False, True])
def test_project_deny_rules_block_bash_and_our_tools_with_or_without_a_server(hooks: Hooks, alive: bool) -> None:
    hooks.deny("Bash(rm -rf *)", "Read(./secrets/**)")
    code = 'import subprocess\nsubprocess.run("rm -rf build", shell=True)\n'
    bash_reason = denial(hooks, "check_shell", "rm -rf build")
    assert "Bash(rm -rf *)" in bash_reason and ".claude/settings.json" in bash_reason
    expected = {
        "bash": claude_deny(bash_reason),
        "code": claude_deny(denial(hooks, "check_code", "python", code)),
        "file": claude_deny(denial(hooks, "check_path", "secrets/key.txt", hooks.project, hooks.user_home)),
        "batch": claude_deny(bash_reason),
        "allowed_code": None,
    }
    batch = [{"label": "status", "command": "git status"}, {"label": "clean", "command": "rm -rf build"}]
    with hooks.server_alive() if alive else contextlib.nullcontext():
        answers = {
            "bash": hooks.call("claude-code", "PreToolUse-Bash", command="rm -rf build").answer,
            "code": hooks.call("claude-code", "PreToolUse-ctx_execute", code=code).answer,
            "file": hooks.call("claude-code", "PreToolUse-ctx_execute_file", path="secrets/key.txt").answer,
            "batch": hooks.call("claude-code", "PreToolUse-ctx_batch_execute", commands=batch).answer,
            "allowed_code": hooks.call("claude-code", "PreToolUse-ctx_execute").answer,
        }
    assert answers == expected


def test_project_deny_rules_still_apply_after_the_agent_cd_ed_out_of_the_project(hooks: Hooks, tmp_path: Path) -> None:
    # The client's project variable names the root where the rules live; the payload's cwd (here
    # outside the project) used to win, and the project's rules were then not loaded at all.
    hooks.deny("Bash(rm -rf *)")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = hooks.payload("claude-code", "PreToolUse-Bash", command="rm -rf build")
    payload["cwd"] = str(elsewhere)
    answer = hooks.run("claude-code", "PreToolUse", payload, CLAUDE_PROJECT_DIR=str(hooks.project)).answer
    assert answer == claude_deny(denial(hooks, "check_shell", "rm -rf build"))


def test_deny_rules_from_the_user_settings_apply_and_reach_every_client_in_its_shape(hooks: Hooks) -> None:
    (hooks.user_home / ".claude").mkdir()
    (hooks.user_home / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash(git push:*)"]}}')
    reason = denial(hooks, "check_shell", "git push origin main")
    cursor = hooks.payload("cursor", "beforeShellExecution")
    cursor["command"] = "git push origin main"
    answers = {
        "codex": hooks.call("codex", "PreToolUse-Bash", command="git push origin main").answer,
        "gemini": hooks.call("gemini", "BeforeTool-run_shell_command", command="git push origin main").answer,
        "cursor": hooks.run("cursor", "beforeShellExecution", cursor).answer,
        "ok": hooks.call("codex", "PreToolUse-Bash", command="git status").answer,
    }
    assert answers == {"codex": claude_deny(reason), "gemini": gemini_deny(reason), "cursor": cursor_deny(reason),
                       "ok": None}


def test_cursor_mcp_calls_to_our_tools_are_checked_against_the_deny_rules(hooks: Hooks) -> None:
    hooks.deny("Bash(rm -rf *)")
    payload = hooks.payload("cursor", "beforeMCPExecution")
    payload["tool_input"] = '{"language": "shell", "code": "rm -rf build"}'
    run = hooks.run("cursor", "beforeMCPExecution", payload)
    assert run.answer == cursor_deny(denial(hooks, "check_code", "shell", "rm -rf build"))


def test_a_command_that_overflows_the_parser_is_still_denied(hooks: Hooks) -> None:
    hooks.deny("Bash(rm -rf *)")
    payload = {"session_id": "s1", "cwd": str(hooks.project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "rm -rf ~/work; echo " + '"$(' * 3000}}
    run = hooks.run("claude-code", "PreToolUse", payload)
    assert run.returncode == 0
    assert run.answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_huge_command_is_answered_in_seconds(hooks: Hooks) -> None:
    # A client waits for the hook (Claude Code: 60 s by default) and then runs the tool anyway.
    hooks.deny("Bash(git push:*)")
    with hooks.server_alive():
        payload = {"session_id": "s1", "cwd": str(hooks.project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": "echo '" + "data " * 300_000 + "' > blob.txt && git push"}}
        started = time.perf_counter()
        run = hooks.run("claude-code", "PreToolUse", payload)
        assert time.perf_counter() - started < 20
    assert run.answer["hookSpecificOutput"]["permissionDecision"] == "deny"


# --- never break the agent ---------------------------------------------------------------------------

@pytest.mark.parametrize(("client", "event", "neutral"), [
    ("claude-code", "PreToolUse", ""), ("gemini", "BeforeTool", ""), ("codex", "PostToolUse", ""),
    ("cursor", "beforeShellExecution", "{}"), ("copilot", "PreToolUse", ""),
])
def test_garbage_on_stdin_gives_a_neutral_answer_and_one_log_line(
        hooks: Hooks, client: str, event: str, neutral: str) -> None:
    run = hooks.run(client, event, "this is not {json")
    assert (run.returncode, run.stdout.strip()) == (0, neutral)
    (line,) = hooks.log_lines()
    assert f"{client} {event} failed: JSONDecodeError" in line


def test_a_json_value_that_is_not_an_object_is_logged_too(hooks: Hooks) -> None:
    run = hooks.run("claude-code", "PreToolUse", "[1, 2]")
    assert (run.returncode, run.stdout) == (0, "")
    assert "TypeError: hook input is a JSON list, not an object" in hooks.log_lines()[-1]


def test_unknown_client_or_event_says_so_on_stderr_and_exits_0(hooks: Hooks) -> None:
    client = hooks.run("windsurf", "PreToolUse", "{}")
    event = hooks.run("claude-code", "BeforeTool", "{}")
    assert (client.returncode, client.stdout) == (0, "")
    assert "unknown client 'windsurf'" in client.stderr
    assert (event.returncode, event.stdout) == (0, "")
    assert "claude-code has no event 'BeforeTool'" in event.stderr


def test_an_unusable_home_still_answers_neutrally(hooks: Hooks) -> None:
    blocked = hooks.home.parent / "not-a-dir"
    blocked.write_text("a file where the home should be")
    pre = hooks.run("claude-code", "PreToolUse", hooks.payload("claude-code", "PreToolUse-Read"),
                    CONTEXT_KERNEL_HOME=str(blocked))
    post = hooks.run("claude-code", "PostToolUse", hooks.payload("claude-code", "PostToolUse-Read"),
                     CONTEXT_KERNEL_HOME=str(blocked))
    assert [(r.returncode, r.stdout) for r in (pre, post)] == [(0, ""), (0, "")]


def test_duration_is_logged_when_asked(hooks: Hooks) -> None:
    hooks.run("claude-code", "PreToolUse", hooks.payload("claude-code", "PreToolUse-Read"),
              CONTEXT_KERNEL_HOOK_LOG="1")
    (line,) = hooks.log_lines()
    assert line.split(" ", 2)[2].startswith("claude-code PreToolUse ") and line.endswith(" ms")


def test_a_settings_file_that_is_not_json_is_reported_in_the_log(hooks: Hooks) -> None:
    (hooks.project / ".claude").mkdir()
    (hooks.project / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash(rm -rf *)"],}')
    run = hooks.call("claude-code", "PreToolUse-Bash", command="rm -rf build")
    assert (run.returncode, run.stdout) == (0, "")
    (line,) = hooks.log_lines()
    assert "deny rules: .claude/settings.json: invalid JSON" in line


def test_vs_code_running_the_claude_code_hooks_is_understood(hooks: Hooks) -> None:
    # VS Code reads .claude/settings.json too and calls `hook claude-code` with its own payload.
    with hooks.server_alive():
        run = hooks.run("claude-code", "PreToolUse", hooks.payload("copilot", "PreToolUse-fetch_webpage"))
    url = "https://code.visualstudio.com/docs/agents/reference/hooks-reference"
    assert run.answer == claude_deny(WEBFETCH.format(url=url, host="code.visualstudio.com"))


def test_deny_rules_in_the_settings_of_a_moved_claude_config_dir_apply(hooks: Hooks, tmp_path: Path) -> None:
    moved = tmp_path / "claude-work"  # CLAUDE_CONFIG_DIR replaces ~/.claude, settings.json included
    moved.mkdir()
    (moved / "settings.json").write_text('{"permissions": {"deny": ["Bash(git push:*)"]}}')
    payload = hooks.payload("claude-code", "PreToolUse-Bash", command="git push origin main")
    moved_answer = hooks.run("claude-code", "PreToolUse", payload, CLAUDE_CONFIG_DIR=str(moved)).answer
    assert moved_answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "git push" in moved_answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert hooks.run("claude-code", "PreToolUse", payload).answer is None  # ~/.claude has no such rule

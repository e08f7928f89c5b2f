"""The exact rule for "this shell command would print a web page" (session.shell_fetch)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from context_kernel.hooks.model import HookCall
from context_kernel.hooks.routing import RoutingContext, decide
from context_kernel.hooks.shell_fetch import PrintingFetch, find_printing_fetch

PRINTS = [
    ("curl https://a.io/x", "curl", "https://a.io/x"),
    ("curl -sS https://a.io/x", "curl", "https://a.io/x"),
    ("curl -o - https://a.io/x", "curl", "https://a.io/x"),
    ("curl --output=- https://a.io/x", "curl", "https://a.io/x"),
    ("curl -XPOST -d 'q=1' https://a.io/x", "curl", "https://a.io/x"),  # the O of POST is a value, not -O
    ("sudo curl https://a.io/x", "curl", "https://a.io/x"),
    ("ionice -c3 curl https://x.org", "curl", "https://x.org"),  # a wrapper the deny rules always knew
    # scripts run by another program print to its stdout (the deny rules always opened them)
    ("bash -c 'curl -s https://a.io/x'", "curl", "https://a.io/x"),
    ("bash <<'EOF'\ncurl -s https://a.io/x\nEOF", "curl", "https://a.io/x"),
    ("env -S 'curl https://a.io/x'", "curl", "https://a.io/x"),
    ("curl -s https://a.io/x | (cat)", "curl", "https://a.io/x"),
    ("FOO=1 curl https://a.io/x", "curl", "https://a.io/x"),
    ("cd /tmp && curl https://a.io/x", "curl", "https://a.io/x"),
    ("curl https://a.io/x || echo failed", "curl", "https://a.io/x"),
    ("curl https://a.io/x 2>/dev/null", "curl", "https://a.io/x"),
    ("curl https://a.io/x 2>&1", "curl", "https://a.io/x"),
    ("curl -s https://a.io/x | python3 -m json.tool", "curl", "https://a.io/x"),
    ("curl -s https://a.io/x | cat", "curl", "https://a.io/x"),
    ("ls\ncurl https://a.io/x", "curl", "https://a.io/x"),
    ("curl \\\n  https://a.io/x", "curl", "https://a.io/x"),
    ("wget -O - https://a.io/x", "wget", "https://a.io/x"),
    ("wget --output-document=- https://a.io/x", "wget", "https://a.io/x"),
    ("wget -q -O /dev/stdout https://a.io/x", "wget", "https://a.io/x"),
    ("xh https://a.io/x", "xh", "https://a.io/x"),
    ("http --print=hb https://a.io/x", "http", "https://a.io/x"),
    ("python3 - <<'EOF'\nimport urllib.request\nprint(urllib.request.urlopen('https://a.io/x').read())\nEOF",
     "python3 HTTP request", "https://a.io/x"),
    ("node -e \"fetch('https://a.io/x').then(r => r.text()).then(console.log)\"", "node HTTP request",
     "https://a.io/x"),
    ("ruby -e \"require 'open-uri'; puts URI.open('https://a.io/x').read\"", "ruby HTTP request", "https://a.io/x"),
    ("php -r \"echo file_get_contents('https://a.io/x');\"", "php HTTP request", "https://a.io/x"),
]

PASSES = [
    "curl -o out.json https://a.io/x",
    "curl -sSfLo out.json https://a.io/x",
    "curl -O https://a.io/f.tgz",
    "curl --remote-name https://a.io/f.tgz",
    "curl -I https://a.io/x",
    "curl --head https://a.io/x",
    "curl -s -o /dev/null -w '%{http_code}' https://a.io/x",
    "curl https://a.io/x > page.html",
    "curl https://a.io/x >> page.html",
    "curl https://a.io/x &> log.txt",
    "curl https://a.io/x > /dev/null",
    "curl https://a.io/x | tee page.html > /dev/null",
    "wget https://a.io/f.tgz",
    "wget -q https://a.io/f.tgz",
    "wget --spider https://a.io/x",
    "wget -O out.html https://a.io/x",
    "http --download https://a.io/f.tgz",
    "http -o out.json https://a.io/x",
    "http --headers https://a.io/x",
    "http --print=h https://a.io/x",
    "curl -s https://a.io/x | grep title",
    "curl -s https://a.io/x | head -5",
    "curl -s https://a.io/x | jq '.name'",
    "curl -fsSL https://a.io/install.sh | bash",
    "curl -sL https://a.io/f.tgz | tar xz",
    "x=$(curl -s https://a.io/x) && echo done",
    "echo curl https://a.io/x",
    "grep -rn curl .",
    "git log --grep=http",
    "python3 -c \"import requests; requests.post('https://a.io/hook', json={})\"",
    "python3 fetch_all.py https://a.io/x",
    "cat <<EOF > notes.md\ncurl https://a.io/x\nEOF",
    "curl 'https://a.io/x",  # unbalanced quote: the shell would refuse it too
    "curl https://a.io/x; echo 'open",  # the whole line is refused, not only its last command
    "(curl -s https://a.io/x) | grep title",  # a group's output goes down its pipe
    "{ curl -s https://a.io/x; echo; } > page.html",  # and to its redirection
    "bash -c 'curl -s https://a.io/x' > page.html",  # a script's output is its shell's
    "x=$(bash -c 'curl -s https://a.io/x')",
    "",
]


@pytest.mark.parametrize(("command", "tool", "url"), PRINTS)
def test_fetches_whose_body_reaches_the_terminal_are_found(command: str, tool: str, url: str) -> None:
    assert find_printing_fetch(command) == PrintingFetch(tool, url)


@pytest.mark.parametrize("command", PASSES)
def test_downloads_silent_checks_filters_and_non_fetches_are_not(command: str) -> None:
    assert find_printing_fetch(command) is None


def test_a_printing_fetch_next_to_a_huge_line_is_found_quickly() -> None:
    command = "echo '" + "a" * 1_500_000 + "' > blob.txt\ncurl https://example.com/docs"
    started = time.perf_counter()
    found = find_printing_fetch(command)
    assert time.perf_counter() - started < 8
    assert found is not None and found.url == "https://example.com/docs"


def test_a_fetch_behind_ionice_is_routed_like_the_bare_fetch_while_a_server_runs(tmp_path: Path) -> None:
    ctx = RoutingContext(home=tmp_path / "home", project_dir=tmp_path, server_alive=True, can_nudge=False)

    def answer(command: str) -> tuple[str | None, str | None]:
        got = decide(HookCall("claude-code", "pre_tool", "s", tool="Bash", tool_input={"command": command}), ctx)
        return got.decision, got.reason

    assert answer("ionice -c3 curl https://x.org") == answer("curl https://x.org")
    assert answer("curl https://x.org")[0] == "deny"

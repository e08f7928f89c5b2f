"""The deny rules, the session memory and the fetch routing read a command line through one model
(`context_kernel.shell`): asked about the same line, they agree on which commands it runs."""

from __future__ import annotations

import pytest

from context_kernel.hooks.shell_commands import shell_events
from context_kernel.hooks.shell_fetch import find_printing_fetch
from context_kernel.security import DenyRules

# (the command without wrappers, a deny rule on it, the event it records, the fetch it prints)
COMMANDS = [
    ("git push", "Bash(git push:*)", [("git", "push")], None),
    ("git commit -m x", "Bash(git commit:*)", [("git", "commit: x")], None),
    ("curl https://x.org", "Bash(curl:*)", [], ("curl", "https://x.org")),
]
WRAPPED = [
    "{}", "timeout 5 {}", "ionice -c3 {}", "ionice --class 3 -n 7 {}", "sudo -u root {}", "env A=1 {}",
    "nice -n 5 {}", "nohup {}", "stdbuf -oL {}", "setsid -w {}", "chrt -o 0 {}", "taskset -c 0 {}",
    "flock -w 3 /tmp/lock {}", "xargs -n 1 {}", "time -p {}", "FOO=1 {}", "cd /tmp && {}", "bash -c '{}'",
]


def ask_all(line: str, rule: str) -> tuple[bool, list[tuple[str, str]], tuple[str, str | None] | None]:
    denied = DenyRules.from_strings([rule]).check_shell(line) is not None
    events = [(e.type, e.data) for e in shell_events(line, "/p") if e.type != "cwd"]
    fetch = find_printing_fetch(line)
    return denied, events, (fetch.tool, fetch.url) if fetch else None


@pytest.mark.parametrize("wrapper", WRAPPED)
@pytest.mark.parametrize(("bare", "rule", "event", "fetch"), COMMANDS)
def test_every_consumer_sees_the_command_behind_a_wrapper(
        wrapper: str, bare: str, rule: str, event: list[tuple[str, str]], fetch: tuple[str, str] | None) -> None:
    line = wrapper.format(bare)
    assert ask_all(line, rule) == (True, event, fetch)

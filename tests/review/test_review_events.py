"""Review: events classified wrongly in obvious cases."""

from __future__ import annotations

import pytest

from context_kernel.hooks.prompts import classify_prompt
from context_kernel.hooks.shell_commands import shell_events


@pytest.mark.parametrize("prompt", ["Never mind.", "Never mind, I'll look at it myself.", "never  mind that"])
def test_never_mind_is_not_a_decision(prompt: str) -> None:
    assert classify_prompt(prompt) == (None, [])


@pytest.mark.parametrize(("prompt", "kind"), [
    ("Never commit to main.", "decision"),
    ("Never mind, let's use pytest.", "decision"),  # the decision is the second half
])
def test_never_still_starts_a_rule(prompt: str, kind: str) -> None:
    assert classify_prompt(prompt)[0] == kind


def test_cd_dash_is_recorded_as_the_previous_directory_not_home() -> None:
    assert [(e.type, e.data) for e in shell_events("cd - && make", "/p")] == [("cwd", "-")]

"""Fixtures of the review tests: the real hook CLI on a temporary home (see `reviewcli`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from reviewcli import HookCli


@pytest.fixture
def cli(tmp_path: Path) -> HookCli:
    return HookCli(tmp_path)

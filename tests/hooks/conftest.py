"""Fixtures of the hook tests: a temporary context-kernel home, project and user home."""

from __future__ import annotations

from pathlib import Path

import pytest
from hookrun import Hooks


@pytest.fixture
def hooks(tmp_path: Path) -> Hooks:
    return Hooks(tmp_path)

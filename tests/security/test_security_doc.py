"""docs/security.md says what the code does: every kind a marker can name is listed there."""

from __future__ import annotations

import re
from pathlib import Path

from context_kernel.security.secret_names import KINDS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def test_the_security_doc_lists_every_kind() -> None:
    listed = set(re.findall(r"`([a-z0-9-]+)`", DOCS.read_text()))
    assert sorted(set(KINDS) - listed) == []

"""The HTTP token file: private from the first byte, re-read when it changes, refused when unsafe."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from context_kernel.security.http_token import TokenFile, ensure_token, fingerprint, write_token


def test_a_new_token_file_is_private_and_made_only_once(tmp_path: Path) -> None:
    path = tmp_path / "home" / "http-token"
    token = ensure_token(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_token(path) == token and len(token) >= 40
    assert [p.name for p in path.parent.iterdir()] == ["http-token"]  # no temporary file left


def test_the_right_token_is_named_by_its_fingerprint_and_any_other_is_refused(tmp_path: Path) -> None:
    token = write_token(tmp_path / "http-token")
    accepted = TokenFile(tmp_path / "http-token")
    assert accepted.check(token) == fingerprint(token)
    assert accepted.check(token + "x") is None and accepted.check("") is None and accepted.check(token[:-1]) is None
    assert accepted.problem() is None


def test_a_rotation_is_seen_on_the_next_check_without_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "http-token"
    old = write_token(path)
    accepted = TokenFile(path)
    assert accepted.check(old)
    new = write_token(path)
    assert accepted.check(old) is None and accepted.check(new) == fingerprint(new)


def test_a_file_others_can_read_or_a_missing_file_accepts_nothing_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "http-token"
    token = write_token(path)
    accepted = TokenFile(path)
    assert accepted.check(token)
    os.chmod(path, 0o644)
    assert accepted.check(token) is None
    assert "readable or writable by others (mode 0644)" in (accepted.problem() or "")
    path.unlink()
    assert accepted.check(token) is None and "missing" in (accepted.problem() or "")

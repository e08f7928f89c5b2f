"""Once-per-session markers: atomic claims, any session id, swept when old."""

from __future__ import annotations

import os
from pathlib import Path

from context_kernel.hooks import nudges


def test_a_nudge_is_claimed_once_per_session_and_key(tmp_path: Path) -> None:
    claims = [nudges.claim(tmp_path, "s1", "Read"), nudges.claim(tmp_path, "s1", "Read"),
              nudges.claim(tmp_path, "s1", "Grep"), nudges.claim(tmp_path, "s2", "Read")]
    assert claims == [True, False, True, True]


def test_session_ids_of_any_shape_make_safe_file_names(tmp_path: Path) -> None:
    weird = "../../etc/passwd\x00 ünïcode/ session"
    assert nudges.claim(tmp_path, weird, "Read/../x")
    (marker,) = nudges.nudged_dir(tmp_path).iterdir()
    assert marker.parent == nudges.nudged_dir(tmp_path) and "/" not in marker.name and ".." not in marker.name


def test_a_home_that_cannot_hold_markers_means_no_nudge_rather_than_one_every_call(tmp_path: Path) -> None:
    home = tmp_path / "file"
    home.write_text("not a directory")
    assert [nudges.claim(home, "s1", "Read") for _ in range(2)] == [False, False]


def test_old_markers_are_swept_and_recent_ones_kept(tmp_path: Path) -> None:
    nudges.claim(tmp_path, "old", "Read")
    nudges.claim(tmp_path, "new", "Read")
    old = nudges.marker(tmp_path, "old", "Read")
    os.utime(old, (1_000_000, 1_000_000))
    assert nudges.prune(tmp_path) == 1
    assert [p.name for p in nudges.nudged_dir(tmp_path).iterdir()] == [nudges.marker(tmp_path, "new", "Read").name]
    assert nudges.claim(tmp_path, "old", "Read")  # a swept session could be nudged again

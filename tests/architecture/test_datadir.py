"""The data dir is private: made 0700 where we make it, and one an older version left readable by
others is tightened once, in place, saying so in one line (what the server logs at start)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from context_kernel.datadir import private_dir, tighten, write_private


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_readable_data_dir_is_tightened_once_and_says_what_changed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "kernel-python3-a.log").write_text("x")
    (home / "insight.html").write_text("x")
    (home / "run.sh").write_text("#!/bin/sh\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    (home / "link").symlink_to(outside)
    (home / "http-token").write_text("t")
    for path, mode in ((home, 0o755), (home / "logs", 0o755), (home / "logs" / "kernel-python3-a.log", 0o644),
                       (home / "insight.html", 0o644), (home / "run.sh", 0o755), (outside, 0o644),
                       (home / "http-token", 0o644)):
        path.chmod(mode)
    said = tighten(home, leave=("http-token",))
    assert said == (f"made private: the data dir {home} was 0755, now 0700; 1 directory and 3 files in it could be "
                    "read by other users, now only by you")
    assert (_mode(home), _mode(home / "logs"), _mode(home / "logs" / "kernel-python3-a.log"),
            _mode(home / "insight.html"), _mode(home / "run.sh")) == (0o700, 0o700, 0o600, 0o600, 0o700)
    assert _mode(outside) == 0o644  # a link is not followed
    assert _mode(home / "http-token") == 0o644  # the HTTP transport's to judge
    assert tighten(home, leave=("http-token",)) is None  # nothing left to say


def test_a_missing_data_dir_is_made_0700_with_what_is_written_in_it_0600(tmp_path: Path) -> None:
    home = tmp_path / "a" / "home"
    assert tighten(home) is None
    folder = Path(private_dir(home, "spool/deferred"))
    write_private(folder / "f", b"data")
    assert [_mode(p) for p in (home, home / "spool", folder)] == [0o700] * 3
    assert _mode(folder / "f") == 0o600 and (folder / "f").read_bytes() == b"data"
    assert os.listdir(folder) == ["f"]  # no scratch file left behind

"""The doctor's checks one by one, on real files and processes: what each line says and when it fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.helpers import make_settings

from context_kernel.doctor import check_database, home_problem, run_checks
from context_kernel.doctor.prewarmed import prewarmed_check
from context_kernel.kernels.languages import LANGUAGES

pytestmark = pytest.mark.anyio


def test_a_data_dir_that_cannot_be_made_names_the_setting_that_moves_it(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    problem = home_problem(tmp_path / "a-file" / "home")
    assert problem is not None and "is not writable" in problem and "CONTEXT_KERNEL_HOME" in problem
    assert home_problem(tmp_path / "home") is None and (tmp_path / "home").is_dir()


def test_the_database_line_says_not_created_then_fails_on_a_damaged_file(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project)
    db, logs = check_database(settings)
    assert (db.level, logs.level) == ("OK", "OK") and "not created yet" in db.detail
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    settings.db_path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    db, _ = check_database(settings)
    assert db.level == "FAIL" and db.detail, db


def test_the_prewarmed_line_counts_the_idle_kernels_and_their_memory() -> None:
    assert "none idle" in prewarmed_check([]).detail
    line = prewarmed_check([("python3", os.getpid(), 12.4), ("ck-bash", None, 3.0)]).detail
    assert line.startswith("2 idle") and "python3 (idle 12 s, " in line and "ck-bash (idle 3 s, 0 MB RSS)" in line
    mb = int(line.split("python3 (idle 12 s, ")[1].split(" MB")[0])
    assert mb > 0  # this test's own process, read from /proc


async def test_without_starting_kernels_every_language_gets_its_line(tmp_path: Path, project: Path) -> None:
    checks = await run_checks(make_settings(tmp_path, project), start=False, spares=[])
    subjects = [c.subject for c in checks]
    for name in LANGUAGES:
        assert any(s.startswith(f"{name:<10} kernel ") for s in subjects), (name, subjects)
    assert subjects[-1] == "prewarmed kernels" and {"versions", "data dir", "sqlite"} <= set(subjects)

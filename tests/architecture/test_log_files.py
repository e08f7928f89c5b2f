"""Logs follow the records' retention: what was last written longer ago than the retention's days goes,
of the kernel logs only the newest `max_kernel_logs` stay, and a kernel starting applies the rule
(a server that starts kernels all day long no longer piles up their logs until the daily pass)."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from context_kernel.kernels.factory import kernel_factory
from context_kernel.log_files import prune_logs
from context_kernel.settings import Settings

DAY = 86_400.0


def _log(folder: Path, name: str, age_s: float, now: float) -> Path:
    path = folder / name
    path.write_text("a line\n")
    os.utime(path, (now - age_s, now - age_s))
    return path


def test_logs_older_than_the_retention_go_and_kernel_logs_beyond_the_newest_n_go(tmp_path: Path) -> None:
    now = time.time()
    for n in range(6):
        _log(tmp_path, f"kernel-python3-recent{n}.log", n * 60.0, now)
    _log(tmp_path, "kernel-ck-bash-old.log", 31 * DAY, now)
    _log(tmp_path, "hooks.log", 60.0, now)
    _log(tmp_path, "hooks.log.1", 31 * DAY, now)  # rotated long ago: as old as the records that go
    assert prune_logs(tmp_path, days=30, max_kernel_logs=4, now=now) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hooks.log", "kernel-python3-recent0.log", "kernel-python3-recent1.log", "kernel-python3-recent2.log",
        "kernel-python3-recent3.log"]


def test_no_days_and_no_cap_keep_every_log(tmp_path: Path) -> None:
    now = time.time()
    for n in range(5):
        _log(tmp_path, f"kernel-python3-{n}.log", n * 100 * DAY, now)
    _log(tmp_path, "hooks.log.1", 400 * DAY, now)
    assert prune_logs(tmp_path, days=0, max_kernel_logs=0, now=now) == 0
    assert len(list(tmp_path.iterdir())) == 6


def test_a_missing_log_dir_is_nothing_to_prune(tmp_path: Path) -> None:
    assert prune_logs(tmp_path / "none", days=30, max_kernel_logs=4) == 0


@pytest.mark.anyio
@pytest.mark.kernels
async def test_starting_a_kernel_prunes_the_logs_to_the_retention(settings: Settings) -> None:
    settings = replace(settings, max_kernel_logs=3, retention_days=30)
    settings.log_dir.mkdir(parents=True)
    now = time.time()
    for n in range(10):  # what earlier kernels of a long-running server left
        _log(settings.log_dir, f"kernel-python3-earlier{n}.log", (n + 1) * 60.0, now)
    _log(settings.log_dir, "hooks.log.1", 40 * DAY, now)
    _log(settings.log_dir, "hooks.log", 60.0, now)
    kernel = kernel_factory(settings)("ck-bash")
    try:
        await kernel.start(timeout=60)
    finally:
        await kernel.shutdown(now=True)
    kept = sorted(p.name for p in settings.log_dir.iterdir())
    assert [n for n in kept if not n.startswith("kernel-ck-bash-")] == [
        "hooks.log", "kernel-python3-earlier0.log", "kernel-python3-earlier1.log"]
    assert len([n for n in kept if n.startswith("kernel-ck-bash-")]) == 1  # its own, the newest

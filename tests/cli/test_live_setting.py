"""CONTEXT_KERNEL_LIVE_NOTEBOOKS: on by default in the data dir's exports/live, off by `0`/`off`, or a folder."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from context_kernel.cli import build_settings


@pytest.mark.parametrize(("value", "on", "where"), [
    (None, True, "home/exports/live"), ("", True, "home/exports/live"), ("1", True, "home/exports/live"),
    ("0", False, None), ("off", False, None), ("No", False, None), ("watch/here", True, "watch/here"),
])
def test_the_live_notebook_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None, on: bool,
                                   where: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"CONTEXT_KERNEL_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    if value is not None:
        env["CONTEXT_KERNEL_LIVE_NOTEBOOKS"] = value
    settings = build_settings(argparse.Namespace(project=str(tmp_path), gateway_url=None), env)
    assert settings.live_notebooks is on
    if where is not None:
        assert settings.live_dir == tmp_path / where

"""The `env` fixture: a temporary home and project, and the setup CLI run in-process on them."""

from __future__ import annotations

from pathlib import Path

import pytest
from setup_helpers import SetupEnv

from context_kernel.setup.cli import main


@pytest.fixture
def env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> SetupEnv:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    exe = tmp_path / "venv" / "bin" / "context-kernel"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    capsys.readouterr()

    def run_cli(argv: list[str], executable: str) -> tuple[int, str, str]:
        code = main(argv, home_dir=home, cwd=project, executable=executable)
        out = capsys.readouterr()
        return code, out.out, out.err

    return SetupEnv(tmp_path, home, project, str(exe), run_cli)

"""The command line: doctor lists every language with its kernel and whether it starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from context_kernel.kernels.languages import LANGUAGES


def run_cli(tmp_path: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "context_kernel", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=tmp_path)


@pytest.mark.kernels
def test_doctor_starts_every_language_kernel_and_says_so(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "doctor")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("[OK] versions") and "mcp " in lines[0] and "jupyter_client " in lines[0]
    assert lines[1].startswith("[OK] data dir") and lines[2].startswith("[OK] sqlite") and "trigram" in lines[2]
    for lang in LANGUAGES.values():
        row = next(line for line in lines if line.split(":")[0].split()[1:2] == [lang.name])
        assert lang.kernel_name in row
        assert row.startswith(("[OK]", "[FAIL]"))
    # The README's set-up installs these, so they must start here.
    for name in ("python", "shell", "r", "javascript", "typescript", "ruby", "perl", "php", "rust"):
        row = next(line for line in lines if line.split(":")[0].split()[1:2] == [name])
        assert row.startswith("[OK]") and "starts and runs code" in row, row


def test_doctor_without_start_only_checks_kernelspecs(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "doctor", "--no-start", timeout=60)
    assert out.returncode == 0
    assert "kernelspec installed (not started: --no-start)" in out.stdout


def test_an_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "frobnicate", timeout=60)
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_fetch_command_indexes_pages_and_reports_each(tmp_path: Path) -> None:
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            pass

    site = tmp_path / "site"
    site.mkdir()
    (site / "a.md").write_text("# Alpha\nalpha words\n")
    (site / "b.txt").write_text("beta words\n")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        out = run_cli(tmp_path, "fetch", f"{base}/a.md", f"{base}/b.txt", f"{base}/missing", timeout=120)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"1. {base}/a.md — new:") and lines[1].startswith(f"2. {base}/b.txt — new:")
    assert lines[2].startswith(f"3. {base}/missing — error:") and lines[3].startswith("2 of 3 indexed")
    assert "3/3" in out.stderr  # the progress bar


@pytest.mark.kernels
def test_sessions_lists_recorded_sessions_and_export_writes_the_latest(tmp_path: Path) -> None:
    import anyio

    from context_kernel.app import AppHolder
    from context_kernel.execution.requests import ExecuteRequest, SessionRef
    from context_kernel.settings import Settings

    async def record() -> None:
        settings = Settings(home=tmp_path / "home", project_dir=tmp_path, base_env=dict(os.environ))
        async with AppHolder(settings) as holder:
            app = await holder.get()
            await app.execution.execute(ExecuteRequest(code="print('hello')", language="python"),
                                        SessionRef(id="cli-test", client="pytest 1"))

    anyio.run(record)
    listed = run_cli(tmp_path, "sessions", timeout=60)
    assert listed.returncode == 0 and "cli-test" in listed.stdout and "python" in listed.stdout
    exported = run_cli(tmp_path, "export", "-o", str(tmp_path / "nb"), timeout=60)
    assert exported.returncode == 0, exported.stderr
    path = Path(exported.stdout.strip())
    assert path.name == "session-cli-test.ipynb" and '"hello\\n"' in path.read_text()


def test_doctor_shows_which_hooks_each_client_has(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user")}
    cli = [sys.executable, "-m", "context_kernel"]
    done = subprocess.run([*cli, "setup", "claude-code", "--project", str(project)], capture_output=True, text=True,
                          env=env, timeout=60, cwd=project)
    assert done.returncode == 0, done.stderr
    out = subprocess.run([*cli, "doctor", "--no-start", "--project", str(project)], capture_output=True, text=True,
                         env=env, timeout=60, cwd=project)
    lines = out.stdout.splitlines()
    claude = next(line for line in lines if "claude-code" in line)
    assert claude.startswith("[OK] hooks claude-code: all 6 active") and "PostToolUseFailure" in claude
    gemini = next(line for line in lines if "gemini" in line)
    assert "not set up" in gemini


def test_sessions_lists_only_languages_that_ran_and_cuts_no_column(tmp_path: Path) -> None:
    from context_kernel.settings import Settings
    from context_kernel.store.db import open_engine
    from context_kernel.store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart

    settings = Settings(home=tmp_path / "home", project_dir=tmp_path, base_env=dict(os.environ))
    settings.home.mkdir(parents=True, exist_ok=True)
    executions = ExecutionRepository(open_engine(settings.db_path))
    client = "claude-code 2.1.400 (an unusually long client name)"
    executions.touch_session("a-session-id-longer-than-twenty-characters", client=client, transport="stdio",
                             project_dir=str(tmp_path))
    calls = [("python", "python3", ExecutionEnd(status="ok", bytes_produced=100, bytes_returned=100)),
             ("javascript", "ck-javascript", ExecutionEnd(status="ok")),
             ("typescript", "ck-typescript", ExecutionEnd(status="ok")),
             ("cobol", None, ExecutionEnd(status="refused", error_name="InvalidRequest", returned_kind="refused")),
             ("python", "no-such-kernel", ExecutionEnd(status="error", error_name="KernelUnavailable"))]
    for language, kernel, end in calls:
        exec_id = executions.start(ExecutionStart(session_id="a-session-id-longer-than-twenty-characters",
                                                  tool="ctx_execute", code="1", language=language, kernel_name=kernel))
        executions.finish(exec_id, end)
    listed = run_cli(tmp_path, "sessions", timeout=60)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert "a-session-id-longer-than-twenty-characters" in row and client in row  # was cut at 20 characters
    assert "javascript,python,typescript" in row  # was cut at 24 characters
    assert "cobol" not in row  # refused: it never ran (was listed as used)
    assert header.endswith("not run") and row.split()[-1] == "2"  # the refused and kernel-less calls


@pytest.mark.kernels
def test_doctor_under_a_rustup_without_a_default_toolchain_says_rustup_default_not_apt(tmp_path: Path) -> None:
    import shutil

    import anyio

    from context_kernel.doctor import check_language
    from context_kernel.kernels.factory import kernel_factory
    from context_kernel.settings import Settings

    rustc = shutil.which("rustc")
    if rustc is None or not Path(rustc).resolve().name.startswith("rustup"):
        pytest.skip("rustc here is not rustup's proxy")
    # rustup with an empty home: its rustc proxy is installed, but no toolchain is chosen.
    (tmp_path / "rustup").mkdir()
    settings = Settings(home=tmp_path / "home", project_dir=tmp_path, kernel_start_timeout_s=60.0,
                        base_env={**os.environ, "RUSTUP_HOME": str(tmp_path / "rustup")})
    check = anyio.run(check_language, settings, LANGUAGES["rust"], True, kernel_factory(settings))
    assert check.level == "FAIL" and "apt-get install rustc" not in check.detail
    assert check.detail.endswith("— rustc is rustup's proxy and no toolchain is chosen: run `rustup default "
                                 "stable` as the user the server runs as"), check.detail

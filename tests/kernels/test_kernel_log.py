"""A kernel's log file (kernels/kernel_log.py): what the kernel writes reaches it line by line, redacted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.security.secret_corpus import FORMS, SECRETS

from context_kernel.kernels.kernel_log import MAX_LINE, KernelLog


def test_lines_written_to_the_pipe_reach_the_file_without_their_secrets(tmp_path: Path) -> None:
    log = KernelLog(tmp_path / "kernel-python3-abc.log")
    printed = "\n".join(FORMS.values())
    # A real child process writing through the pipe, as a kernel does (stdout and stderr both).
    script = "import sys; sys.stdout.write(sys.argv[1] + '\\n'); sys.stderr.write('Traceback: ' + sys.argv[2])"
    done = subprocess.run([sys.executable, "-c", script, printed, FORMS["github-ghp/prose"]],
                          stdout=log.fd, stderr=log.fd, timeout=60, check=False)
    assert done.returncode == 0
    log.close()
    text = (tmp_path / "kernel-python3-abc.log").read_text()
    assert [s.name for s in SECRETS if any(part in text for part in s.secret_parts)] == []
    assert "[REDACTED github-token]" in text and "Here is the GitHub token" in text
    assert text.endswith("(rotate it next week).")  # the last line had no newline: written at close


def test_a_line_longer_than_the_cap_is_written_in_pieces_while_the_kernel_runs(tmp_path: Path) -> None:
    log = KernelLog(tmp_path / "k.log")
    os.write(log.fd, b"x" * (MAX_LINE + 10))
    log.close()
    assert (tmp_path / "k.log").read_bytes() == b"x" * (MAX_LINE + 10)


def test_closing_twice_is_harmless_and_appends_to_an_existing_log(tmp_path: Path) -> None:
    path = tmp_path / "k.log"
    path.write_text("earlier run\n")
    log = KernelLog(path)
    os.write(log.fd, b"password: hunter2pass\n")
    log.close()
    log.close()
    assert path.read_text() == "earlier run\npassword: [REDACTED password]\n"

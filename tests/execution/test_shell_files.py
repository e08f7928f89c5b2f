"""A shell cell's files, read from its command line: reads, writes, the cell's own cd, what is left out."""

from __future__ import annotations

from pathlib import Path

from context_kernel.execution.shell_files import shell_files


def test_reads_writes_and_the_cells_own_cd(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    for name in ("data/app.log", "data/x.csv", "notes.txt"):
        (tmp_path / name).write_text("x\n")
    code = ("grep -c ERROR data/app.log > counts.txt 2>/dev/null\n"
            "sort < notes.txt | uniq -c >> counts.txt\n"
            "cd data && wc -l x.csv missing.csv --lines=app.log\n"
            "cat /etc/hostname /proc/cpuinfo $HOME/.bashrc\n"
            "python - <<EOF\nopen('notes.txt')\nEOF")
    found = shell_files(code, str(tmp_path))
    assert found == {
        str(tmp_path / "data/app.log"): "r", str(tmp_path / "counts.txt"): "w", str(tmp_path / "notes.txt"): "r",
        str(tmp_path / "data/x.csv"): "r"}


def test_a_file_read_then_written_is_written_and_stays_so(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n")
    assert shell_files("cat a.txt; echo 2 >> a.txt; cat a.txt", str(tmp_path)) == {str(tmp_path / "a.txt"): "w"}

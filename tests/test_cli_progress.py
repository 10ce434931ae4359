"""Long commands show a progress bar (tqdm) in a terminal, and nothing but their result when their
output goes to a file or a pipe: no hand-made carriage-return counters in a log."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

from app.cli import main
from app.project import Project

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = "cuad-000,cuad-001,cuad-002"


def _in_a_terminal(args: list[str], columns: int = 120) -> str:
    """Run `assay ARGS` with its stderr on a pseudo-terminal `columns` wide; what the terminal got."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    child = subprocess.Popen(
        [sys.executable, "-m", "ui.main", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)},
    )
    os.close(follower)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
        assert child.wait(120) == 0, seen.decode(errors="replace")
    return seen.decode(errors="replace")


def test_verify_draws_a_bar_in_a_terminal(sample_project: Project) -> None:
    url = sample_project.url
    sample_project.close()
    shown = _in_a_terminal(["--db", url, "verify", "--answers", ANSWERS])
    assert "verifying: 100%|" in shown and "3/3 answers" in shown, shown


def test_no_progress_is_written_to_a_file_or_a_pipe(sample_project: Project, capsys) -> None:
    assert main(["--db", sample_project.url, "verify", "--answers", ANSWERS]) == 0
    out, err = capsys.readouterr()
    assert "\r" not in out + err and "verifying" not in err
    assert out.strip().endswith("saved as the rater 'verifier' (3 answers)")


def test_the_report_export_shows_its_steps_in_a_terminal(sample_project: Project, tmp_path: Path) -> None:
    url = sample_project.url
    sample_project.close()
    shown = _in_a_terminal(["--db", url, "export", "--format", "report", str(tmp_path / "report.html")])
    assert "exporting the report: 100%|" in shown and "4/4 steps" in shown, shown
    assert (tmp_path / "report.html").stat().st_size > 10_000

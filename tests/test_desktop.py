"""Assay on a real X server: `assay gui --sample` under Xvfb with Qt's xcb platform, driven with xdotool.

Every other window test runs offscreen; this one opens the window where users have it: the xcb
plugin must load with the libraries `make install` put there, the sample's first screen must get the
claim checker's verdicts by itself (no model loaded; how soon is bench/first_tag.py's), a key
pressed on the X server must reach the review, and the X server's own picture of the screen must show
a window. `make test-deps` installs Xvfb, xdotool and xwd."""

from __future__ import annotations

import array
import os
import struct
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.judging.sample_tour import sample_tour
from app.judging.verification import VERIFIER
from app.project import Project
from app.review.service import ReviewService
from models.vocabulary import ReviewStatus, Tag
from storage import raters, statistics

from .test_ui import SHOTS
from .xserver import xvfb

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Xvfb and xcb are Linux's")


@pytest.fixture
def display() -> Iterator[str]:
    with xvfb("1600x1000x24+32") as name:
        yield name


def _x(display: str, *args: str, timeout: float = 30) -> str:
    done = subprocess.run(args, env={**os.environ, "DISPLAY": display}, capture_output=True, timeout=timeout)
    assert done.returncode == 0, f"{args[0]} failed: {done.stderr.decode(errors='replace')}"
    return done.stdout.decode(errors="replace")


def _screen(display: str, png: Path) -> Counter[int]:
    """The X server's picture of the whole screen (xwd), saved as PNG; how many pixels of each colour."""
    from PySide6.QtGui import QImage

    data = subprocess.run(
        ["xwd", "-root", "-silent", "-display", display], capture_output=True, check=True, timeout=60
    ).stdout
    header = struct.unpack(">25I", data[:100])
    size, depth, width, height, byte_order = header[0], header[3], header[4], header[5], header[7]
    bits, line, colours = header[11], header[12], header[19]
    assert depth == 24 and bits in (24, 32) and byte_order == 0, f"an xwd picture of {header}"
    start, step = size + 12 * colours, bits // 8
    rgb32 = bytearray(width * height * 4)  # blue, green, red, unused: Qt's RGB32 on a little-endian host
    for y in range(height):
        row = data[start + y * line : start + y * line + width * step]
        for byte in range(3):
            rgb32[y * width * 4 + byte : (y + 1) * width * 4 : 4] = row[byte::step]
    png.parent.mkdir(parents=True, exist_ok=True)
    assert QImage(bytes(rgb32), width, height, width * 4, QImage.Format.Format_RGB32).save(str(png))
    pixels = array.array("I", rgb32)
    if sys.byteorder != "little":
        pixels.byteswap()
    return Counter(p & 0xFFFFFF for p in pixels)


def _wait(what: str, check, app: subprocess.Popen, log: Path, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert app.poll() is None, f"Assay exited ({app.returncode}) while waiting for {what}:\n{log.read_text()}"
        result = check()
        if result:
            return result
        time.sleep(1)
    raise AssertionError(f"no {what} within {timeout:.0f} s:\n{log.read_text()}")


def test_the_sample_opens_on_a_real_x_server_with_the_checkers_verdicts_and_takes_a_review_key(
    display: str, sample_project: Project, tmp_path: Path
) -> None:
    tour = sample_tour(sample_project)
    assert tour is not None, "the untouched sample is checked on its first open"
    path = sample_project.url.removeprefix("sqlite:///")
    log = tmp_path / "assay.log"
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    with log.open("wb") as out:
        app = subprocess.Popen(
            [sys.executable, "-m", "ui.main", "--project", path, "gui", "--sample", "--reviewer", "ana"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        window = _x(display, "xdotool", "search", "--sync", "--onlyvisible", "--name", "^Assay — ana", timeout=120)
        window = window.split()[0]
        shown_at = time.monotonic()
        service = ReviewService(sample_project, "ana")

        def checked_by_the_checker() -> bool:
            with sample_project.sessions() as session:
                checker = raters.rater_named(session, VERIFIER)
                return checker is not None and tour.first_answer in statistics.judged_by(session, VERIFIER)

        first_row = sample_project.answers()[0].id  # the window opened at the tour's answer, not at the first row
        assert first_row != tour.first_answer and service.state(first_row).status is ReviewStatus.UNREVIEWED
        # by itself, with no model loaded; how soon is measured by bench/first_tag.py, not asserted here
        _wait("the checker's verdicts on the first answer", checked_by_the_checker, app, log, 180)
        print(f"\nthe checker's first verdicts {time.monotonic() - shown_at:.1f} s after the window showed")
        with sample_project.sessions() as session:  # no model was loaded: no LLM judge run exists
            assert not [r.name for r in raters.raters(session) if r.name.startswith("judge:")]
        time.sleep(2)  # the window repaints after the database has the verdicts
        before = _screen(display, SHOTS / "desktop-first-screen.png")
        assert len(before) > 200, "the screen is blank or nearly so"
        assert sum(n for _c, n in before.most_common(1)) < 0.9 * sum(before.values()), "the screen is one colour"

        _x(display, "xdotool", "windowfocus", "--sync", window)
        _x(display, "xdotool", "key", "--delay", "100", "1")  # 1 = correct, on the first data point

        def reviewed() -> bool:
            return service.state(tour.first_answer).points[0].point.tag is Tag.CORRECT

        _wait("the reviewer's tag from key 1", reviewed, app, log, 30)
        time.sleep(1)
        after = _screen(display, SHOTS / "desktop-after-key-1.png")
        green = int("c9efd2", 16)  # "✓ correct" in the data point table and in the answer
        assert after[green] > before[green] + 500, "the screen does not show the new tag"
    finally:
        app.terminate()
        app.wait(30)


QUITS = 3  # the crash on quit after the Export dialog came 3 times in 3 (issue 56)


def test_every_dialog_opens_and_closes_then_ctrl_q_quits_with_status_0_every_time(
    display: str, sample_project: Project, tmp_path: Path
) -> None:
    """tests/desktop_quit.py opens and closes every dialog (Export, with its preview drawing, among them),
    then presses Ctrl+Q on the X server; the app must leave with status 0, not die in its teardown."""
    path = Path(sample_project.url.removeprefix("sqlite:///"))
    sample_project.close()
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    for attempt in range(QUITS):
        out = tmp_path / f"quit-{attempt}"
        done = subprocess.run(
            [sys.executable, str(ROOT / "tests" / "desktop_quit.py"), str(path), str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=600,
        )
        walked = (out / "walked.txt").read_text(encoding="utf-8").splitlines()
        assert any(line.startswith("Export") for line in walked) and walked[-1].startswith("quit after")
        assert done.returncode == 0, f"attempt {attempt + 1}: status {done.returncode}\n{done.stderr.decode()[-3000:]}"

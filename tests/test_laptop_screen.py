"""A lawyer's laptop: the review window on a real X server (Xvfb, Qt's xcb platform) at 1366 × 768,
the most common laptop screen, and at 1600 × 1000. tests/desktop_walk.py opens the sample with a
second generator's answers and each document's first answer judged (a judge's, the claim checker's
and a jury's columns beside the point), shows every column, walks every document, opens every dialog
and panel, previews the report and shows the dashboard; no window may be wider or taller than the
screen, the widgets a reviewer works with are never cut off, and the text of the claims keeps at
least 240 px in every state. It also types a word into the answer filter at 20 ms a key
(xdotool): the word arrives whole and no answer opens until the reviewer picks one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.ingest.datasets import import_dataset
from app.judging.sample_tour import SAMPLE_SECOND_GENERATOR
from app.project import Project

from .test_readable_window import _judge_like_the_sample
from .test_ui import SHOTS
from .xserver import xvfb

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Xvfb and xcb are Linux's")


@pytest.fixture(params=["1366x768", "1600x1000"])
def screen(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """A fresh Xvfb server of that size: (its display name, the size)."""
    with xvfb(f"{request.param}x24") as name:
        yield name, request.param


def test_every_window_fits_the_screen_and_the_filter_keeps_every_key(
    screen: tuple[str, str], sample_project: Project
) -> None:
    display, size = screen
    import_dataset(sample_project.sessions, SAMPLE_SECOND_GENERATOR)  # side by side has two generators
    firsts: dict[str, str] = {}
    for answer in sample_project.answers():  # the answer each document opens at: the queue is sorted by id
        firsts[answer.document] = min(firsts.get(answer.document, answer.id), answer.id)
    _judge_like_the_sample(sample_project, sorted(firsts.values()))  # the model's columns beside the text
    path = sample_project.url.removeprefix("sqlite:///")
    sample_project.close()
    out = SHOTS / f"laptop-{size}"
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "desktop_walk.py"), path, str(out)],
        env=env,
        capture_output=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    walk = json.loads((out / "walk.json").read_text(encoding="utf-8"))
    assert not walk["problems"], "\n".join(walk["problems"])
    width, height = map(int, size.split("x"))
    assert all(w <= width and h <= height for w, h in walk["sizes"].values())
    assert len(walk["sizes"]) > 20 and len(walk["shots"]) > 20  # every document, dialog and panel looked at
    typed = walk["filter"]
    assert typed["typed"] == "reviewed"  # every key, at 20 ms a key
    assert typed["opened_after"] == typed["opened_before"]  # no answer opened until one is picked
    assert typed["focus_in_filter"]
    narrow = {step: px for step, px in walk["point_widths"].items() if px < 240}
    assert not narrow, f"the claim's text narrower than 240 px: {narrow}"
    assert {"the first screen", "every column shown", "the guidelines panel"} <= set(walk["point_widths"])

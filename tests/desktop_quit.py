"""Opens and closes every dialog of the review window on a real X server, then quits with Ctrl+Q pressed
on the X server (xdotool), and leaves as `assay gui` does: app.exec() returns, the project is closed and
Python tears everything down in its own order (run by tests/test_desktop.py under Xvfb, Qt's xcb).
Exits with the application's status; a crash in the teardown is a signal, not 0.

usage: python tests/desktop_quit.py PROJECT_FILE OUT_FOLDER"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QDialog  # noqa: E402

STEPS = "walked.txt"  # one line a dialog opened and closed, then "quit"


def main() -> int:
    from tests.desktop_walk import Walk

    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    walk = Walk(Path(sys.argv[1]), out)
    walk.shot = lambda _name: None  # type: ignore[method-assign] # pictures are the walk's, not this test's
    window, steps = walk.window, out / STEPS
    actions = {a.text(): a for m in window.menuBar().actions() if m.menu() for a in m.menu().actions()}
    for text, action in actions.items():
        if text.endswith("…") or text in ("Keyboard shortcuts", "About Assay") or text.startswith("Side by side"):
            wait = 6.0 if text.startswith("Export") else 1.0  # the export preview starts drawing in the background
            walk.open_and_check(text, action.trigger, wait=wait)
            with steps.open("a", encoding="utf-8") as f:
                f.write(text + "\n")
    for top in walk.app.topLevelWidgets():  # nothing the walk opened is left open
        if top.isVisible() and top is not window:
            top.reject() if isinstance(top, QDialog) else top.close()
    walk.pump(0.5)
    window.activateWindow()
    walk.pump(0.5)

    def press_ctrl_q() -> None:
        subprocess.run(["xdotool", "key", "--delay", "50", "ctrl+q"], check=True, timeout=30)

    QTimer.singleShot(500, press_ctrl_q)
    started = time.monotonic()
    code = walk.app.exec()  # returns once Ctrl+Q has closed every window, as in `assay gui`
    with steps.open("a", encoding="utf-8") as f:
        f.write(f"quit after {time.monotonic() - started:.1f} s\n")
    walk.project.close()
    return code


if __name__ == "__main__":
    sys.exit(main())

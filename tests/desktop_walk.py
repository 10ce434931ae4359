"""Walks the review window on a real X server as a new user would (run by tests/test_laptop_screen.py
under Xvfb with Qt's xcb platform): opens the project, every document, every dialog and panel, and
types into the answer filter at 20 ms a key with xdotool. Writes what it found to OUT/walk.json and
a picture of the screen at each step to OUT/*.png.

usage: python tests/desktop_walk.py PROJECT_FILE OUT_FOLDER"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QRect, QTimer  # noqa: E402
from PySide6.QtWidgets import QDialog, QPushButton, QWidget  # noqa: E402

WORD = "reviewed"  # typed into the filter at 20 ms a key


class Walk:
    def __init__(self, project_file: Path, out: Path) -> None:
        from app.project import Project
        from app.settings import Settings
        from app.workspace import Workspace
        from storage.db import url_for_path
        from ui.main import _application, _fit_to_screen
        from ui.review.window import ReviewWindow

        self.app = _application()  # as `assay gui` makes it: every window fitted to the screen
        self.out = out
        self.problems: list[str] = []
        self.shots: list[str] = []
        self.sizes: dict[str, list[int]] = {}
        self.point_widths: dict[str, int] = {}  # the "Data point" column's width at each step
        self.project = Project.open(url_for_path(project_file))
        self.window = ReviewWindow(Workspace(self.project), "ana", Settings())
        _fit_to_screen(self.window)
        self.window.show()
        self.pump(2.0)
        self.screen = self.window.screen().availableGeometry()

    # ------------------------------------------------------------------ looking

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.01)

    def shot(self, name: str) -> None:
        path = self.out / f"{name}.png"
        self.app.primaryScreen().grabWindow(0).save(str(path))  # the X server's picture of the screen
        self.shots.append(path.name)

    def check_windows(self, step: str) -> None:
        """No window wider or taller than the screen, nor reaching past its edges."""
        for top in self.app.topLevelWidgets():
            if not top.isVisible() or top.windowType().name in ("Popup", "ToolTip"):
                continue
            frame = top.frameGeometry()
            self.sizes[f"{step}: {top.windowTitle() or type(top).__name__}"] = [frame.width(), frame.height()]
            if frame.width() > self.screen.width() or frame.height() > self.screen.height():
                self.problems.append(
                    f"{step}: {type(top).__name__} {top.windowTitle()!r} is {frame.width()}×{frame.height()}, "
                    f"the screen {self.screen.width()}×{self.screen.height()}"
                )
            elif not self.screen.contains(frame):
                self.problems.append(f"{step}: {type(top).__name__} {top.windowTitle()!r} reaches past the screen")

    def check_whole(self, step: str, name: str, widget: QWidget) -> None:
        """A widget shown whole: on screen, inside its window, and as wide as its text needs."""
        if not widget.isVisible():
            self.problems.append(f"{step}: {name} is not shown")
            return
        top = widget.window()
        inside = QRect(widget.mapTo(top, widget.rect().topLeft()), widget.size())
        if not top.rect().contains(inside):
            self.problems.append(f"{step}: {name} is cut off by its window ({inside} in {top.rect()})")
        on_screen = QRect(widget.mapToGlobal(widget.rect().topLeft()), widget.size())
        if not self.screen.contains(on_screen):
            self.problems.append(f"{step}: {name} is cut off at the screen's edge ({on_screen})")
        if isinstance(widget, QPushButton) and widget.width() < widget.sizeHint().width() - 2:
            self.problems.append(f"{step}: the button {widget.text()!r} is narrower than its words")
        if widget.width() < 40 or widget.height() < 12:
            self.problems.append(f"{step}: {name} is squeezed to {widget.width()}×{widget.height()}")

    def check_review(self, step: str) -> None:
        window = self.window
        self.check_windows(step)
        add = next(b for b in window.document_pane.findChildren(QPushButton) if b.text().startswith("Add selection"))
        for name, widget in (
            ("the contract", window.document_pane.view),
            ("“Add selection as missing”", add),
            ("the answer list", window.queue_pane.table),
            ("the data points", window.answer_pane.points),
            ("“Submit review”", window.answer_pane.submit_button),
        ):
            self.check_whole(step, name, widget)
        self.measure_points(step)

    def measure_points(self, step: str) -> None:
        """How wide the text of the claims is: what the lawyer reads keeps its room."""
        points = self.window.answer_pane.points
        if points.model().rowCount():
            self.point_widths[step] = points.columnWidth(1)

    # ------------------------------------------------------------------ walking

    def documents(self) -> None:
        box = self.window.queue_pane.documents
        for index in range(1, box.count()):
            box.setCurrentIndex(index)  # a document chosen: its first answer opens
            self.pump(1.0)
            name = box.itemData(index)
            self.check_review(f"document {name}")
            if index in (1, box.count() - 1) or name.startswith("Cybergy"):
                self.shot(f"document-{index:02d}")
        box.setCurrentIndex(0)
        self.pump(0.5)

    def judge_running(self) -> None:
        """The status bar during a judge run: its bar and "Cancel judge run" shown whole."""
        runner = self.window.judge_runner
        runner.progress.show()
        runner.cancel_button.show()
        self.pump(0.5)
        self.check_windows("a judge run")
        self.check_whole("a judge run", "“Cancel judge run”", runner.cancel_button)
        self.shot("judge-running")
        runner.progress.hide()
        runner.cancel_button.hide()

    def open_and_check(self, step: str, trigger: Callable[[], object], wait: float = 2.0) -> None:
        """Open a dialog or panel (modal or not), look at every window then, and close what it opened."""
        before = {id(w) for w in self.app.topLevelWidgets() if w.isVisible()}
        done: list[bool] = []

        def inspect() -> None:
            self.pump(0.3)
            self.check_windows(step)
            self.shot(step)
            for top in self.app.topLevelWidgets():
                if top.isVisible() and id(top) not in before:
                    top.reject() if isinstance(top, QDialog) else top.close()
            done.append(True)

        QTimer.singleShot(int(wait * 1000), inspect)
        trigger()
        while not done:
            self.pump(0.05)
        self.pump(0.3)

    def dialogs(self) -> None:
        window = self.window
        actions = {a.text(): a for m in window.menuBar().actions() if m.menu() for a in m.menu().actions()}
        for text, action in actions.items():
            if not text.endswith("…") and text not in ("Keyboard shortcuts", "About Assay"):
                continue
            step = "dialog " + text.rstrip("…").replace(" ", "-").replace("/", "-").lower()
            self.open_and_check(step, action.trigger)
        guidelines = next(a for a in actions.values() if a.text() == "Review guidelines")
        guidelines.trigger()  # Shift+F1: the panel, beside the answer list
        self.pump(1.0)
        self.check_windows("the guidelines panel")
        for name, widget in (
            ("the guidelines", window.guidelines_panel),
            ("the answer list", window.queue_pane.table),  # beside them, never in their place
            ("the data points", window.answer_pane.points),
        ):
            self.check_whole("the guidelines panel", name, widget)
        self.measure_points("the guidelines panel")
        self.shot("guidelines-panel")
        guidelines.trigger()  # Shift+F1 again closes it
        self.pump(0.5)
        if window.guidelines_panel.isVisible():
            self.problems.append("Shift+F1 a second time left the guidelines open")
        side = next(a for a in actions.values() if a.text().startswith("Side by side"))
        self.open_and_check("side-by-side", side.trigger)

    def export_preview(self) -> None:
        """The export dialog with the PDF report chosen: its first page previewed at a readable size."""
        from ui.export_dialog import ExportDialog

        dialog = ExportDialog(self.window, self.out, self.window.workspace)
        previewed: list[bool] = []
        dialog.previewed.connect(lambda: previewed.append(True))
        dialog.show()
        dialog.format.setCurrentIndex(dialog.format.findData("pdf"))
        end = time.monotonic() + 300
        while not previewed and time.monotonic() < end:
            self.pump(0.2)
        self.pump(0.5)
        self.check_windows("the export preview")
        self.check_whole("the export preview", "the preview", dialog.preview_area)
        page = dialog.preview.pixmap()
        if not previewed or page.isNull() or page.width() < 600:
            self.problems.append(f"the report's preview is {page.width()} px wide: too small to read")
        self.shot("export-preview")
        dialog.reject()
        self.pump(0.3)

    def dashboard(self) -> None:
        window = self.window
        refreshed: list[bool] = []
        window.dashboard.refreshed.connect(lambda: refreshed.append(True))
        window.tabs.setCurrentWidget(window.dashboard)
        end = time.monotonic() + 300
        while not refreshed and time.monotonic() < end:
            self.pump(0.2)
        if not refreshed:
            self.problems.append("the dashboard showed no figures within 300 s")
        self.pump(0.5)
        self.check_windows("the dashboard")
        self.shot("dashboard")
        window.tabs.setCurrentIndex(0)
        self.pump(0.5)

    def type_in_the_filter(self) -> dict[str, object]:
        """xdotool types WORD at 20 ms a key into the focused filter while the window runs."""
        window, queue = self.window, self.window.queue_pane
        window.activateWindow()
        queue.filter.setFocus()
        self.pump(0.5)
        opened = window.session.answer_id
        typing = subprocess.Popen(["xdotool", "type", "--delay", "20", WORD])
        while typing.poll() is None:
            self.pump(0.01)
        self.pump(1.0)  # the filter's pause, then the queue filtered
        found = {
            "typed": queue.filter.text(),
            "opened_before": opened,
            "opened_after": window.session.answer_id,
            "rows": queue.model.rowCount(),
            "focus_in_filter": self.app.focusWidget() is queue.filter,
        }
        self.shot("filter-typed")
        return found

    def every_column(self) -> None:
        """Show every column the header's menu hides (the confidence, a rater's): the rest of the walk
        has them all beside the point's text."""
        pane = self.window.answer_pane
        for column in range(2, pane.points_model.columnCount()):
            pane.show_column(column, True)
        self.pump(0.5)
        self.check_review("every column shown")
        self.shot("every-column")

    def run(self) -> dict[str, object]:
        self.check_review("the first screen")
        self.shot("first-screen")
        self.every_column()
        self.judge_running()
        typed = self.type_in_the_filter()
        self.window.queue_pane.filter.clear()
        self.pump(0.5)
        self.documents()
        self.dialogs()
        self.export_preview()
        self.dashboard()
        self.window.close()
        self.pump(0.5)
        return {
            "problems": self.problems,
            "shots": self.shots,
            "sizes": self.sizes,
            "filter": typed,
            "point_widths": self.point_widths,
        }


def main() -> None:
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    walk = Walk(Path(sys.argv[1]), out)
    (out / "walk.json").write_text(json.dumps(walk.run(), indent=1), encoding="utf-8")
    walk.project.close()
    sys.stdout.flush()
    os._exit(0)  # what there was to see is written: no teardown of Qt's objects in Python's order


if __name__ == "__main__":
    main()

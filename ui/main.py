"""The `assay` entry point: the CLI of app/, plus the commands that open a window."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.cli import main as cli_main
from app.cli import prepare_gui
from app.project import Project


def main(argv: Sequence[str] | None = None) -> int:
    return cli_main(argv, window_commands={"gui": _gui})


def _gui(project: Project, args: argparse.Namespace) -> int:
    prepare_gui(project, args)
    from PySide6.QtWidgets import QApplication  # Qt loads only when a window opens

    from ui.answers_window import AnswersWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = AnswersWindow(project)
    window.show()
    if args.screenshot is not None:
        app.processEvents()
        window.grab().save(str(args.screenshot))
        return 0
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())

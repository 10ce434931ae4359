"""The `assay` entry point: the CLI of app/, plus the commands that open a window."""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Sequence

from app.cli import main as cli_main
from app.cli import prepare_gui
from app.project import Project


def main(argv: Sequence[str] | None = None) -> int:
    return cli_main(argv, window_commands={"gui": _gui}, ask_in_window=_ask_passphrase)


def _ask_passphrase(where: str, new: bool) -> str | None:
    from PySide6.QtWidgets import QApplication, QInputDialog, QLineEdit

    QApplication.instance() or QApplication(sys.argv[:1])
    prompt = f"Choose a passphrase for the new encrypted project\n{where}" if new else f"Passphrase for\n{where}"
    text, ok = QInputDialog.getText(None, "Assay: encrypted project", prompt, QLineEdit.EchoMode.Password)
    return text if ok else None


def _gui(project: Project, args: argparse.Namespace) -> int:
    prepare_gui(project, args)
    from PySide6.QtWidgets import QApplication, QInputDialog  # Qt loads only when a window opens

    from ui.review_window import ReviewWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Assay")
    reviewer = args.reviewer
    if not reviewer and args.screenshot is None:
        reviewer, ok = QInputDialog.getText(None, "Assay", "Your name as a reviewer:", text=getpass.getuser())
        if not ok:
            return 0
    window = ReviewWindow(project, reviewer or getpass.getuser())
    if args.open_answer:
        window.open_answer(args.open_answer)
    window.show()
    if args.screenshot is not None:
        app.processEvents()
        current = window.current_point()
        if current is not None and current.citations:
            window.show_passage(current.citations[0])  # the picture shows a cited passage highlighted
        app.processEvents()
        window.grab().save(str(args.screenshot))
        window.close()
        return 0
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())

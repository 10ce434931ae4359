"""The `assay` entry point: the CLI of app/, plus the windows. With no arguments (a desktop launcher),
the welcome window opens."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Sequence

from app import keys
from app.cli import main as cli_main
from app.cli.parser import build_parser
from app.destinations import refuse_protected
from app.project import ICON
from app.settings import load_settings, save_settings
from app.workspace import Workspace, window_command
from ui import platform_check

SCREEN_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        if sys.platform.startswith("linux") and not any(map(os.environ.get, SCREEN_VARIABLES)):
            build_parser().print_help()  # a terminal on a server: the commands, not a window that cannot open
            return 0
        return welcome()
    return cli_main(argv, window_commands={"gui": window_command(_gui)}, ask_in_window=_ask_passphrase)


def _application():
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        problem = platform_check.check()  # instead of Qt's abort (exit 134) on a missing system library
        if problem:
            sys.exit(problem)
        app = QApplication(sys.argv[:1])
    app.setApplicationName("Assay")
    app.setDesktopFileName("assay")  # Wayland and docks match the window to assay.desktop
    app.setWindowIcon(QIcon(str(ICON)))
    return app


def _fit_to_screen(window) -> None:
    """Room for the queue, the answer and a readable contract side by side, on screens that have it."""
    screen = window.screen().availableGeometry()
    window.resize(min(max(window.width(), 1800), screen.width()), min(max(window.height(), 1000), screen.height()))


def _ask_secret(title: str, prompt: str, new: bool) -> str | None:
    """A passphrase typed in a dialog; a new one twice, the same both times (a slip would lock its owner
    out: the dialog says so and accepts only the same twice). None when cancelled."""
    from PySide6.QtWidgets import QInputDialog, QLineEdit

    from ui.passphrase_dialog import NewPassphraseDialog

    _application()
    if new:  # both fields in one dialog, which says a mismatch itself and that a lost one is lost
        dialog = NewPassphraseDialog(title, prompt)
        return dialog.passphrase() if dialog.exec() else None
    text, ok = QInputDialog.getText(None, title, prompt, QLineEdit.EchoMode.Password)
    return text if ok else None


def _ask_passphrase(where: str, new: bool) -> str | None:
    prompt = f"Choose a passphrase for the new encrypted project\n{where}" if new else f"Passphrase for\n{where}"
    return _ask_secret("Assay: encrypted project", prompt, new)


def _ask_key_passphrase(what: str, new: bool) -> str | None:
    """The passphrase of a reviewer's signing key, where there is no OS keyring to keep it."""
    prompt = f"This computer has no keyring: choose a passphrase to protect {what}" if new else f"Passphrase for {what}"
    return _ask_secret("Assay: signing key", prompt, new)


def welcome() -> int:
    from ui.review.window import ReviewWindow
    from ui.sample_tour import start_sample_tour
    from ui.welcome import WelcomeWindow

    app = _application()
    keys.set_passphrase_asker(_ask_key_passphrase)  # a sign-off's key is unlocked in a dialog, not the terminal
    settings = load_settings()
    window = WelcomeWindow(settings, _ask_passphrase)
    opened: list[ReviewWindow] = []

    def review(workspace: Workspace, reviewer: str) -> None:
        save_settings(settings)
        tour = workspace.sample_tour()
        opened.append(ReviewWindow(workspace, reviewer, settings, first_answer=tour.first_answer if tour else None))
        _fit_to_screen(opened[-1])
        opened[-1].show()
        start_sample_tour(opened[-1], tour)
        window.close()

    window.opened.connect(review)
    window.show()
    return app.exec()


def _gui(workspace: Workspace, args: argparse.Namespace) -> int:
    if args.screenshot is not None:  # checked before the window opens: never over a project or a device
        refuse_protected(args.screenshot, workspace.url, "png")
    if args.sample:  # before the window opens: `make run`'s terminal says how far the first reading has gone
        from app.cli.output import ProgressBar

        with ProgressBar("reading the sample's contracts for the claim checker", "contracts") as bar:
            workspace.import_sample_if_empty(on_reading=bar)
    from PySide6.QtWidgets import QInputDialog

    from ui.review.window import ReviewWindow
    from ui.sample_tour import start_sample_tour
    from ui.welcome import reviewer_name_prompt

    app = _application()
    keys.set_passphrase_asker(_ask_key_passphrase)
    settings = load_settings()
    reviewer = args.reviewer or settings.reviewer
    if not reviewer and args.screenshot is None:
        reviewer, ok = QInputDialog.getText(None, "Assay: your name", reviewer_name_prompt(getpass.getuser()))
        if not ok:
            return 0
    settings.reviewer = reviewer or getpass.getuser()
    if args.screenshot is None:  # a picture for the docs or a smoke test leaves the user's settings alone
        if (file := workspace.file()) is not None:
            settings.remember_project(str(file))
        save_settings(settings)
    # The sample's first open opens at the answer its judge run starts with (not with --open or a picture).
    tour = workspace.sample_tour() if not args.open_answer and args.screenshot is None else None
    first = tour.first_answer if tour else None
    window = ReviewWindow(workspace, settings.reviewer, settings, first, keep_place=args.screenshot is None)
    if args.screenshot is None:  # pictures keep the window's own size
        _fit_to_screen(window)
    window.show()
    if args.open_answer:
        window.open_answer(args.open_answer)
    start_sample_tour(window, tour)
    if args.screenshot is not None:
        app.processEvents()
        current = window.session.current_point
        if current is not None and current.passages:
            window.document_pane.show_passage(current.passages[0])  # the picture shows a cited passage highlighted
        app.processEvents()
        window.grab().save(str(args.screenshot))
        window.close()
        return 0
    return app.exec()


if __name__ == "__main__":
    import multiprocessing

    multiprocessing.freeze_support()  # the dashboard computes in a child process, also in a frozen build
    sys.exit(main())

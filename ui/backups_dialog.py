"""Backups in the window: made on open and every N minutes when something changed (off the GUI
thread, each one checked page by page, which is the full integrity check of the open project),
Project → Backups… to list, make and restore them, and the offer to restore a damaged project."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QRunnable, Qt, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app import backups
from app.errors import AssayError, NotAProject, ProjectDamaged
from app.project import AskPassphrase
from app.review.session import ReviewSession
from app.workspace import restore_unopened
from ui.screen_fit import fit_to_screen


class BackupSignals(QObject):
    finished = Signal(str)
    failed = Signal(str)


class BackupWorker(QRunnable):
    """One backup on a pool thread: the copy and its check read the file, never the GUI's database session."""

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.signals = BackupSignals()

    def run(self) -> None:
        try:
            made = self.session.back_up()
        except ProjectDamaged as exc:  # it says which backup to restore
            self.signals.failed.emit(str(exc))
        except (AssayError, OSError) as exc:
            self.signals.failed.emit(f"The backup could not be made: {exc}")
        else:
            self.signals.finished.emit(f"Backed up (and checked) at {made.taken:%H:%M}.")


class BackupKeeper(QObject):
    """Backs up the project of a window's review session when it opens and every `minutes` after a change;
    what happened is one sentence to `say`. A backup in flight finishes before the window closes."""

    def __init__(self, window: QWidget, session: ReviewSession, minutes: float, say: Callable[[str], None]) -> None:
        super().__init__(window)
        self.window = window
        self.session, self.minutes, self.say = session, minutes, say
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)  # one backup at a time
        self.path = session.backup_file()
        if self.path is None:  # a database server keeps its own backups
            return
        self.schedule = backups.BackupSchedule(self.path, minutes)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._on_timer_timeout)
        self.timer.start(60_000)
        window.installEventFilter(self)
        if self.path.is_file() and backups.changed_since_backup(self.path):
            self.back_up()

    def back_up(self) -> None:
        if self.path is None or self.pool.activeThreadCount():
            return
        worker = BackupWorker(self.session)
        worker.signals.finished.connect(self.say)
        worker.signals.failed.connect(self._on_backup_failed)
        self.schedule.done()
        self.pool.start(worker)

    def wait(self) -> None:
        self.pool.waitForDone()

    def _on_timer_timeout(self) -> None:
        if self.schedule.due():
            self.back_up()

    def _on_backup_failed(self, message: str) -> None:
        self.say(message)
        if "is damaged" in message:
            QMessageBox.warning(self.window, "Assay: the project is damaged", message)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.window and event.type() == QEvent.Type.Close:
            self.wait()  # a backup in flight finishes before the project closes
        return False


class BackupsDialog(QDialog):
    """Project → Backups…: this project's backups, newest first; back up now, or restore one (the review
    session then starts afresh on the restored file)."""

    def __init__(self, parent: QWidget, keeper: BackupKeeper, session: ReviewSession) -> None:
        super().__init__(parent)
        self.keeper = keeper
        self.session = session
        self.setWindowTitle("Backups")
        self.resize(720, 360)
        fit_to_screen(self)  # never larger than a laptop's screen
        layout = QVBoxLayout(self)
        self.where = QLabel()
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.list = QListWidget()
        self.now_button = QPushButton("Back up now")
        self.restore_button = QPushButton("Restore…")
        self.now_button.clicked.connect(self._on_now_clicked)
        self.restore_button.clicked.connect(self._on_restore_clicked)
        row = QHBoxLayout()
        row.addWidget(self.now_button)
        row.addWidget(self.restore_button)
        row.addStretch()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(self.where)
        layout.addWidget(self.list)
        layout.addLayout(row)
        layout.addWidget(buttons)
        self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        path = self.keeper.path
        if path is None:
            self.where.setText("This project lives on a database server, which keeps its own backups.")
            self.now_button.setEnabled(False)
            self.restore_button.setEnabled(False)
            return
        self.where.setText(
            f"Kept in {backups.backup_folder(path)}: the last {backups.KEEP_LAST}, and one a day for "
            f"{backups.KEEP_DAYS} days. Made when the project opens and every "
            f"{self.keeper.minutes:g} minutes when something changed."
        )
        for backup in backups.list_backups(path):
            text = f"{backup.taken:%Y-%m-%d %H:%M:%S}   {backup.size / 1e6:.1f} MB   {backup.path.name}"
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, str(backup.path))
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        self.restore_button.setEnabled(self.list.count() > 0)

    def _on_now_clicked(self) -> None:
        self.keeper.wait()
        self.keeper.back_up()
        self.keeper.wait()
        self.refresh()

    def _on_restore_clicked(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.restore(Path(item.data(Qt.ItemDataRole.UserRole)))

    def restore(self, backup: Path, confirm: bool = True) -> Path | None:
        """Put `backup` in the project's place; the current file is kept aside. Returns where."""
        assert self.keeper.path is not None
        if confirm:
            answer = QMessageBox.question(
                self,
                "Restore this backup?",
                f"The project goes back to {backup.name}.\nThe current file is kept aside, not deleted.",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return None
        self.keeper.wait()  # a backup in flight is made of the file before it is replaced
        aside = self.session.restore_backup(backup)  # every view shows the restored file; a fresh undo history
        self.refresh()
        return aside


def offer_restore(parent: QWidget, path: Path, error: AssayError, ask: AskPassphrase) -> bool | None:
    """A project that will not open: its message, and a button that restores the newest backup.
    True: restored (the damaged file kept aside); False: shown, not restored; None: no offer to make."""
    newest = backups.newest_good_backup(path) if isinstance(error, ProjectDamaged | NotAProject) else None
    if newest is None:
        return None
    box = QMessageBox(QMessageBox.Icon.Warning, "Assay: the project does not open", str(error), parent=parent)
    restore = box.addButton("Restore the newest backup", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    if box.clickedButton() is not restore:
        return False
    try:
        aside = restore_unopened(path, newest.path, ask)
    except (AssayError, OSError) as exc:
        QMessageBox.warning(parent, "Assay", str(exc))
        return False
    when = f"{newest.taken:%Y-%m-%d %H:%M}"
    QMessageBox.information(parent, "Assay", f"Restored the backup of {when}; the damaged file is kept as {aside}.")
    return True

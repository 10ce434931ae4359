"""Importing from the welcome window: an encrypted PDF asks for its password; cancelling imports nothing."""

from __future__ import annotations

import json
from pathlib import Path

from app.project import Project
from app.settings import Settings
from ui.welcome import WelcomeWindow

PDFS = Path(__file__).parent / "fixtures" / "pdfs"


def _dataset(folder: Path) -> Path:
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "manual.pdf").write_bytes((PDFS / "password-example.pdf").read_bytes())
    row = {"id": "a1", "document": "manual.pdf", "question": "What is it?", "answer": "A backup tool."}
    (folder / "qa.jsonl").write_text(json.dumps(row) + "\n")
    return folder


def test_protected_pdf_asks_for_its_password_then_imports(qtbot, monkeypatch, tmp_path: Path) -> None:
    asked: list[str] = []
    answers = iter([("guess", True), ("test", True)])  # what the user types: a wrong password, then the right one

    def type_password(_parent, _title, prompt, _echo):
        asked.append(prompt)
        return next(answers)

    monkeypatch.setattr("ui.welcome.QInputDialog.getText", type_password)
    welcome = WelcomeWindow(Settings(), ask_passphrase=lambda _where, _new: None)
    qtbot.addWidget(welcome)
    with qtbot.waitSignal(welcome.opened, timeout=60_000) as opened:
        welcome.open_path(tmp_path / "new.assay", dataset=_dataset(tmp_path / "set"))
    project = opened.args[0].project
    assert asked[0].startswith("manual.pdf is password-protected.") and "wrong" not in asked[0]
    assert "That password is wrong." in asked[1]
    assert len(project.answers()) == 1
    project.close()


def test_cancelled_password_imports_nothing_and_says_why(qtbot, monkeypatch, tmp_path: Path) -> None:
    warnings: list[str] = []
    monkeypatch.setattr("ui.welcome.QInputDialog.getText", lambda *_args: ("", False))
    monkeypatch.setattr("ui.welcome.QMessageBox.warning", lambda _parent, _title, text: warnings.append(text))
    welcome = WelcomeWindow(Settings(), ask_passphrase=lambda _where, _new: None)
    qtbot.addWidget(welcome)
    welcome.open_path(tmp_path / "new.assay", dataset=_dataset(tmp_path / "set"))
    qtbot.waitUntil(lambda: bool(warnings), timeout=60_000)
    assert warnings == ["manual.pdf: this PDF is password-protected and no password was given"]
    check = Project.open(f"sqlite:///{tmp_path / 'new.assay'}")
    assert check.counts()["answers"] == 0
    check.close()

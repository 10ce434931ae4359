"""Issue 56, "The first hour, again": what a new user reads in the prompts and in the CLI's output."""

from __future__ import annotations

import argparse
import getpass
from collections.abc import Iterator

import pytest

from app.figures.rater_names import rater_name
from app.project import Project


def _typed(monkeypatch: pytest.MonkeyPatch, *answers: str) -> list[str]:
    """The passphrase dialogs answer `answers` in turn; the prompts they showed are returned."""
    from PySide6.QtWidgets import QInputDialog

    shown: list[str] = []
    left = list(answers)

    def get_text(_parent, _title, prompt, *_args, **_kwargs):
        shown.append(prompt)
        return left.pop(0), True

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(get_text))
    return shown


def _type_new(qtbot, *typed: str, cancel: bool = False) -> list[str]:
    """The next new-passphrase dialog gets `typed` in its two fields, then OK (or Cancel); what it said
    in itself (a mismatch, the warning) is returned."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from ui.passphrase_dialog import NewPassphraseDialog

    said: list[str] = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, NewPassphraseDialog)
        dialog.first.setText(typed[0])
        dialog.again.setText(typed[1])
        said.extend([dialog.problem.text() if dialog.problem.isVisibleTo(dialog) else "", dialog.warning.text()])
        said.append(str(dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()))
        dialog.accept()  # Enter: refused in the dialog where they differ
        if dialog.isVisible():
            dialog.reject()

    QTimer.singleShot(0, answer)
    return said


def test_a_new_signing_passphrase_is_asked_twice_and_a_mismatch_said_in_the_dialog(qtbot, monkeypatch) -> None:
    from ui.main import _ask_key_passphrase, _ask_passphrase
    from ui.passphrase_dialog import DIFFERENT

    said = _type_new(qtbot, "correct horse", "correct horse")
    assert _ask_key_passphrase("ana's signing key", True) == "correct horse"
    assert said[0] == "" and "cannot be recovered" in said[1] and said[2] == "True"
    said = _type_new(qtbot, "correct horse", "correct hose")
    assert _ask_key_passphrase("ana's signing key", True) is None  # never a passphrase its owner did not type twice
    assert said == [DIFFERENT, said[1], "False"]  # said in the dialog itself, OK refused
    said = _type_new(qtbot, "one", "two")
    assert _ask_passphrase("/tmp/new.assay", True) is None and said[0] == DIFFERENT  # a new encrypted project too
    shown = _typed(monkeypatch, "correct horse")
    assert _ask_key_passphrase("ana's signing key", False) == "correct horse" and len(shown) == 1  # unlocking: once


def test_the_reviewer_name_says_what_it_is_for_and_is_not_the_login_prefilled(qtbot) -> None:
    from app.settings import Settings
    from ui.welcome import WelcomeWindow, reviewer_name_prompt

    prompt = reviewer_name_prompt("jdoe")
    assert "recorded with every tag and sign-off" in prompt and "jdoe" in prompt
    welcome = WelcomeWindow(Settings(), ask_passphrase=lambda _where, _new: None)
    qtbot.addWidget(welcome)
    assert welcome.reviewer.text() == "" and getpass.getuser() in welcome.reviewer.placeholderText()
    assert "recorded with every tag and sign-off" in welcome.reviewer.toolTip()


def _options_without_help(parser: argparse.ArgumentParser, path: str) -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                yield from _options_without_help(command, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction) and not (action.help or "").strip():
            yield f"{path} {'/'.join(action.option_strings) or action.dest}"


def test_every_option_of_every_command_says_what_it_does() -> None:
    from app.cli.parser import build_parser

    assert list(_options_without_help(build_parser(), "assay")) == []


def _cli(capsys: pytest.CaptureFixture[str], project: Project, *args: str) -> str:
    from app.cli import main

    capsys.readouterr()
    assert main(["--db", project.url, *args]) == 0
    return capsys.readouterr().out


def test_agreement_and_scores_print_tables_a_person_reads(capsys, sample_project: Project) -> None:
    from .test_readable_window import JUDGE, OTHER, _judges_and_a_jury

    _judges_and_a_jury(sample_project)
    out = _cli(capsys, sample_project, "agreement", "--raters", f"{JUDGE},{OTHER}")
    assert "Agreement between SmolLM2-135M (two-stage) and Qwen2.5-7B" in out
    assert "observed agreement" in out and "Cohen's kappa" in out
    assert not any(raw in out for raw in ("['", "{'", "None", "percent_agreement", "by_source"))  # no Python values
    out = _cli(capsys, sample_project, "agreement", "--raters", f"{JUDGE},{OTHER}", "--level", "answer")
    assert "relevance (F1)" in out and "{'" not in out and "None" not in out
    out = _cli(capsys, sample_project, "scores")
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines and all("SmolLM2-135M (two-stage)" in line or "Qwen2.5-7B" in line or "Jury" in line for line in lines)
    qwen = [line for line in lines if "Qwen2.5-7B" in line and "Jury" not in line]
    assert qwen and all(rater_name(OTHER) in line for line in qwen)  # the whole name, never cut mid-word


def test_citations_and_show_print_text_not_python_or_markdown(capsys, sample_project: Project) -> None:
    out = _cli(capsys, sample_project, "citations", "cuad-034")  # the answer writes "Section\xa03.2"
    assert "Section 3.2" in out and "\\xa0" not in out and "'" not in out
    out = _cli(capsys, sample_project, "show", "contractnli-000")  # "does **not** grant"
    assert "does not grant" in out and "**" not in out
    assert "Claim checker" in out and "\nverifier" not in out

"""Issue 56, "The first hour, again": what a new user reads in the prompts and in the CLI's output."""

from __future__ import annotations

import argparse
import getpass
from collections.abc import Iterator

import pytest

from app.errors import InvalidInput
from app.keys import KeyProblem


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


def test_a_new_signing_passphrase_is_asked_twice_and_a_mismatch_refused(qtbot, monkeypatch) -> None:
    from ui.main import _ask_key_passphrase, _ask_passphrase

    shown = _typed(monkeypatch, "correct horse", "correct horse")
    assert _ask_key_passphrase("ana's signing key", True) == "correct horse"
    assert len(shown) == 2 and "again" in shown[1]
    _typed(monkeypatch, "correct horse", "correct hose")
    with pytest.raises(KeyProblem, match=r"^the two passphrases differ: nothing was made$"):
        _ask_key_passphrase("ana's signing key", True)
    _typed(monkeypatch, "one", "two")
    with pytest.raises(InvalidInput, match="the two passphrases differ"):
        _ask_passphrase("/tmp/new.assay", True)  # a new encrypted project too
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

"""Every key is bound to a function, not a method's name (issue 66 §4): a key bound to a misspelt or
foreign function fails when the keymap is imported, a view that lacks a function of its keys fails
when it binds them, and each key of the table reaches the function it is bound to, with its argument:
through the points tables and through the window's menus, pressed as a reviewer presses it."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtGui import QAction, QKeySequence

from app.review import keymap
from app.review.session import ReviewSession
from models.vocabulary import Tag
from ui.review.window import ReviewWindow

from .test_ui import window as window  # the review window, an answer open, the points table focused

VIEWS = (keymap.REVIEW, keymap.SIDE_BY_SIDE, keymap.ADJUDICATION, keymap.WINDOW)


def _keymap_with(monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    """Import the keymap's source with one binding changed, as a module of its own."""
    source = Path(keymap.__file__).read_text(encoding="utf-8")
    assert old in source
    module = types.ModuleType("keymap_changed")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(source.replace(old, new, 1), "keymap_changed.py", "exec"), module.__dict__)


def test_a_misspelt_function_fails_when_the_keymap_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AttributeError, match="accept_jugde"):
        _keymap_with(monkeypatch, "action=ReviewSession.accept_judge,", "action=ReviewSession.accept_jugde,")
    with pytest.raises(TypeError, match="neither a ReviewSession method nor a function of WindowKeys"):
        _keymap_with(monkeypatch, "action=ReviewSession.undo,", 'action="undo",')  # a name, as keys once were


def test_a_key_bound_to_what_its_view_cannot_call_fails_loudly() -> None:
    def stray(_view: object) -> None: ...

    for action in (stray, "tag_current", keymap.SideBySideKeys.prefer):  # prefer is side by side's, not the review's
        with pytest.raises(TypeError, match="neither a ReviewSession method nor a function of AnswerPaneKeys"):
            keymap.Binding(keys=("X",), action=action, label="x", view=keymap.REVIEW)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes no argument"):
        keymap.Binding(keys=("X",), action=ReviewSession.undo, argument=1, label="x", view=keymap.WINDOW)
    with pytest.raises(TypeError, match="no view"):
        keymap.Binding(keys=("X",), action=ReviewSession.undo, label="x", view="review window")
    with pytest.raises(LookupError, match=r"no window key is bound to ReviewSession\.submit"):
        keymap.bound(keymap.WINDOW, ReviewSession.submit)  # the window's submit is WindowKeys.submit


class _Heard:
    """Stands in for the session or a view: each function of `names` records its call in `heard`."""

    def __init__(self, names: set[str], heard: list[tuple[object, str, tuple[object, ...]]]) -> None:
        for name in names:
            setattr(self, name, self._hearing(name, heard))

    def _hearing(self, name: str, heard: list[tuple[object, str, tuple[object, ...]]]) -> Callable[..., None]:
        return lambda *args: heard.append((self, name, args))


def test_a_view_without_a_function_its_keys_call_fails_when_it_binds_them() -> None:
    heard: list[tuple[object, str, tuple[object, ...]]] = []
    names = {"tag_selected", "accept_judge_selected", "move_cell", "close"}  # no `prefer`: A, B and T call it
    with pytest.raises(TypeError, match=r"cannot take the side by side keys: A: SideBySideKeys\.prefer"):
        keymap.bind(keymap.SIDE_BY_SIDE, None, _Heard(names, heard))
    with pytest.raises(TypeError, match=r"Ctrl\+Z: ReviewSession\.undo"):  # the window's undo is the session's
        keymap.bind(keymap.WINDOW, None, _Heard({b.action.__name__ for b in keymap.bindings(keymap.WINDOW)}, heard))


@pytest.mark.parametrize("view", VIEWS)
def test_every_key_of_the_table_reaches_its_function_with_its_argument(view: str) -> None:
    heard: list[tuple[object, str, tuple[object, ...]]] = []
    session = _Heard({b.action.__name__ for b in keymap.bindings(view) if b.owner is ReviewSession}, heard)
    target = _Heard({b.action.__name__ for b in keymap.bindings(view) if b.owner is keymap.VIEWS[view]}, heard)
    keys = keymap.bind(view, session, target)  # type: ignore[arg-type]
    assert keymap.bindings(view)
    for b in keymap.bindings(view):
        for key in b.keys:
            assert keys.binding(key) is b, (view, key)
            keys.press(b)
            on = session if b.owner is ReviewSession else target
            assert heard.pop() == (on, b.action.__name__, (b.argument,) if b.takes_argument else ()), (view, key)
    assert keymap.binding(keymap.ADJUDICATION, "0").takes_argument  # 0 gives decide its None: "leave it out"


def _press(qtbot, widget, shortcut: str) -> None:
    combination = QKeySequence(shortcut)[0]
    qtbot.keyClick(widget, combination.key(), combination.keyboardModifiers())


def test_every_key_of_the_window_and_its_points_reaches_its_function(
    qtbot, window: ReviewWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pressed on the points table, as a reviewer does: each review key calls the session (4 the pane),
    each menu key its menu entry, named and bound as the keymap says, and that entry's function."""
    heard: list[tuple[str, tuple[object, ...]]] = []
    for view, target in ((keymap.REVIEW, window.answer_pane), (keymap.WINDOW, window.keys.target)):
        for b in keymap.bindings(view):
            on = window.session if b.owner is ReviewSession else target
            monkeypatch.setattr(on, b.action.__name__, lambda *args, n=b.action.__name__: heard.append((n, args)))
    menus = {a.shortcut().toString(): a for a in window.findChildren(QAction) if not a.shortcut().isEmpty()}
    points = window.answer_pane.points
    for b in keymap.bindings(keymap.REVIEW) + keymap.bindings(keymap.WINDOW):
        if b.view == keymap.WINDOW:
            assert menus[b.keys[0]].text() == b.label, b
            menus[b.keys[0]].setEnabled(True)  # undo and redo wait for something to undo
        for key in b.keys:
            points.setFocus()
            _press(qtbot, points, key)
            assert heard == [(b.action.__name__, (b.argument,) if b.takes_argument else ())], (b.view, key)
            heard.clear()
    assert keymap.binding(keymap.REVIEW, "2").argument is Tag.INCORRECT

"""Every review key, in one table, bound to the function it calls: which key does what in which view,
and what the help says of it.

As napari binds keys to functions of its Qt-free ViewerModel (`@ViewerModel.bind_key`), a key here is
bound to a function, not a name: a ReviewSession method where the session does it alone (tag, accept
the judge, move, undo), else a function of the view the key is pressed in, where the action needs one
(a dialog, the document's selected text, the side-by-side window's selected cell). Those are declared
here, Qt-free, as each view's protocol (AnswerPaneKeys, SideBySideKeys, AdjudicationKeys, WindowKeys),
which ui/ implements. A key bound to anything else fails when this module is imported (AttributeError
for a misspelt method, TypeError from Binding); a view that lacks a function of its protocol fails
when it binds its keys (`bind`). The points tables (ui/review/point_table.py), the window's menus, the
help sheet (F1) and the legends under the tables all read this one table, so a key cannot be
documented one way and bound another. Keys are written as Qt's QKeySequence writes them ("Return",
"Ctrl+Shift+Z"), with no Qt.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from app.review.session import ReviewSession
from models.vocabulary import Tag

REVIEW, SIDE_BY_SIDE, ADJUDICATION, WINDOW = "review", "side by side", "adjudication", "window"
# Reasons an adjudicator records with a decision (app.review.adjudication.REASONS, in that order).
GUIDELINE_UNCLEAR, REVIEWER_ERROR, BOTH_DEFENSIBLE = "guideline unclear", "reviewer error", "both defensible"


class AnswerPaneKeys(Protocol):
    """What a key of the open answer's points does that the session cannot do alone."""

    def add_missing_from_selection(self) -> object: ...  # the document pane holds the selected text


class SideBySideKeys(Protocol):
    """Two generators' points side by side: the keys act on the selected cell, or on the pair."""

    def tag_selected(self, tag: Tag) -> object: ...
    def accept_judge_selected(self) -> object: ...
    def move_cell(self, step: int) -> object: ...
    def prefer(self, choice: str) -> object: ...
    def close(self) -> object: ...


class AdjudicationKeys(Protocol):
    """A disputed answer's points: a key decides the selected point, or sets the decision's reason."""

    def decide(self, tag: Tag | None) -> object: ...
    def choose_reason(self, reason: str) -> object: ...
    def move_point(self, step: int) -> object: ...


class WindowKeys(Protocol):
    """The review window's menu shortcuts that ask first, or need a pane or a dialog."""

    def add_point_from_selection(self) -> object: ...
    def edit_point(self) -> object: ...
    def split_point(self) -> object: ...
    def comment_point(self) -> object: ...
    def submit(self) -> object: ...
    def sign_off(self) -> object: ...
    def search(self) -> object: ...
    def move_answer(self, step: int) -> object: ...
    def least_certain_first(self) -> object: ...
    def side_by_side(self) -> object: ...
    def run_judge(self) -> object: ...
    def export(self) -> object: ...
    def shortcuts(self) -> object: ...
    def guidelines(self) -> object: ...


VIEWS: dict[str, type] = {
    REVIEW: AnswerPaneKeys,
    SIDE_BY_SIDE: SideBySideKeys,
    ADJUDICATION: AdjudicationKeys,
    WINDOW: WindowKeys,
}
# The functions that move the selection by a step: J and K, shown together as "J / K".
STEPS = (ReviewSession.move, SideBySideKeys.move_cell, AdjudicationKeys.move_point)


def _owner(view: str, action: object) -> type:
    """ReviewSession, or the view's protocol: whichever `action` is a function of."""
    if view not in VIEWS:
        raise TypeError(f"no view {view!r} (the views: {', '.join(VIEWS)})")
    name = getattr(action, "__name__", None)
    for owner in (ReviewSession, VIEWS[view]):
        if callable(action) and name and getattr(owner, name, None) is action:
            return owner
    raise TypeError(
        f"a {view} key is bound to {action!r}: neither a ReviewSession method nor a function of {VIEWS[view].__name__}"
    )


def _takes_argument(action: Callable[..., object]) -> bool:
    """Whether the function takes the binding's argument (one parameter after self), else none."""
    wanted = [
        p
        for p in list(inspect.signature(action).parameters.values())[1:]
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(wanted) > 1:
        raise TypeError(f"a key cannot give {action.__qualname__} its {len(wanted)} arguments")
    return bool(wanted)


@dataclass(frozen=True, kw_only=True)
class Binding:
    """One key in one view: the function it calls (a ReviewSession method, or a function of the view's
    protocol), with what the function is given, and the words the help and the legends say."""

    keys: tuple[str, ...]  # as QKeySequence.toString() writes them; the first is the one shown
    action: Callable[..., object]
    argument: object = None  # given when the function takes one (None too: "leave the point out")
    label: str  # the help sheet's words
    short: str = ""  # the legend's words, when shorter than the label
    view: str
    anywhere: bool = False  # wherever the focus is in the view's window, not only in its table
    owner: type = field(init=False, compare=False)  # ReviewSession, or the view's protocol
    takes_argument: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "owner", _owner(self.view, self.action))
        object.__setattr__(self, "takes_argument", _takes_argument(self.action))
        if self.argument is not None and not self.takes_argument:
            raise TypeError(f"{self.action.__qualname__} takes no argument, the key {self.keys[0]} gives it one")

    @property
    def steps(self) -> bool:
        return self.action in STEPS


def _tags(view: str, action: Callable[..., object]) -> tuple[Binding, ...]:
    return (
        Binding(
            keys=("1",),
            action=action,
            argument=Tag.CORRECT,
            label="Tag the data point correct",
            short="correct",
            view=view,
        ),
        Binding(
            keys=("2",),
            action=action,
            argument=Tag.INCORRECT,
            label="Tag it incorrect (an error or a hallucination)",
            short="incorrect",
            view=view,
        ),
        Binding(
            keys=("3",),
            action=action,
            argument=Tag.IRRELEVANT,
            label="Tag it irrelevant",
            short="irrelevant",
            view=view,
        ),
    )


def _moves(view: str, action: Callable[..., object], noun: str) -> tuple[Binding, ...]:
    return (
        Binding(keys=("J",), action=action, argument=1, label=f"Next {noun}", short="next", view=view),
        Binding(keys=("K",), action=action, argument=-1, label=f"Previous {noun}", short="previous", view=view),
    )


KEYMAP: tuple[Binding, ...] = (
    # The data points of the open answer (ui/review/answer_pane.py).
    *_tags(REVIEW, ReviewSession.tag_current),
    Binding(
        keys=("4",),
        action=AnswerPaneKeys.add_missing_from_selection,
        label="Add the text selected in the document as a missing data point",
        short="missing (select in document)",
        view=REVIEW,
    ),
    Binding(
        keys=("Return", "Enter"),
        action=ReviewSession.accept_judge,
        label="Accept the judge's tag",
        short="accept judge",
        view=REVIEW,
    ),
    *_moves(REVIEW, ReviewSession.move, "data point"),
    # Two generators' points side by side (ui/review/side_by_side.py); A, B, T and closing work wherever the
    # focus is but a text field (after Enter in the reason field the next key records the preference).
    *_tags(SIDE_BY_SIDE, SideBySideKeys.tag_selected),
    Binding(
        keys=("Return", "Enter"),
        action=SideBySideKeys.accept_judge_selected,
        label="Accept the judge's tag",
        short="the judge's tag",
        view=SIDE_BY_SIDE,
    ),
    *_moves(SIDE_BY_SIDE, SideBySideKeys.move_cell, "row"),
    Binding(
        keys=("A",),
        action=SideBySideKeys.prefer,
        argument="left",
        label="A (left) is the better answer",
        short="left better",
        view=SIDE_BY_SIDE,
        anywhere=True,
    ),
    Binding(
        keys=("B",),
        action=SideBySideKeys.prefer,
        argument="right",
        label="B (right) is the better answer",
        short="right better",
        view=SIDE_BY_SIDE,
        anywhere=True,
    ),
    Binding(
        keys=("T",),
        action=SideBySideKeys.prefer,
        argument="tie",
        label="The answers are as good (a tie)",
        short="tie",
        view=SIDE_BY_SIDE,
        anywhere=True,
    ),
    Binding(
        keys=("Esc", "Ctrl+W"),
        action=SideBySideKeys.close,
        label="Close the side-by-side window (back to the review)",
        short="close",
        view=SIDE_BY_SIDE,
        anywhere=True,
    ),
    # A disputed answer's points (ui/review/adjudication_view.py): a key decides the selected point.
    Binding(
        keys=("1",),
        action=AdjudicationKeys.decide,
        argument=Tag.CORRECT,
        label="Decide: correct",
        short="correct",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("2",),
        action=AdjudicationKeys.decide,
        argument=Tag.INCORRECT,
        label="Decide: incorrect",
        short="incorrect",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("3",),
        action=AdjudicationKeys.decide,
        argument=Tag.IRRELEVANT,
        label="Decide: irrelevant",
        short="irrelevant",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("4",),
        action=AdjudicationKeys.decide,
        argument=Tag.MISSING,
        label="Decide: missing",
        short="missing",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("0", "Del", "Backspace"),
        action=AdjudicationKeys.decide,
        argument=None,
        label="Leave the point out of the consensus (a point not every reviewer has)",
        short="leave out (a point not every reviewer has)",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("G",),
        action=AdjudicationKeys.choose_reason,
        argument=GUIDELINE_UNCLEAR,
        label="Reason: guideline unclear",
        short="guideline unclear",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("E",),
        action=AdjudicationKeys.choose_reason,
        argument=REVIEWER_ERROR,
        label="Reason: reviewer error",
        short="reviewer error",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("B",),
        action=AdjudicationKeys.choose_reason,
        argument=BOTH_DEFENSIBLE,
        label="Reason: both defensible",
        short="both defensible (reason for the next decision)",
        view=ADJUDICATION,
    ),
    *_moves(ADJUDICATION, AdjudicationKeys.move_point, "data point"),
    # The review window's menus (ui/review/window.py): shortcuts wherever the focus is in the window.
    Binding(keys=("Ctrl+Z",), action=ReviewSession.undo, label="Undo", view=WINDOW),
    Binding(keys=("Ctrl+Shift+Z",), action=ReviewSession.redo, label="Redo", view=WINDOW),
    Binding(
        keys=("Ctrl+Shift+N",),
        action=WindowKeys.add_point_from_selection,
        label="Make a data point of the selected answer text",
        view=WINDOW,
    ),
    Binding(keys=("F2",), action=WindowKeys.edit_point, label="Edit data point…", view=WINDOW),
    Binding(keys=("Ctrl+Shift+S",), action=WindowKeys.split_point, label="Split data point…", view=WINDOW),
    Binding(
        keys=("Ctrl+Shift+M",), action=ReviewSession.merge_current, label="Merge with next data point", view=WINDOW
    ),
    Binding(keys=("Del",), action=ReviewSession.delete_current, label="Delete data point", view=WINDOW),
    Binding(keys=("Ctrl+Shift+C",), action=WindowKeys.comment_point, label="Comment on data point…", view=WINDOW),
    Binding(keys=("Ctrl+Return",), action=WindowKeys.submit, label="Submit review", view=WINDOW),
    Binding(keys=("Ctrl+Shift+Return",), action=WindowKeys.sign_off, label="Sign off this answer", view=WINDOW),
    Binding(keys=("Ctrl+F",), action=WindowKeys.search, label="Search document", view=WINDOW),
    Binding(keys=("Ctrl+Down",), action=WindowKeys.move_answer, argument=1, label="Next answer", view=WINDOW),
    Binding(keys=("Ctrl+Up",), action=WindowKeys.move_answer, argument=-1, label="Previous answer", view=WINDOW),
    Binding(keys=("Ctrl+Shift+U",), action=WindowKeys.least_certain_first, label="Least certain first", view=WINDOW),
    Binding(
        keys=("Ctrl+Shift+B",), action=WindowKeys.side_by_side, label="Side by side with another generator", view=WINDOW
    ),
    Binding(keys=("Ctrl+J",), action=WindowKeys.run_judge, label="Run the judge…", view=WINDOW),
    Binding(keys=("Ctrl+E",), action=WindowKeys.export, label="Export the reviewed set…", view=WINDOW),
    Binding(keys=("F1",), action=WindowKeys.shortcuts, label="Keyboard shortcuts", view=WINDOW),
    Binding(keys=("Shift+F1",), action=WindowKeys.guidelines, label="Review guidelines", view=WINDOW),
)


def bindings(view: str) -> tuple[Binding, ...]:
    """The view's keys, in the table's order."""
    return tuple(b for b in KEYMAP if b.view == view)


def binding(view: str, key: str) -> Binding | None:
    """What `key` does in `view` (None: nothing, the widget's own handling applies)."""
    return next((b for b in KEYMAP if b.view == view and key in b.keys), None)


def bound(view: str, action: Callable[..., object], argument: object = None) -> Binding:
    """The binding of a function in a view (the window's menus take their words and shortcuts from here);
    a LookupError when the table binds no key to it."""
    found = next((b for b in KEYMAP if b.view == view and b.action == action and b.argument == argument), None)
    if found is None:
        raise LookupError(f"no {view} key is bound to {getattr(action, '__qualname__', action)}({argument!r})")
    return found


def shortcut(action: Callable[..., object], argument: object = None) -> str:
    """The window shortcut of a menu action."""
    return bound(WINDOW, action, argument).keys[0]


class Keys:
    """A view's keys bound to what they call: the session's methods on `session`, the view's protocol's
    functions on `target` (the widget or window that implements it). Binding checks that the target has
    every function its view's keys call, so a view that lost one fails when it is built, not when the
    key is pressed; a press calls the function on the object as it is then (a test may stand in for it)."""

    def __init__(self, view: str, session: ReviewSession | None, target: object) -> None:
        self.view, self.session, self.target = view, session, target
        missing = [
            f"{b.keys[0]}: {b.action.__qualname__}"
            for b in bindings(view)
            if not callable(getattr(self._on(b), b.action.__name__, None))
        ]
        if missing:
            raise TypeError(f"{type(target).__name__} cannot take the {view} keys: {'; '.join(missing)}")

    def _on(self, b: Binding) -> object:
        return self.session if b.owner is ReviewSession else self.target

    def binding(self, key: str) -> Binding | None:
        return binding(self.view, key)

    def press(self, pressed: Binding) -> object:
        """Call what the key is bound to, with its argument."""
        if pressed.view != self.view:
            raise ValueError(f"a {pressed.view} key pressed in the {self.view} view")
        call = getattr(self._on(pressed), pressed.action.__name__)
        return call(pressed.argument) if pressed.takes_argument else call()


def bind(view: str, session: ReviewSession | None, target: object) -> Keys:
    """Bind the view's keys (see Keys); `target` implements the view's protocol (VIEWS[view])."""
    return Keys(view, session, target)


def help_rows(view: str) -> list[tuple[str, str]]:
    """(keys, what they do) for the help sheet, in the table's order; J and K read "J / K"."""
    rows: list[tuple[str, str]] = []
    for b in bindings(view):
        if b.steps and b.argument == -1:
            continue
        if b.steps:
            rows.append(("J / K", f"Next / previous {b.label.split(' ', 1)[1]}"))
        else:
            rows.append((b.keys[0] if b.keys[0] != "Return" else "Enter", b.label))
    return rows


def legend(view: str) -> str:
    """One line of the view's keys, as the legend under its table shows them: "1 correct · 2 incorrect …"."""
    parts: list[str] = []
    for b in bindings(view):
        keys = "Enter" if b.keys[0] == "Return" else b.keys[0]
        if b.steps:
            if b.argument == 1:
                parts.append("J/K move")
            continue
        parts.append(f"{keys} {b.short or b.label}")
    return " · ".join(parts)

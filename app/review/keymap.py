"""Every review key, in one table: which key does what in which view, and what the help says of it.

As napari binds keys on its Qt-free model (components/_viewer_key_bindings.py), the keys are data
here and the views read them: a points table (ui/review/point_table.py) turns a key press into the
binding's action, the window builds its menu shortcuts from the table, and the help sheet and the
legends under the tables are generated from it, so a key cannot be documented one way and bound
another. Keys are written as Qt's QKeySequence writes them ("Return", "Ctrl+Shift+Z"), with no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.vocabulary import Tag

REVIEW, SIDE_BY_SIDE, ADJUDICATION, WINDOW = "review", "side by side", "adjudication", "window"
# Reasons an adjudicator records with a decision (app.review.adjudication.REASONS, in that order).
GUIDELINE_UNCLEAR, REVIEWER_ERROR, BOTH_DEFENSIBLE = "guideline unclear", "reviewer error", "both defensible"


@dataclass(frozen=True, kw_only=True)
class Binding:
    """One key in one view: the action it triggers (a ReviewSession method's name, or a view's own
    action), with what the action is given, and the words the help and the legends say."""

    keys: tuple[str, ...]  # as QKeySequence.toString() writes them; the first is the one shown
    action: str
    argument: object = None
    label: str  # the help sheet's words
    short: str = ""  # the legend's words, when shorter than the label
    view: str


def _tags(view: str, action: str) -> tuple[Binding, ...]:
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


def _moves(view: str, noun: str) -> tuple[Binding, ...]:
    return (
        Binding(keys=("J",), action="move", argument=1, label=f"Next {noun}", short="next", view=view),
        Binding(keys=("K",), action="move", argument=-1, label=f"Previous {noun}", short="previous", view=view),
    )


KEYMAP: tuple[Binding, ...] = (
    # The data points of the open answer (ui/review/answer_pane.py).
    *_tags(REVIEW, "tag_current"),
    Binding(
        keys=("4",),
        action="add_missing",
        label="Add the text selected in the document as a missing data point",
        short="missing (select in document)",
        view=REVIEW,
    ),
    Binding(
        keys=("Return", "Enter"),
        action="accept_judge",
        label="Accept the judge's tag",
        short="accept judge",
        view=REVIEW,
    ),
    *_moves(REVIEW, "data point"),
    # Two generators' points side by side (ui/review/side_by_side.py).
    *_tags(SIDE_BY_SIDE, "tag_current"),
    Binding(
        keys=("Return", "Enter"),
        action="accept_judge",
        label="Accept the judge's tag",
        short="the judge's tag",
        view=SIDE_BY_SIDE,
    ),
    *_moves(SIDE_BY_SIDE, "row"),
    Binding(
        keys=("A",),
        action="prefer",
        argument="left",
        label="A (left) is the better answer",
        short="left better",
        view=SIDE_BY_SIDE,
    ),
    Binding(
        keys=("B",),
        action="prefer",
        argument="right",
        label="B (right) is the better answer",
        short="right better",
        view=SIDE_BY_SIDE,
    ),
    Binding(
        keys=("T",),
        action="prefer",
        argument="tie",
        label="The answers are as good (a tie)",
        short="tie",
        view=SIDE_BY_SIDE,
    ),
    Binding(
        keys=("Esc", "Ctrl+W"),
        action="close",
        label="Close the side-by-side window (back to the review)",
        short="close",
        view=SIDE_BY_SIDE,
    ),
    # A disputed answer's points (ui/review/adjudication_view.py): a key decides the selected point.
    Binding(
        keys=("1",), action="decide", argument=Tag.CORRECT, label="Decide: correct", short="correct", view=ADJUDICATION
    ),
    Binding(
        keys=("2",),
        action="decide",
        argument=Tag.INCORRECT,
        label="Decide: incorrect",
        short="incorrect",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("3",),
        action="decide",
        argument=Tag.IRRELEVANT,
        label="Decide: irrelevant",
        short="irrelevant",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("4",), action="decide", argument=Tag.MISSING, label="Decide: missing", short="missing", view=ADJUDICATION
    ),
    Binding(
        keys=("0", "Del", "Backspace"),
        action="decide",
        argument=None,
        label="Leave the point out of the consensus (a point not every reviewer has)",
        short="leave out (a point not every reviewer has)",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("G",),
        action="reason",
        argument=GUIDELINE_UNCLEAR,
        label="Reason: guideline unclear",
        short="guideline unclear",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("E",),
        action="reason",
        argument=REVIEWER_ERROR,
        label="Reason: reviewer error",
        short="reviewer error",
        view=ADJUDICATION,
    ),
    Binding(
        keys=("B",),
        action="reason",
        argument=BOTH_DEFENSIBLE,
        label="Reason: both defensible",
        short="both defensible (reason for the next decision)",
        view=ADJUDICATION,
    ),
    *_moves(ADJUDICATION, "data point"),
    # The review window's menus (ui/review/window.py): shortcuts wherever the focus is in the window.
    Binding(keys=("Ctrl+Z",), action="undo", label="Undo", view=WINDOW),
    Binding(keys=("Ctrl+Shift+Z",), action="redo", label="Redo", view=WINDOW),
    Binding(
        keys=("Ctrl+Shift+N",), action="add_point", label="Make a data point of the selected answer text", view=WINDOW
    ),
    Binding(keys=("F2",), action="edit_point", label="Edit data point…", view=WINDOW),
    Binding(keys=("Ctrl+Shift+S",), action="split_point", label="Split data point…", view=WINDOW),
    Binding(keys=("Ctrl+Shift+M",), action="merge_point", label="Merge with next data point", view=WINDOW),
    Binding(keys=("Del",), action="delete_point", label="Delete data point", view=WINDOW),
    Binding(keys=("Ctrl+Shift+C",), action="comment_point", label="Comment on data point…", view=WINDOW),
    Binding(keys=("Ctrl+Return",), action="submit", label="Submit review", view=WINDOW),
    Binding(keys=("Ctrl+Shift+Return",), action="sign_off", label="Sign off this answer", view=WINDOW),
    Binding(keys=("Ctrl+F",), action="search", label="Search document", view=WINDOW),
    Binding(keys=("Ctrl+Down",), action="next_answer", argument=1, label="Next answer", view=WINDOW),
    Binding(keys=("Ctrl+Up",), action="next_answer", argument=-1, label="Previous answer", view=WINDOW),
    Binding(keys=("Ctrl+Shift+U",), action="least_certain_first", label="Least certain first", view=WINDOW),
    Binding(keys=("Ctrl+Shift+B",), action="side_by_side", label="Side by side with another generator", view=WINDOW),
    Binding(keys=("Ctrl+J",), action="run_judge", label="Run the judge…", view=WINDOW),
    Binding(keys=("Ctrl+E",), action="export", label="Export the reviewed set…", view=WINDOW),
    Binding(keys=("F1",), action="shortcuts", label="Keyboard shortcuts", view=WINDOW),
    Binding(keys=("Shift+F1",), action="guidelines", label="Review guidelines", view=WINDOW),
)


def binding(view: str, key: str) -> Binding | None:
    """What `key` does in `view` (None: nothing, the widget's own handling applies)."""
    return next((b for b in KEYMAP if b.view == view and key in b.keys), None)


def bound(view: str, action: str, argument: object = None) -> Binding:
    """The binding of an action in a view (the window's menus take their shortcuts from here)."""
    return next(b for b in KEYMAP if b.view == view and b.action == action and b.argument == argument)


def shortcut(action: str, argument: object = None) -> str:
    """The window shortcut of a menu action."""
    return bound(WINDOW, action, argument).keys[0]


def help_rows(view: str) -> list[tuple[str, str]]:
    """(keys, what they do) for the help sheet, in the table's order; J and K read "J / K"."""
    rows: list[tuple[str, str]] = []
    for b in KEYMAP:
        if b.view != view or (b.action == "move" and b.argument == -1):
            continue
        if b.action == "move":
            rows.append(("J / K", f"Next / previous {b.label.split(' ', 1)[1]}"))
        else:
            rows.append((b.keys[0] if b.keys[0] != "Return" else "Enter", b.label))
    return rows


def legend(view: str) -> str:
    """One line of the view's keys, as the legend under its table shows them: "1 correct · 2 incorrect …"."""
    parts: list[str] = []
    for b in KEYMAP:
        if b.view != view:
            continue
        keys = "Enter" if b.keys[0] == "Return" else b.keys[0]
        if b.action == "move":
            if b.argument == 1:
                parts.append("J/K move")
            continue
        parts.append(f"{keys} {b.short or b.label}")
    return " · ".join(parts)

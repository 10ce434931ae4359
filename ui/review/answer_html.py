"""The answer pane's rich text, as pure functions of the review state: the tag legend, the live
scores, the answer-level rubric results and the judge's rationale. No widget needed to test them."""

from __future__ import annotations

import html

from app.figures.rater_names import rationale_words, role_name
from app.figures.scores import shown
from app.judging.standing import Standing
from app.review import keymap
from app.review.service import ReviewPoint, ReviewState
from app.review.session import ReviewSession
from models.vocabulary import ReviewStatus
from ui.cell_words import TAG_STYLE
from ui.review.answer_view import CONTEXT_COLOUR, UNCOVERED_COLOUR

NOTE_COLOUR = "#555"  # what a value is made of, beside the value
RATER_COLOUR = "#666"  # who gave a rubric result
RATIONALE_COLOUR = "#444"  # the judge's rationale on the selected point


def legend_html() -> str:
    """The tag colours, the lead-in and uncovered-text marks, and the review keys."""
    legend = "  ".join(
        f"<span style='background:{colour}'>&nbsp;{html.escape(text)}&nbsp;</span>"
        for tag, (text, colour) in TAG_STYLE.items()
        if tag
    )
    legend += (
        f"  <span style='color:{CONTEXT_COLOUR}'><i>lead-in</i></span>"
        f"  <span style='color:{UNCOVERED_COLOUR}; text-decoration: underline'>in no data point</span>"
    )
    return f"{legend}<br><span style='color:{NOTE_COLOUR}'>{keys_html(keymap.REVIEW)}</span>"


def keys_html(view: str) -> str:
    """The view's keys as keys, never read as counts: "Keys: 1 = correct · 2 = incorrect …"."""
    parts: list[str] = []
    for b in keymap.bindings(view):
        if b.steps and b.argument != 1:
            continue
        key = "J / K" if b.steps else ("Enter" if b.keys[0] == "Return" else b.keys[0])
        if b.action is keymap.SideBySideKeys.close:
            key = " / ".join(b.keys)  # "Esc / Ctrl+W": either closes
        does = "next / previous" if b.steps else (b.short or b.label)
        parts.append(f"<b>{html.escape(key)}</b>&nbsp;=&nbsp;{html.escape(does)}")
    if view == keymap.REVIEW:
        parts.append(f"<b>{html.escape(keymap.shortcut(ReviewSession.undo))}</b>&nbsp;=&nbsp;undo")
    return "Keys: " + " · ".join(parts)


STATUS_WORDS = {  # the reviewer's review of the answer, in words
    ReviewStatus.UNREVIEWED: "not started",
    ReviewStatus.IN_REVIEW: "started",
    ReviewStatus.SUBMITTED: "submitted",
}


def scores_html(state: ReviewState) -> str:
    """LeMAJ's scores of the answer as tagged so far, the tag counts, the status and the review mode."""
    scores = state.scores
    mode = "blind review: the judge is hidden until you submit" if not state.judge_visible else "the judge is shown"
    tags = (
        f"{scores.correct} correct, {scores.incorrect} incorrect, {scores.irrelevant} irrelevant, "
        f"{scores.missing} missing"
    )
    return (
        f"<b>Correctness</b> {shown(scores.correctness)} · <b>Precision</b> {shown(scores.precision)} · "
        f"<b>Recall</b> {shown(scores.recall)} · <b>F1</b> {shown(scores.f1)}<br>"
        f"<span style='color:{NOTE_COLOUR}'>Your tags: {tags}. Your review: {STATUS_WORDS[state.status]}; "
        f"{mode}.</span>"
    )


def rubrics_html(state: ReviewState) -> str:
    """The answer-level rubrics (DeCE criteria as a checklist, labels for the others); empty if none."""
    lines = []
    for result in state.rubric_results:
        score = f" ({result.score:.2f})" if result.score is not None else ""
        lines.append(
            f"<b>{html.escape(result.rubric)}</b> {html.escape(result.label or '')}{score} "
            f"<span style='color:{RATER_COLOUR}'>— {html.escape(result.rater)}</span>"
        )
        for number, criterion in enumerate(result.payload.get("criteria", ()), start=1):
            mark = "☑" if criterion.get("satisfied") else "☐"
            lines.append(
                f"&nbsp;&nbsp;{mark} {number}. {html.escape(criterion.get('text', ''))} "
                f"<i>[{criterion.get('status')}]</i>"
            )
        if result.payload.get("bias_warning"):
            lines.append(f"&nbsp;&nbsp;⚠ {html.escape(result.payload['bias_warning'])}")
    return "<br>".join(lines)


def rationale_html(point: ReviewPoint, standing: Standing | None) -> str:
    """Why the judge tagged the point, then the judge's standing on a line of its own (human labels
    first, then planted errors); a demonstration model's links to the model picker (href "judge").
    Empty when the judge said nothing about the point."""
    why = point.judge_rationale or (f"tagged {point.judge_tag.value}" if point.judge_tag is not None else "")
    if not why:
        return ""
    who = role_name(point.judge)  # the claim checker by its one name, its verdict in words, not its ids
    text = f"<i>{who}: {html.escape(rationale_words(why))}</i>"
    if standing and point.judge_tag is not None:
        text += f'<br><span style="color: #5a5446;">The {who.lower()}’s standing: {html.escape(standing.text)}</span>'
    capable = ' — <a href="judge">use a capable model…</a>' if standing and standing.demonstration else ""
    return text + capable

"""The verifier's finding on the selected point: a badge with its reason, the words that differ
highlighted, and a link that shows the evidence passage in the document pane."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from app.judging.verification import Verifier, findings
from app.plain_text import plain_text
from models.checker.engine import AnswerReport, PointReport, finding_at

FIRST_AFTER_MS = 150  # the window's first answer is painted, then the verifier's finding is read
# An answer not read ahead (the reviewer moved on at once, a key held down) is painted first too: the claim
# checker takes 0.1 s an answer, and an answer passed over needs none.
UNREAD_AFTER_MS = 150

_BADGE = {
    "incorrect": ("⚑ Claim checker: incorrect", "#b00020"),
    "needs_review": ("⚠ Claim checker: needs review", "#8a5a00"),
    "quoted": ("✓ Claim checker: quotation confirmed, word for word", "#1b5e20"),
    "supported": ("✓ Claim checker: found in the document (not a reviewer's correct)", "#1b5e20"),
    "unconfirmed": ("· Claim checker: not confirmed — the closest passage is evidence, not a verdict", "#555"),
    "unverifiable": ("· Claim checker: nothing in the document to check this against", "#666"),
}
UNCHECKED = ("unconfirmed", "unverifiable")  # verdicts that say nothing of the point: a conclusion, if a quote precedes


class VerifierFlagLabel(QLabel):
    """Shows the verifier's verdict for one point; `passageRequested` goes to the document pane."""

    def __init__(self, show_passage: Callable[[str], None]) -> None:
        super().__init__(wordWrap=True)
        self.setOpenExternalLinks(False)
        self.linkActivated.connect(lambda link: show_passage(link.removeprefix("passage:")))
        self._cache: dict[str, AnswerReport] = {}
        self._verifier: Verifier | None = None  # a contract is prepared once for all its answers
        self._wanted: tuple[str, int, int] | None = None  # the point whose finding is shown
        self._waited = False  # the first finding waited for the window's first frame
        self._first: Callable[[], None] | None = None  # and shows it then
        # An answer not read ahead: its finding once painted (the timer goes with the label, and restarts
        # at each move: a key held down reads none of the answers it passes).
        self._later = QTimer(self, singleShot=True, interval=UNREAD_AFTER_MS)
        self._later.timeout.connect(lambda: self._show_wanted(self._later_project, self._wanted))
        self._later_project = None

    def show_point(self, project, answer_id: str, start: int | None, end: int | None) -> None:
        if start is None or end is None:
            self._wanted = None
            self.setText("")
            return
        self._wanted = (answer_id, start, end)
        if not self._waited and answer_id not in self._cache:  # the claim checker loads in a second or more:
            # not before the window's first frame
            self._waited = True
            self.setText("")
            self._first = lambda: self._show_wanted(project, (answer_id, start, end))
            if self.isVisible():
                QTimer.singleShot(FIRST_AFTER_MS, self._first)
            return
        if answer_id not in self._cache:
            self.setText("")
            self._later_project = project
            self._later.start()
            return
        report = self._cache[answer_id]
        point = finding_at(report, start, end)  # the rule the exports and `assay show` use
        self.setText(describe(point, report) if point else "")

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._first is not None:  # the window's first answer: its finding after the first frame
            QTimer.singleShot(FIRST_AFTER_MS, self._first)

    def _show_wanted(self, project, wanted: tuple[str, int, int] | None) -> None:
        self._first = None
        if wanted is not None and self._wanted == wanted:  # still the selected point
            self.prepare(project, wanted[0])
            self.show_point(project, *wanted)

    def prepare(self, project, answer_id: str) -> None:
        """Find (once) what the verifier says about the answer's points."""
        if answer_id not in self._cache:
            if self._verifier is None or self._verifier.sessions is not project.sessions:
                self._verifier = Verifier(project.sessions)
            self._cache[answer_id] = findings(project.sessions, answer_id, self._verifier)

    def forget(self, answer_id: str | None = None) -> None:
        self._cache.clear() if answer_id is None else self._cache.pop(answer_id, None)


def describe(point: PointReport, answer: AnswerReport | None = None) -> str:
    """Rich text: the badge, then each reason with the claim and the document side by side. A quotation
    confirmed says what was checked (the quotation) and what was not (what the answer draws from it);
    a point the checker could not confirm after a quotation of the same answer is said to be a
    conclusion drawn from it, unchecked."""
    title, colour = _BADGE.get(point.verdict, (point.verdict, "#666"))
    lines = [f'<b style="color:{colour}">{html.escape(title)}</b>']
    if (not point.reasons or point.verdict == "quoted") and point.passage:  # the evidence, to read for oneself
        lines[0] += f" · {_link(point.passage, 'show ')}"
    if point.verdict == "quoted" and point.quote:
        lines += _quoted_lines(point)
    elif point.verdict in UNCHECKED and answer is not None and (source := _quoted_before(point, answer)):
        lines.append(
            f"Not checked: what the answer concludes from the quotation before it (“{html.escape(_short(source))}”, "
            "confirmed word for word). The claim checker confirms the words quoted, not the conclusions drawn."
        )
    if point.probability is not None and point.verdict != "quoted":
        said = f"claim checker: {point.probability:.0%} likely that the document does not support this"
        if point.verdict == "incorrect":
            said += f", {point.contradiction:.0%} of that a contradiction"
        elif point.verdict == "unconfirmed" and point.reasons:  # a rule objects; the checker weighed it
            said += "; it weighs the objection below, which alone flags too many correct answers"
        lines.append(f"<small>{html.escape(said)}</small>")
    if point.definitions:  # the definitions the claim relies on, one click away
        links = ", ".join(f"“{html.escape(d['term'])}” ({_link(d['passage'])})" for d in point.definitions)
        lines.append(f"<small>read with the definitions of {links}</small>")
    for reason in point.reasons:
        if point.verdict == "quoted":  # an objection to where the quotation is said to come from, not to it
            where = reason.get("passage")
            lines.append(
                f"<small>Its citation: “{html.escape(str(reason['claim']))}” — "
                f"{html.escape(str(reason['document']))}{' · ' + _link(where, 'show ') if where else ''}</small>"
            )
            continue
        claim, document = _highlighted(reason)
        where = reason.get("passage")
        link = f' · <a href="passage:{html.escape(where)}">show {html.escape(where)}</a>' if where else ""
        lines.append(
            f"{html.escape(reason['check'].replace('_', ' '))}: the answer says “{claim}”, "
            f"the document “{document}”{link}"
        )
        if reason.get("normalisations"):
            lines.append(f"<small>normalised: {html.escape(', '.join(reason['normalisations']))}</small>")
    return "<br>".join(lines)


def _link(passage: str, verb: str = "") -> str:
    where = html.escape(passage)
    return f'<a href="passage:{where}">{verb}{where}</a>'


def _quoted_lines(point: PointReport) -> list[str]:
    """What confirming a quotation checked, and what it left unchecked."""
    quote = point.quote or {}
    words = "the words in quotation marks are" if quote.get("marked", True) else "the point's words are"
    checked = f"Checked: {words} the document's, word for word, in {_link(quote['passage'])}"
    forgiven = quote.get("differences") or []
    if forgiven:
        checked += (
            " (trivial differences: "
            + ", ".join(f"“{html.escape(mine)}” for “{html.escape(theirs)}”" for mine, theirs in forgiven)
            + ")"
        )
    rest = quote.get("rest") or ""
    unchecked = (
        f"Not checked: what the point says besides the quotation, “{html.escape(_short(rest))}”."
        if rest
        else "Not checked: whether this clause answers the question, and any conclusion drawn from it."
    )
    return [checked + ".", unchecked]


def _quoted_before(point: PointReport, answer: AnswerReport) -> str | None:
    """The last quotation the checker confirmed before this point in the same answer, if any."""
    before = [p for p in answer.points if p.end <= point.start and p.verdict == "quoted" and p.quote]
    return str(before[-1].quote["quote"]) if before and before[-1].quote else None


def _short(text: str, most: int = 90) -> str:
    text = " ".join(plain_text(text).split())
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0] + " …"


def _highlighted(reason: dict) -> tuple[str, str]:
    """Claim and document text with the words that differ marked."""
    # the answer's Markdown (**not**) as the words it marks: the reason quotes the answer as read
    claim, document = html.escape(plain_text(reason["claim"])[:300]), html.escape(reason["document"][:300])
    for mine, theirs in reason.get("differences", []):
        if mine:
            claim = _mark_words(claim, mine, "#fdd")
        if theirs:
            document = _mark_words(document, theirs, "#dfd")
    return claim, document


def _mark_words(text: str, words: str, colour: str) -> str:
    """Mark the first run of `words` (canonical, lower case) in `text`, matching case-insensitively."""
    import re

    pattern = r"\W+".join(re.escape(w) for w in words.split())
    found = re.search(pattern, text, re.IGNORECASE)
    if not found:
        return text
    return f'{text[: found.start()]}<span style="background:{colour}">{found.group(0)}</span>{text[found.end() :]}'

"""The verifier's finding on the selected point: a badge with its reason, the words that differ
highlighted, and a link that shows the evidence passage in the document pane.

The claim checker never runs on the window's thread: the label asks the review session for an answer's
findings (ReviewSession.claim_findings) in a ClaimCheckWorker on a pool thread of their own, and shows
them when the worker's signal brings them, if the answer is still the one shown. An answer's findings
are asked for once, when it is read ahead or once its first frame is painted.

The pool belongs to no widget: a pool is waited for when it is destroyed, and a window destroyed from
its Python event() holds the interpreter's lock the worker needs to finish. The window waits for it
(stop_and_wait) as it closes instead."""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import cache, partial

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import QLabel

from app.errors import AssayError
from app.plain_text import plain_text
from app.review.session_project import ClaimsOf
from models.checker.report import AnswerReport, PointReport, finding_at
from models.verifier import INCORRECT, NEEDS_REVIEW, QUOTED, SUPPORTED, UNCONFIRMED, UNVERIFIABLE

FIRST_AFTER_MS = 150  # the window's first answer is painted, then the verifier's finding is asked for
# An answer not read ahead (the reviewer moved on at once, a key held down) is painted first too: the claim
# checker takes 0.1 s an answer of the machine's time, and an answer passed over needs none.
UNREAD_AFTER_MS = 150
SHOWN_FIRST = 1  # the pool's priority of the answer shown: before any answer read ahead that waits
KEPT = 256  # answers whose findings are kept: a day's reviewing, in a few megabytes

_BADGE = {
    INCORRECT: ("⚑ Claim checker: incorrect", "#b00020"),
    NEEDS_REVIEW: ("⚠ Claim checker: needs review", "#8a5a00"),
    QUOTED: ("✓ Claim checker: quotation confirmed, word for word", "#1b5e20"),
    SUPPORTED: ("✓ Claim checker: found in the document (not a reviewer's correct)", "#1b5e20"),
    UNCONFIRMED: ("· Claim checker: not confirmed — the closest passage is evidence, not a verdict", "#555"),
    UNVERIFIABLE: ("· Claim checker: nothing in the document to check this against", "#666"),
}
# The values check's reasons, the document's value first.
_VALUES = {
    "value_mismatch": "The document says “{document}”; the answer says “{claim}”",
    "competing_values": "Values compete: the document gives “{document}” for this; the answer says “{claim}”",
}
UNCHECKED = (UNCONFIRMED, UNVERIFIABLE)  # verdicts that say nothing of the point: a conclusion, if a quote precedes


def _no_claims(_answer_id: str) -> None:
    return None


@cache
def checks_pool() -> QThreadPool:
    """The claim checks' pool: one answer at a time (the checker is one model, the machine is shared)."""
    pool = QThreadPool()
    pool.setMaxThreadCount(1)
    return pool


class ClaimCheckSignals(QObject):
    checked = Signal(int, str, object)  # the label's generation, the answer id, its AnswerReport (or None)
    failed = Signal(int, str, str)  # the label's generation, the answer id, the sentence that says why


class ClaimCheckWorker(QRunnable):
    """Reads the claim checker's findings on one answer on a pool thread; the result reaches the window's
    thread through `signals`."""

    def __init__(self, check: ClaimsOf, generation: int, answer_id: str) -> None:
        super().__init__()
        self.check, self.generation, self.answer_id = check, generation, answer_id
        self.signals = ClaimCheckSignals()

    def run(self) -> None:
        try:
            report = self.check(self.answer_id)
        except AssayError as exc:
            self.signals.failed.emit(self.generation, self.answer_id, str(exc))
            return
        except Exception as exc:  # a bug: said under the points rather than kill a pool thread silently
            self.signals.failed.emit(self.generation, self.answer_id, f"stopped on an unexpected error: {exc!r}")
            return
        self.signals.checked.emit(self.generation, self.answer_id, report)


class VerifierFlagLabel(QLabel):
    """Shows the verifier's verdict for one point; `show_passage` goes to the document pane. `check` reads
    an answer's findings (the review session's claim_findings); it runs on the label's own pool thread."""

    answerChecked = Signal(str)  # noqa: N815 - the findings on an answer arrived (its id), shown if it is shown

    def __init__(self, show_passage: Callable[[str], None], check: ClaimsOf = _no_claims) -> None:
        super().__init__(wordWrap=True)
        self.setOpenExternalLinks(False)
        self.linkActivated.connect(lambda link: show_passage(link.removeprefix("passage:")))
        self.check = check
        self._cache: dict[str, AnswerReport | None] = {}
        self._failed: dict[str, str] = {}  # answers the checker could not read: why
        self._asked: set[str] = set()  # answers being checked (the pool owns their workers)
        self._generation = 0  # what was asked before the project file was replaced is dropped
        self._stopped = False  # the window closed: nothing more is asked for
        self._wanted: tuple[str, int, int] | None = None  # the point whose finding is shown
        self._waited = False  # the first finding waited for the window's first frame
        self._first: Callable[[], None] | None = None  # and is asked for then
        # An answer not read ahead: its findings are asked for once it is painted (the timer goes with the label,
        # and restarts at each move: a key held down asks for none of the answers it passes).
        self._later = QTimer(self, singleShot=True, interval=UNREAD_AFTER_MS)
        self._later.timeout.connect(lambda: self._ask_wanted(self._wanted))

    def show_point(self, answer_id: str, start: int | None, end: int | None) -> None:
        if start is None or end is None:
            self._wanted = None
            self.setText("")
            return
        self._wanted = (answer_id, start, end)
        if answer_id in self._cache or answer_id in self._failed:
            self._show_wanted()
            return
        self.setText("")
        if not self._waited:  # the claim checker loads in a second or more: not before the window's first frame
            self._waited = True
            self._first = partial(self._ask_wanted, self._wanted)
            if self.isVisible():
                QTimer.singleShot(FIRST_AFTER_MS, self._first)
            return
        if answer_id not in self._asked:
            self._later.start()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._first is not None:  # the window's first answer: its finding after the first frame
            QTimer.singleShot(FIRST_AFTER_MS, self._first)

    def _ask_wanted(self, wanted: tuple[str, int, int] | None) -> None:
        self._first = None
        if wanted is not None and self._wanted == wanted:  # still the selected point
            self.prepare(wanted[0])

    def prepare(self, answer_id: str) -> None:
        """Have the claim checker read the answer (once), off the window's thread; an answer read ahead
        comes after the one shown, whose findings are then asked for at once (the reviewer is reading)."""
        shown = self._wanted[0] if self._wanted is not None else None
        if shown is not None and shown != answer_id:
            self._ask(shown, SHOWN_FIRST)
        self._ask(answer_id, SHOWN_FIRST if answer_id == shown else 0)

    def _ask(self, answer_id: str, priority: int) -> None:
        if self._stopped or answer_id in self._cache or answer_id in self._failed or answer_id in self._asked:
            return
        worker = ClaimCheckWorker(self.check, self._generation, answer_id)
        worker.signals.checked.connect(self._on_worker_checked)
        worker.signals.failed.connect(self._on_worker_failed)
        self._asked.add(answer_id)
        checks_pool().start(worker, priority)

    def _on_worker_checked(self, generation: int, answer_id: str, report: AnswerReport | None) -> None:
        if not self._came(generation, answer_id):
            return
        if len(self._cache) >= KEPT:
            self._cache.pop(next(iter(self._cache)))
        self._cache[answer_id] = report
        self._show_if_wanted(answer_id)

    def _on_worker_failed(self, generation: int, answer_id: str, sentence: str) -> None:
        if self._came(generation, answer_id):
            self._failed[answer_id] = sentence
            self._show_if_wanted(answer_id)

    def _came(self, generation: int, answer_id: str) -> bool:
        """A worker's result arrived: whether it is of the project file shown (else it is dropped)."""
        if generation != self._generation:
            return False
        self._asked.discard(answer_id)
        return True

    def _show_if_wanted(self, answer_id: str) -> None:
        """Show the findings just arrived if their answer is the one shown; else they wait in the cache."""
        if self._wanted is not None and self._wanted[0] == answer_id:
            self._show_wanted()
        self.answerChecked.emit(answer_id)

    def _show_wanted(self) -> None:
        assert self._wanted is not None
        answer_id, start, end = self._wanted
        if answer_id in self._failed:
            self.setText(f'<span style="color:#666">· Claim checker: {html.escape(self._failed[answer_id])}</span>')
            return
        report = self._cache.get(answer_id)
        point = finding_at(report, start, end) if report is not None else None  # the rule exports and `show` use
        self.setText(describe(point, report) if point else "")

    def forget(self, answer_id: str | None = None) -> None:
        """Findings read before are stale (the project file was replaced, or one answer changed): asked again."""
        if answer_id is not None:
            self._cache.pop(answer_id, None)
            self._failed.pop(answer_id, None)
            return
        self._generation += 1  # what is on its way now is of the file replaced
        self._cache.clear()
        self._failed.clear()
        self._asked.clear()

    def stop_and_wait(self, ms: int = 60_000) -> bool:
        """On closing the window: ask for nothing more, and wait for the answer being checked."""
        self._stopped = True
        self._later.stop()
        self._first = None
        return checks_pool().waitForDone(ms)


def describe(point: PointReport, answer: AnswerReport | None = None) -> str:
    """Rich text: the badge, then each reason with the claim and the document side by side. A quotation
    confirmed says what was checked (the quotation) and what was not (what the answer draws from it);
    a point the checker could not confirm after a quotation of the same answer is said to be a
    conclusion drawn from it, unchecked."""
    title, colour = _BADGE.get(point.verdict, (point.verdict, "#666"))
    lines = [f'<b style="color:{colour}">{html.escape(title)}</b>']
    if (not point.reasons or point.verdict == QUOTED) and point.passage:  # the evidence, to read for oneself
        lines[0] += f" · {_link(point.passage, 'show ')}"
    if point.verdict == QUOTED and point.quote:
        lines += _quoted_lines(point)
    elif point.verdict in UNCHECKED and answer is not None and (source := _quoted_before(point, answer)):
        lines.append(
            f"Not checked: what the answer concludes from the quotation before it (“{html.escape(_short(source))}”, "
            "confirmed word for word). The claim checker confirms the words quoted, not the conclusions drawn."
        )
    if point.probability is not None and point.verdict != QUOTED:
        said = f"claim checker: {point.probability:.0%} likely that the document does not support this"
        if point.verdict == INCORRECT:
            said += f", {point.contradiction:.0%} of that a contradiction"
        elif point.verdict == UNCONFIRMED and point.reasons:  # a rule objects; the checker weighed it
            said += "; it weighs the objection below, which alone flags too many correct answers"
        lines.append(f"<small>{html.escape(said)}</small>")
    if point.reading:  # which reading decided: the contract's values, a rule, or a model
        lines.append(f"<small>Decided by {html.escape(point.reading)}</small>")
    if point.definitions:  # the definitions the claim relies on, one click away
        links = ", ".join(f"“{html.escape(d['term'])}” ({_link(d['passage'])})" for d in point.definitions)
        lines.append(f"<small>read with the definitions of {links}</small>")
    for reason in point.reasons:
        if point.verdict == QUOTED:  # an objection to where the quotation is said to come from, not to it
            where = reason.get("passage")
            lines.append(
                f"<small>Its citation: “{html.escape(str(reason['claim']))}” — "
                f"{html.escape(str(reason['document']))}{' · ' + _link(where, 'show ') if where else ''}</small>"
            )
            continue
        claim, document = _highlighted(reason)
        where = reason.get("passage")
        link = f' · <a href="passage:{html.escape(where)}">show {html.escape(where)}</a>' if where else ""
        if reason["check"] in _VALUES:  # the document's value first: it is what the lawyer checks against
            lines.append(_VALUES[reason["check"]].format(document=document, claim=claim) + link)
            continue
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
    before = [p for p in answer.points if p.end <= point.start and p.verdict == QUOTED and p.quote]
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

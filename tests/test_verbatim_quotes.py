"""A point that quotes its document word for word is confirmed as quoted (issue 56): on the real sample,
the first answer a lawyer reads shows its quotation of clause 3 confirmed and its conclusion unchecked,
and no point whose quotation is the document's own words is flagged for it."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

from app.judging.verification import Verifier, verify_project
from app.project import Project
from app.workspace import Workspace
from models.segmentation import segment_answer
from models.verifier import INCORRECT, QUOTED, Document, Source
from models.verifier.checks.verbatim import trivial, verbatim_quote
from models.verifier.text import fragments, quotations, words
from models.vocabulary import Tag
from storage import judgements, raters

FIRST = "contractnli-027"  # the DoiT NDA: "destroy or return … upon termination?", the sample's first answer
CLAUSE_3 = "All CONFIDENTIAL INFORMATION furnished hereunder shall be returned at the conclusion of each meeting"
NDA = Document(
    [
        Source(
            "par_1",
            "3. All CONFIDENTIAL INFORMATION furnished hereunder shall be returned at the conclusion of "
            "each meeting between Vendor and the State.",
        ),
        Source(
            "par_2",
            "These restrictions on the use or disclosure of CONFIDENTIAL INFORMATION shall not apply to "
            "any CONFIDENTIAL INFORMATION which is independently developed by Vendor.",
        ),
        Source("par_3", "EFCA shall continue to the bound by the undertakings set out in clauses 2, 4 and 5."),
        Source("par_4", "The Vendor shall pay the sum of sixty (60) dollars within thirty (30) days."),
    ]
)


def test_a_verbatim_quotation_is_confirmed_and_what_the_answer_adds_is_said_unchecked() -> None:
    found = verbatim_quote(f"Section 3 states that “{CLAUSE_3} between Vendor and the State.”", NDA)
    assert found is not None and found.passage == "par_1" and found.rest == ""  # an attribution adds nothing
    found = verbatim_quote(f"So the Vendor must return it: “{CLAUSE_3}.”", NDA)
    assert found is not None and found.rest == "So the Vendor must return it"  # a conclusion: not checked
    assert verbatim_quote("Clause 3 requires the return of information at the end of each meeting.", NDA) is None


@pytest.mark.parametrize(
    ("claim", "quoted"),
    [
        ("“This restriction on the use or disclosure of CONFIDENTIAL INFORMATION shall not apply”", True),
        ("“EFCA shall continue to be bound by the undertakings set out in clauses 2, 4 and 5.”", True),  # its typo
        ("“These restrictions on the use or disclosure of CONFIDENTIAL INFORMATION shall apply”", False),  # "not"
        ("“The Vendor may pay the sum of sixty (60) dollars within thirty (30) days.”", False),  # "shall"
        ("“The Vendor shall pay the sum of sixty (60) dollars within forty (40) days.”", False),  # a number
        ("“The Purchaser shall pay the sum of sixty (60) dollars within thirty (30) days.”", False),  # a party
    ],
)
def test_trivial_differences_are_no_misquote_and_a_changed_clause_is(claim: str, quoted: bool) -> None:
    assert (verbatim_quote(claim, NDA) is not None) is quoted


def test_what_a_trivial_difference_is() -> None:
    assert trivial("this restriction", "these restrictions") and trivial("you", "your") and trivial("be", "the")
    assert not trivial("may", "shall") and not trivial("thirty", "sixty") and not trivial("30", "60")
    assert not trivial("", "not") and not trivial("licensee", "licensor")


def test_the_first_answer_shows_its_quotation_confirmed_and_its_conclusion_unchecked(
    qtbot, sample_project: Project
) -> None:
    from ui.review.verifier_flags import describe

    (report,) = verify_project(sample_project.sessions, [FIRST])
    answer_text = sample_project.answer(FIRST).text
    quote = next(p for p in report.points if CLAUSE_3 in p.text)
    assert quote.verdict == QUOTED and quote.quote is not None and quote.passage == "par_8"
    shown = describe(quote, report)
    assert "quotation confirmed" in shown and "Checked: the words in quotation marks" in shown
    assert "Not checked" in shown
    conclusion = next(p for p in report.points if p.text.startswith("This imposes a return obligation"))
    assert conclusion.verdict != INCORRECT
    said = describe(conclusion, report)
    assert "Not checked: what the answer concludes from the quotation before it" in said
    with sample_project.sessions() as session:  # stored as the claim checker's `correct`, with its lead-in
        checker = raters.rater_named(session, "verifier")
        stored = judgements.data_points_of(session, FIRST, checker.id)
    tags = {p.text: p.tag for p in stored}
    assert tags[quote.text] is Tag.CORRECT
    lead_ins = {(s.start, s.end): (s.context_start, s.context_end) for s in segment_answer(answer_text)}
    assert lead_ins[(quote.start, quote.end)] == (0, len("Based solely on the provided context (Section 3):"))
    assert {(p.span_start, p.span_end): (p.context_start, p.context_end) for p in stored} == lead_ins


def test_a_point_that_is_only_a_quotation_is_decided_by_it_and_no_encoder_reads_it() -> None:
    """Its verdict could not change with a model's (readings.only_quoted): the pane says the quotation alone
    decided, with no model's probability, and the encoders, which cost most of a check, read only the point
    that says something of its own."""
    from models.checker.engine import ClaimEngine, Passage

    engine = ClaimEngine()
    assert engine.encoders is not None, engine.note
    prepared = engine.prepare([Passage(p.id, p.text) for p in NDA.passages], [])
    assert prepared.evidence.kind == "contract"  # where the encoders read claims
    quote = f"Section 3 states that “{CLAUSE_3} between Vendor and the State.”"
    own = "The Vendor must hand back every document it was shown once each meeting with the State is over."
    text = f"{quote} {own}"
    only, said = engine.assess(prepared, text, [(0, len(quote)), (len(quote) + 1, len(text))], [[], []])
    assert only.verdict == QUOTED and only.passage == "par_1"
    assert only.reading == "the quotation alone, found word for word"
    assert only.probability is None and only.quote is not None and not only.quote["rest"]
    assert said.verdict != QUOTED and said.probability is not None
    read = {claim for claim, _passage in engine.encoders._judged}
    assert own in read and quote not in read


def _quotes_word_for_word(claim: str, document: Document) -> bool:
    """Every quotation of six words or more, each piece between ellipses, occurs in the document as written."""
    found = [q for q in quotations(claim, min_words=2) if len(words(q.text)) >= 6]
    pieces = [piece for q in found for piece in fragments(q.text) if len(words(piece)) >= 2]
    return bool(pieces) and all(document.find_words(words(piece)) for piece in pieces)


def test_on_the_sample_no_verbatim_quotation_is_flagged(sample_project: Project) -> None:
    """Every point of the sample whose quotations are its document's words is confirmed as quoted, unless it
    is flagged for where it says the quotation is from (a section that does not hold it: issue 67) or for
    what it says besides its quotation; a flagged point keeps its quotation confirmed beside the flag."""
    quoting = [
        a for a in sample_project.answers() if re.search(r"[“\"][^”\"]{30,}[”\"]", sample_project.answer(a.id).text)
    ]
    verifier = Verifier(sample_project.sessions)
    verbatim, flagged = 0, []
    with sample_project.sessions() as session:
        for answer in quoting:
            report = verifier.verify_answer(session, answer.id)
            document = verifier.document(session, sample_project.answer(answer.id).document_id)[0].document
            for point in report.points:
                if not _quotes_word_for_word(point.text, document):
                    continue
                verbatim += 1
                if point.verdict != QUOTED:
                    attribution = any(r["check"] == "bad_citation" for r in point.reasons)
                    flagged.append((answer.id, point.verdict, point.text[:80], point.quote, attribution))
    assert verbatim >= 100, "the sample's answers quote their contracts often"
    assert all(v == INCORRECT and q and (q["rest"] or attribution) for _a, v, _t, q, attribution in flagged), flagged
    assert sum(not attribution for *_, attribution in flagged) <= 1, flagged


def test_the_cited_column_keeps_the_answers_citations_apart_from_the_checkers_evidence(
    qtbot, sample_project: Project
) -> None:
    """Issue 56: the checker's closest passages filled the citations column as if the answer had cited them. The
    first answer's points all come to its own citation (par_8); the next answers' points find others."""
    from ui.review.window import ReviewWindow

    opened = [a.id for a in sample_project.answers()][:6]
    verify_project(sample_project.sessions, opened)
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    model = window.answer_pane.points_model
    marked = 0
    for answer_id in opened:
        window.open_answer(answer_id)
        cells = {p.point.text: model.item(row, model.CITED).text() for row, p in enumerate(window.state.points)}
        if answer_id == FIRST:
            quote = next(text for text in cells if CLAUSE_3 in text)
            assert cells[quote].splitlines()[0] == "Section 3 → par_8"  # written in the point (and in its lead-in)
        lines = [line for cell in cells.values() for line in cell.splitlines()]
        # every line is the answer's citation (where it points) or the checker's evidence, marked as such
        assert all("→" in line or line.startswith("evidence par_") for line in lines), lines
        marked += sum(line.startswith("evidence par_") for line in lines)
    assert marked, "the checker's evidence is shown in the column, marked"
    assert "evidence" in str(model.headerData(model.CITED, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole))

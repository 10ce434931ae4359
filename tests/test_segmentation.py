"""Every assertion of a real answer is a data point, read with its lead-in (issue 14).

The answers are those of the shared LegalBench-RAG set (resources/sample holds the same answers).
"""

from __future__ import annotations

import json
import textwrap

import pytest

from app.cli import main
from app.project import SAMPLE_DATASET, Project
from models.segmentation import Segment, coverage, segment_answer

ANSWERS = {
    row["id"]: row["answer"]
    for row in map(json.loads, (SAMPLE_DATASET / "qa.jsonl").read_text(encoding="utf-8").splitlines())
}
CUAD_004 = (
    "Yes. The Agreement contains an anti‑assignment clause.  Specifically, under the “Assignment” provision:  \n\n"
    "‑ “MA may not assign, sell, lease or otherwise transfer in whole or in part any of the rights granted "
    "pursuant to this Agreement without prior written approval of Company.”  \n\n"
    "This prohibits the Marketing Affiliate (MA) from transferring its rights under the Agreement except with "
    "the Company’s written consent."
)
CUAD_024 = (
    "Based solely on the language you’ve provided:\n\n• License Term: “Perpetual, unlimited runs”  \n"
    "• Other Term: “2 years – Commencing: November 15, 2012”  \n\nThe text does not specify any renewal term.  "
    "There is no mention of an option to renew or the length of any renewal period."
)


def texts(answer: str) -> list[str]:
    return [s.text for s in segment_answer(answer)]


def point(answer: str, text: str) -> Segment:
    """The one data point whose text is `text`."""
    found = [s for s in segment_answer(answer) if s.text == text]
    assert len(found) == 1, f"{text!r} is not exactly one point of {texts(answer)}"
    return found[0]


def test_a_verdict_and_the_conclusion_are_points_and_the_lead_in_is_the_quotes_context() -> None:
    assert texts(CUAD_004)[:2] == ["Yes.", "The Agreement contains an anti‑assignment clause."]
    quote = point(CUAD_004, texts(CUAD_004)[2])
    assert quote.text.startswith("“MA may not assign") and quote.text.endswith("Company.”")  # U+2011 bullet
    assert quote.context == "Specifically, under the “Assignment” provision:"
    assert texts(CUAD_004)[3].startswith("This prohibits")


def test_label_value_facts_are_points() -> None:
    assert point(CUAD_024, "License Term: “Perpetual, unlimited runs”").context == (
        "Based solely on the language you’ve provided:"
    )
    assert "Other Term: “2 years – Commencing: November 15, 2012”" in texts(CUAD_024)
    assert "Term: During the License Term" in texts(ANSWERS["cuad-038"])


def test_list_items_are_read_with_their_lead_in() -> None:
    answer = ANSWERS["contractnli-001"]
    know_how = point(answer, "3. Know‑how")
    assert know_how.context == "Specifically, it includes (but is not limited to):"
    assert answer[know_how.context_start : know_how.context_end] == know_how.context
    assert texts(answer)[:3] == [
        "No.",
        "The definition of “Confidential Information” is not limited to technical information.",
        "Instead, it expressly encompasses both technical and non‑technical categories.",
    ]
    assert point(answer, "5. Software").context == know_how.context


def test_section_titles_are_context_not_points() -> None:
    answer = ANSWERS["cuad-000"]
    assert not any("Term and Expiration" in t or "Renewal Provision" in t for t in texts(answer))
    renewal = point(answer, texts(answer)[3])
    assert renewal.text.startswith("Each renewal likewise expires") and renewal.context == "2. Renewal Provision"
    # The answer's opening lead-in reads with the first title under it.
    first = segment_answer(answer)[0]
    assert first.context.startswith("Based solely on the clause you’ve provided:") and first.context.endswith(
        "1. Term and Expiration"
    )


@pytest.mark.parametrize("bullet", ["‑", "◦", "▪", "·", "●", "•", "-", "*", "–", "a.", "(ii)", "iv.", "B)"])
def test_bullets_of_every_kind_make_items(bullet: str) -> None:
    answer = CUAD_024.replace("• ", f"{bullet} ")
    term = next(s for s in segment_answer(answer) if "Perpetual" in s.text)
    assert term.text.endswith("License Term: “Perpetual, unlimited runs”")
    assert term.context == "Based solely on the language you’ve provided:"
    assert coverage(answer, segment_answer(answer)) == 1.0


def test_nested_lists_read_with_the_lead_ins_above_them() -> None:
    answer = ANSWERS["cuad-038"]  # Marks License > Scope of Use: ... to: > 1. display ... either > a. / b.
    context = point(answer, "a. with the Licensed Content for source attribution; or").context
    assert context.startswith("Scope of Use: Licensor’s Marks as designated by Licensor to:")
    assert context.endswith("1. display on the Licensee Site either")
    assert point(answer, "2. comply with Licensee’s express obligations under the Agreement").context == (
        "Scope of Use: Licensor’s Marks as designated by Licensor to:"
    )


def test_markdown_emphasis_stays_in_the_point_and_headings_become_context() -> None:
    answer = ANSWERS["contractnli-000"]
    assert texts(answer)[0] == (
        "Based on the provided clause, the Agreement explicitly does **not** grant the Receiving Party any "
        "proprietary rights in the Confidential Information."
    )
    marked = "### Answer\n\n" + answer.replace("These provisions", "**Conclusion**\nThese provisions")
    points = segment_answer(marked)
    assert points[0].context == "Answer" and points[0].text == texts(answer)[0]
    assert points[-1].context == "Conclusion" and points[-1].text.startswith("These provisions make clear")
    assert coverage(marked, points) == 1.0


def test_quoted_contract_text_stays_in_the_point_that_quotes_it() -> None:
    answer = (
        "Yes. Keep states: “We use secure servers when you place orders. All credit card information you supply "
        "is transmitted via Secure Socket Layer (SSL) technology and then encrypted within our databases.” (Context)"
    )
    assert texts(answer) == ["Yes.", answer[5:]]


def test_a_citation_line_under_a_point_belongs_to_it() -> None:
    answer = ANSWERS["cuad-008"]
    assert any(t.startswith("“Company’s liability") and t.endswith("(Context, ¶1)") for t in texts(answer))
    assert "(Context, ¶1)" not in texts(answer)


def test_every_sample_answer_is_covered_by_short_points_at_exact_offsets() -> None:
    words, covered, total = [], 0.0, 0
    for answer in ANSWERS.values():
        segments = segment_answer(answer)
        for s in segments:
            assert answer[s.start : s.end] == s.text and s.text.strip() == s.text
            if s.context_start is not None:
                assert s.context_end is not None and s.context_end <= s.start
                assert len(s.context.split()) <= 60
            words.append(len(s.text.split()))
        letters = sum(ch.isalnum() for ch in answer)
        covered, total = covered + coverage(answer, segments) * letters, total + letters
    words.sort()
    assert covered / total >= 0.99
    assert words[int(0.95 * len(words))] <= 45


def test_segment_command_prints_points_with_their_context(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", sample_project.url, "segment", "--json", "--answer", "contractnli-001"]) == 0
    report = json.loads(capsys.readouterr().out)
    [answer] = report["answers"]
    assert answer["answer_id"] == "contractnli-001" and answer["coverage"] == report["coverage"] == 1.0
    know_how = next(p for p in answer["points"] if p["text"] == "3. Know‑how")
    text = ANSWERS["contractnli-001"]
    assert text[know_how["start"] : know_how["end"]] == "3. Know‑how"
    assert text[know_how["context_start"] : know_how["context_end"]].startswith("Specifically, it includes")


def test_a_reviewer_starts_from_points_that_carry_their_lead_in(sample_project: Project) -> None:
    from app.review.service import ReviewService

    state = ReviewService(sample_project, "ana").open("contractnli-001")
    know_how = next(p.point for p in state.points if p.point.text == "3. Know‑how")
    text = state.answer.text
    assert text[know_how.context_start : know_how.context_end].startswith("Specifically, it includes")


def test_an_answer_wrapped_at_a_fixed_width_is_cut_as_the_same_sentences() -> None:
    answer = ANSWERS["cuad-000"]
    wrapped = "\n".join(
        line
        for paragraph in answer.split("\n")
        for line in textwrap.wrap(paragraph, 70, subsequent_indent=" " * (len(paragraph) - len(paragraph.lstrip(" -"))))
        or [""]
    )
    assert [" ".join(t.split()) for t in texts(wrapped)] == [" ".join(t.split()) for t in texts(answer)]


def test_fact_lines_without_bullets_are_each_a_point() -> None:
    answer = CUAD_024.replace("• ", "")
    assert point(answer, "License Term: “Perpetual, unlimited runs”").context.startswith("Based solely")
    assert point(answer, "Other Term: “2 years – Commencing: November 15, 2012”").context.startswith("Based solely")


def test_a_judge_point_aligned_to_a_list_item_is_read_with_its_lead_in() -> None:
    from models.verdict import JudgedPoint, cover_the_rest
    from models.vocabulary import Tag

    answer = ANSWERS["contractnli-001"]
    start = answer.index("Know‑how")
    judged = JudgedPoint("Know‑how", start, start + len("Know‑how"), Tag.CORRECT)
    points = cover_the_rest([judged], segment_answer(answer))
    [know_how] = [p for p in points if p.tag is Tag.CORRECT]
    assert know_how.context == "Specifically, it includes (but is not limited to):"
    assert all(p.context == s.context for p, s in zip(points[:3], segment_answer(answer)[:3], strict=True))


def test_a_sentence_that_ends_on_a_section_number_ends_there() -> None:
    """Issue 63: "Section 10." was read as a number, so a reversed duty hid inside a correct point."""
    answer = (
        "The Receiving Party must protect it with care at least as protective as Section 10. "
        "If a disclosure is required by law, the Receiving Party need not notify the Disclosing Party."
    )
    assert texts(answer) == [
        "The Receiving Party must protect it with care at least as protective as Section 10.",
        "If a disclosure is required by law, the Receiving Party need not notify the Disclosing Party.",
    ]
    assert texts("The fee is set out in Section 2. 3 copies are kept.") == [
        "The fee is set out in Section 2. 3 copies are kept."
    ]


def test_a_lead_in_that_grants_a_right_is_a_point_and_the_context_of_its_items() -> None:
    """Issue 63: a lead-in that makes the answer's main assertion can be tagged; one that only announces
    a list stays context."""
    answer = (
        "The agreement expressly permits the Receiving Party to obtain information from third parties "
        "so long as that information is:\n- publicly available; or\n- already known to the Receiving Party."
    )
    lead = point(answer, answer.split("\n")[0])
    assert lead.context == ""
    assert point(answer, "publicly available; or").context == lead.text
    announcing = "Specifically, it includes (but is not limited to):\n- Know-how\n- Software"
    assert texts(announcing) == ["Know-how", "Software"]

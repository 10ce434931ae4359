"""Repository functions of the generator comparison: the questions two generators both answered, and
one rater's tagged data points on an answer."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from storage.point_fields import made_citation
from storage.schema import AnswerRow, CitationRow, DataPointRow, DocumentRow, LabelRow, PassageRow, QuestionRow

UNKNOWN = "unknown"  # the generator of answers that name none, as the estimates call it


@dataclass(frozen=True, kw_only=True)
class SharedQuestion:
    question_id: int
    question: str
    document: str
    answers: dict[str, str]  # generator -> answer id (the first by id where a generator answered twice)


def generators(session: Session) -> dict[str, int]:
    """Each generator and how many answers it wrote."""
    name = func.coalesce(AnswerRow.generator, UNKNOWN)
    return {g: n for g, n in session.execute(select(name, func.count()).group_by(name).order_by(name)).all()}


def shared_questions(session: Session, wanted: list[str] | None = None) -> list[SharedQuestion]:
    """The questions answered by two generators or more (of `wanted`, when given), in dataset order."""
    name = func.coalesce(AnswerRow.generator, UNKNOWN)
    rows = session.execute(
        select(QuestionRow.id, QuestionRow.text, DocumentRow.name, name, AnswerRow.id)
        .join(AnswerRow, AnswerRow.question_id == QuestionRow.id)
        .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
        .order_by(AnswerRow.position, AnswerRow.id)
    ).all()
    found: dict[int, SharedQuestion] = {}
    for question_id, text, document, generator, answer_id in rows:
        if wanted is not None and generator not in wanted:
            continue
        found.setdefault(
            question_id, SharedQuestion(question_id=question_id, question=text, document=document, answers={})
        ).answers.setdefault(generator, answer_id)
    return [q for q in found.values() if len(q.answers) >= 2]


@dataclass(frozen=True, kw_only=True)
class TaggedPoint:
    text: str
    tag: str | None
    passages: tuple[str, ...]  # citation ids


def tagged_points(session: Session, answer_id: str, rater_id: int) -> list[TaggedPoint]:
    """A rater's data points on an answer with their tags, in order: the points they made (a reviewer's
    copies, a judge's own) and those of others they tagged (an import may label a judge's points)."""
    rows = session.execute(
        select(DataPointRow.id, DataPointRow.text, LabelRow.tag)
        .outerjoin(LabelRow, (LabelRow.data_point_id == DataPointRow.id) & (LabelRow.rater_id == rater_id))
        .where(DataPointRow.answer_id == answer_id)
        .where((DataPointRow.rater_id == rater_id) | LabelRow.id.is_not(None))
        .order_by(DataPointRow.ordinal, DataPointRow.id)
    ).all()
    cited: dict[int, list[str]] = {}
    for point_id, citation in session.execute(
        select(CitationRow.data_point_id, PassageRow.citation_id)
        .join(PassageRow, PassageRow.id == CitationRow.passage_id)
        .where(CitationRow.data_point_id.in_([r[0] for r in rows]), made_citation())  # the rater's own
    ):
        cited.setdefault(point_id, []).append(citation)
    return [
        TaggedPoint(text=text, tag=tag, passages=tuple(sorted(cited.get(point_id, ())))) for point_id, text, tag in rows
    ]

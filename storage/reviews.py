"""Repository functions of the review: a reviewer's own data points and labels, reviews, settings,
and the answer queue. Each takes a session and never commits it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ClauseElement, Connection, case, delete, func, select
from sqlalchemy.orm import Session

from models.vocabulary import OutcomeStatus, ReviewStatus, Tag
from storage import collector
from storage.point_fields import (
    CARRIED,
    Evidence,
    PointLabel,
    PointRecord,
    WholePoint,
    made_citation,
    point_record,
    write_points,
)
from storage.points import RaterTag, tags_by_key, tags_of_point
from storage.schema import (
    AnswerRow,
    CitationRow,
    DataPointRow,
    DocumentRow,
    JudgeOutcomeRow,
    LabelRow,
    PassageRow,
    QuestionRow,
    RaterRow,
    ReviewRow,
    SettingRow,
    SignOffRow,
)


def setting(session: Session, key: str, default: Any = None) -> Any:
    row = session.get(SettingRow, key)
    return default if row is None else row.value


def set_setting(session: Session, key: str, value: Any) -> None:
    session.merge(SettingRow(key=key, value=value))


# ---------------------------------------------------------------- points


@dataclass(frozen=True, kw_only=True)
class PointSnapshot:
    """Everything a reviewer's data point holds: what undo restores. Written as a `WholePoint`, read
    from a `PointRecord` (storage/point_fields.py)."""

    id: int
    ordinal: int
    text: str
    span_start: int | None
    span_end: int | None
    source_id: int | None
    comment: str | None
    tag: Tag | None
    passage_ids: tuple[int, ...]  # the passages the reviewer cited (a missing point's, chosen in the document)
    # The passages the point came with, which the reviewer did not cite: the judge's evidence, the
    # answer's own citations. Shown beside the point; never listed as the reviewer's citations.
    evidence_ids: tuple[int, ...] = ()
    context_start: int | None = None  # the lead-in the point is read with, as offsets into the answer
    context_end: int | None = None
    replaces: tuple[str, ...] = ()  # identity keys of the points a split, merge or edit replaced
    key: str | None = None  # its identity (storage/points.py): given on saving, never restored


@dataclass(frozen=True, kw_only=True)
class ReviewPoint:
    point: PointSnapshot
    citations: tuple[str, ...]  # citation ids of point.passage_ids: the reviewer's own citations
    judge_tag: Tag | None  # the reference judge's (the latest run that judged the answer)
    judge_confidence: float | None
    judge_rationale: str | None
    others: tuple[RaterTag, ...] = ()  # every other rater's tag on this point: judges, jury, reviewers
    judge: str | None = None  # the reference judge's name
    evidence: tuple[str, ...] = ()  # citation ids of point.evidence_ids: the judge's evidence, best first

    @property
    def passages(self) -> tuple[str, ...]:
        """Every passage the point is shown with: the reviewer's citations, then the evidence it came with."""
        return tuple(dict.fromkeys(self.citations + self.evidence))


def reference_judge(session: Session, answer_id: str, preferred: int | None = None) -> int | None:
    """The judge run whose points a reviewer starts from: `preferred` (the project's default rater)
    where it judged the answer, else the latest run that did."""
    return session.scalar(
        select(JudgeOutcomeRow.rater_id)
        .where(JudgeOutcomeRow.answer_id == answer_id, JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value)
        .order_by(JudgeOutcomeRow.rater_id != preferred, JudgeOutcomeRow.created_at.desc(), JudgeOutcomeRow.id.desc())
        .limit(1)
    )


def reference_judge_name(session: Session, answer_id: str, preferred: int | None = None) -> str | None:
    """The name of `reference_judge`'s run."""
    rater_id = reference_judge(session, answer_id, preferred)
    return None if rater_id is None else session.scalar(select(RaterRow.name).where(RaterRow.id == rater_id))


def has_points(session: Session, answer_id: str, rater_id: int) -> bool:
    """Whether the rater has a copy of the answer's data points (made when first opened)."""
    return (
        session.scalar(
            select(DataPointRow.id)
            .where(DataPointRow.answer_id == answer_id, DataPointRow.rater_id == rater_id)
            .limit(1)
        )
        is not None
    )


def snapshot(session: Session, answer_id: str, rater_id: int) -> list[PointSnapshot]:
    rows = session.execute(
        select(DataPointRow, LabelRow.tag)
        .outerjoin(LabelRow, (LabelRow.data_point_id == DataPointRow.id) & (LabelRow.rater_id == rater_id))
        .where(DataPointRow.answer_id == answer_id, DataPointRow.rater_id == rater_id)
        .order_by(DataPointRow.ordinal, DataPointRow.id)
    ).all()
    point_ids = [p.id for p, _ in rows]
    cited, carried = cited_passages(session, point_ids), cited_passages(session, point_ids, carried=True)
    return [point_snapshot(p, tag, p.comment, cited, carried) for p, tag in rows]


def cited_passages(session: Session, point_ids: list[int], *, carried: bool = False) -> dict[int, list[int]]:
    """Each data point's cited passages, the judge's evidence first (by rank), then in passage order;
    `carried`: instead the passages a reviewer's copy came with and its reviewer did not cite."""
    cited: dict[int, list[int]] = {}
    for point_id, passage_id in session.execute(
        select(CitationRow.data_point_id, CitationRow.passage_id)
        .where(CitationRow.data_point_id.in_(point_ids), CitationRow.basis == CARRIED if carried else made_citation())
        .order_by(CitationRow.rank.is_(None), CitationRow.rank, CitationRow.passage_id)
    ):
        cited.setdefault(point_id, []).append(passage_id)
    return cited


def point_snapshot(
    p: DataPointRow,
    tag: str | None,
    comment: str | None,
    cited: dict[int, list[int]],
    carried: dict[int, list[int]] | None = None,
) -> PointSnapshot:
    """A stored point as a review sees it, with this rater's tag and comment."""
    r = point_record(p)
    return PointSnapshot(
        id=p.id,
        ordinal=p.ordinal,
        key=p.point_key,
        text=r.text,
        span_start=r.span_start,
        span_end=r.span_end,
        context_start=r.context_start,
        context_end=r.context_end,
        source_id=r.source_id,
        replaces=r.replaces,
        comment=comment,
        tag=Tag(tag) if tag else None,
        passage_ids=tuple(cited.get(p.id, ())),
        evidence_ids=tuple((carried or {}).get(p.id, ())),
    )


def whole_point(
    p: PointSnapshot, rater_id: int, ordinal: int, *, key: str | None = None, rationale: str | None = None
) -> WholePoint:
    """What the rater writes of a snapshot: its id kept (a new point's is 0 or less), its tag, the passages
    the reviewer cited, then those it came with that the reviewer did not cite (CARRIED)."""
    carried = tuple(
        Evidence(passage_id=pid, rank=rank, basis=CARRIED)
        for rank, pid in enumerate(dict.fromkeys(p.evidence_ids))
        if pid not in p.passage_ids
    )
    return WholePoint(
        rater_id=rater_id,
        ordinal=ordinal,
        id=p.id if p.id > 0 else None,
        key=key,
        record=PointRecord(
            text=p.text,
            span_start=p.span_start,
            span_end=p.span_end,
            context_start=p.context_start,
            context_end=p.context_end,
            source_id=p.source_id,
            comment=p.comment,
            replaces=p.replaces,
        ),
        label=None if p.tag is None else PointLabel(tag=p.tag, rationale=rationale),
        evidence=tuple(Evidence(passage_id=pid, rank=rank) for rank, pid in enumerate(dict.fromkeys(p.passage_ids)))
        + carried,
    )


def restore(
    session: Session,
    answer_id: str,
    rater_id: int,
    points: list[PointSnapshot],
    settled: Sequence[tuple[str, str]] | None = None,
) -> None:
    """Make the rater's points on the answer exactly these (ids kept, so undo/redo are exact).
    `settled`: each point's identity key and rationale, as a consensus gives them (else keys are found)."""
    session.execute(delete(DataPointRow).where(DataPointRow.answer_id == answer_id, DataPointRow.rater_id == rater_id))
    session.flush()
    given: Sequence[tuple[str | None, str | None]] = settled or [(None, None)] * len(points)
    write_points(
        session,
        answer_id,
        [
            whole_point(p, rater_id, ordinal, key=key, rationale=rationale)
            for ordinal, (p, (key, rationale)) in enumerate(zip(points, given, strict=True))
        ],
    )


def review_points(
    session: Session, answer_id: str, reviewer_id: int, preferred_judge: int | None = None
) -> list[ReviewPoint]:
    """The reviewer's points with, beside each, every other rater's tag on the same point (its
    identity, not who recorded it first), the reference judge's first (`reference_judge`)."""
    points = snapshot(session, answer_id, reviewer_id)
    me = session.get(RaterRow, reviewer_id)
    judge_id = reference_judge(session, answer_id, preferred_judge)
    judge = session.get(RaterRow, judge_id) if judge_id is not None else None
    by_key = tags_by_key(session, answer_id)
    names = dict(
        session.execute(
            select(PassageRow.id, PassageRow.citation_id).where(
                PassageRow.id.in_([pid for p in points for pid in (*p.passage_ids, *p.evidence_ids)])
            )
        ).all()
    )
    out = []
    for p in points:
        others = tags_of_point(by_key, p.key, p.replaces, me.name if me else "")
        mine = next((t for t in others if judge is not None and t.rater == judge.name and not t.earlier), None)
        out.append(
            ReviewPoint(
                point=p,
                citations=tuple(names[pid] for pid in p.passage_ids if pid in names),
                judge_tag=mine.tag if mine else None,
                judge_confidence=mine.confidence if mine else None,
                judge_rationale=mine.rationale if mine else None,
                others=tuple(others),
                judge=judge.name if judge is not None else None,
                evidence=tuple(names[pid] for pid in p.evidence_ids if pid in names),
            )
        )
    return out


# ---------------------------------------------------------------- reviews


@dataclass(frozen=True, kw_only=True)
class Review:
    status: ReviewStatus
    active_seconds: float
    holistic_correctness: int | None
    holistic_relevance: int | None
    comment: str | None
    guideline_version: int | None = None  # the guidelines it was submitted under


def review(session: Session, answer_id: str, reviewer_id: int) -> Review:
    row = session.scalar(select(ReviewRow).where(ReviewRow.answer_id == answer_id, ReviewRow.rater_id == reviewer_id))
    if row is None:
        return Review(
            status=ReviewStatus.UNREVIEWED,
            active_seconds=0.0,
            holistic_correctness=None,
            holistic_relevance=None,
            comment=None,
        )
    return Review(
        status=ReviewStatus(row.status),
        active_seconds=row.active_seconds,
        holistic_correctness=row.holistic_correctness,
        holistic_relevance=row.holistic_relevance,
        comment=row.comment,
        guideline_version=row.guideline_version,
    )


def update_review(session: Session, answer_id: str, reviewer_id: int, **fields: Any) -> None:
    row = session.scalar(select(ReviewRow).where(ReviewRow.answer_id == answer_id, ReviewRow.rater_id == reviewer_id))
    if row is None:
        row = ReviewRow(answer_id=answer_id, rater_id=reviewer_id, status=ReviewStatus.UNREVIEWED.value)
        session.add(row)
    for key, value in fields.items():
        setattr(row, key, value.value if isinstance(value, ReviewStatus) else value)
    session.flush()


# ---------------------------------------------------------------- the queue


@dataclass(slots=True, kw_only=True)  # not frozen: a queue makes 100,000 of them at once, 2× faster so
class QueueRow:
    id: str
    document: str
    question: str
    status: ReviewStatus  # this reviewer's
    reviewers_done: int  # reviews submitted, by anyone
    signed: bool = False  # this reviewer's sign-off stands: the review is locked until reopened


JudgeCounts = tuple[int, int, int, int, int]  # C, I, Irr, M and its points left untagged (no verdict)


def queue(session: Session, reviewer_id: int | None, answer_id: str | None = None) -> list[QueueRow]:
    """Every answer (or just one), in id order, with this reviewer's status and the reviews
    submitted. The judge's tag counts are apart (`judge_counts`): a queue shows a screenful."""
    connection = session.connection()  # Core rows: no ORM work per answer
    answers = select(AnswerRow.id, AnswerRow.question_id).order_by(AnswerRow.id)
    # Reviews, statuses and sign-offs are read apart, by answer: a few hundred rows, where joining them
    # to 100,000 answers cost as much again as reading the answers.
    submitted = (
        select(ReviewRow.answer_id, func.count())
        .where(ReviewRow.status == ReviewStatus.SUBMITTED.value)
        .group_by(ReviewRow.answer_id)
    )
    mine = select(ReviewRow.answer_id, ReviewRow.status).where(ReviewRow.rater_id == reviewer_id)
    signed = select(SignOffRow.answer_id).where(SignOffRow.rater_id == reviewer_id, SignOffRow.reopened_at.is_(None))
    # A question and its document are read once, not once per answer: 100,000 answers share a few.
    asked = select(QuestionRow.id, DocumentRow.name, QuestionRow.text).join(
        DocumentRow, QuestionRow.document_id == DocumentRow.id
    )
    if answer_id is not None:  # one row of the queue: that answer's reviews, not every one's
        answers = answers.where(AnswerRow.id == answer_id)
        submitted = submitted.where(ReviewRow.answer_id == answer_id)
        mine = mine.where(ReviewRow.answer_id == answer_id)
        signed = signed.where(SignOffRow.answer_id == answer_id)
        asked = asked.where(
            QuestionRow.id == select(AnswerRow.question_id).where(AnswerRow.id == answer_id).scalar_subquery()
        )
    questions = {question_id: (document, text) for question_id, document, text in session.execute(asked)}
    done: dict[str, int] = {a: n for a, n in connection.execute(submitted).all()}
    unreviewed = ReviewStatus.UNREVIEWED
    if reviewer_id is None:
        statuses: dict[str, ReviewStatus] = {}
        locked: set[str] = set()
    else:
        statuses = {a: ReviewStatus(status) for a, status in connection.execute(mine).all()}
        locked = set(connection.execute(signed).scalars())  # a few rows: signing is deliberate
    with collector.held_off():  # 100,000 rows: the cycle collector walking them doubled their time
        return [
            QueueRow(
                id=a,
                document=questions[q][0],
                question=questions[q][1],
                status=statuses.get(a, unreviewed),
                reviewers_done=done.get(a, 0),
                signed=a in locked,
            )
            for a, q in (_driver_rows(connection, answers) if answer_id is None else connection.execute(answers).all())
        ]


def _driver_rows(connection: Connection, statement: ClauseElement) -> list[tuple[Any, ...]]:
    """Every row of a statement without parameters, from the driver's cursor: SQLAlchemy's rows cost
    1 µs each, 0.07 s of a queue of 100,000 answers."""
    cursor = connection.connection.cursor()
    try:
        cursor.execute(statement.compile(dialect=connection.dialect).string)
        return list(cursor.fetchall())
    finally:
        cursor.close()


def judge_counts(
    session: Session, rater_id: int | None, answer_ids: Sequence[str] | None = None
) -> dict[str, JudgeCounts]:
    """One judge rater's tag counts on its own data points, and how many of them it left untagged (a
    rater that abstains, as the verifier does where it can neither confirm nor refute), per answer it
    judged (of `answer_ids`, or of every answer): one aggregate query."""
    if rater_id is None:
        return {}
    judged = select(JudgeOutcomeRow.answer_id).where(
        JudgeOutcomeRow.rater_id == rater_id, JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value
    )
    if answer_ids is not None:  # a page: SQLite lists the subquery's answers whole, so only the page's
        judged = judged.where(JudgeOutcomeRow.answer_id.in_(answer_ids))
    per_tag = [func.sum(case((LabelRow.tag == tag.value, 1), else_=0)) for tag in Tag]
    untagged = func.sum(case((LabelRow.id.is_(None), 1), else_=0))
    statement = (
        select(DataPointRow.answer_id, *per_tag, untagged)
        .outerjoin(LabelRow, (LabelRow.data_point_id == DataPointRow.id) & (LabelRow.rater_id == rater_id))
        .where(DataPointRow.rater_id == rater_id, DataPointRow.answer_id.in_(judged))
        .group_by(DataPointRow.answer_id)
    )
    if answer_ids is not None:
        statement = statement.where(DataPointRow.answer_id.in_(answer_ids))
    return {
        answer_id: (int(c), int(i), int(irr), int(m), int(u))
        for answer_id, c, i, irr, m, u in session.connection().execute(statement).all()
    }


def answers_reviewed_by_people(session: Session) -> list[str]:
    """The answers a person (a human rater) submitted a review of, in id order."""
    found = session.scalars(
        select(ReviewRow.answer_id)
        .join(RaterRow, RaterRow.id == ReviewRow.rater_id)
        .where(ReviewRow.status == ReviewStatus.SUBMITTED.value, RaterRow.kind == "human")
        .distinct()
    )
    return sorted(found)

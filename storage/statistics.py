"""What the statistics need from a project: the random review sample, each answer's document and
slice, judge tags with confidences beside a reviewer's tags on the same data point, and how a judge
rater did against human labels.

Against human labels (`real_label_figures`) the unit is the answer: a human found an error in it when
they tagged at least one point `incorrect` or added a `missing` point, and the judge flagged it when it
tagged at least one point `incorrect`. Recall is the share of the answers with an error that it
flagged, false alarms the share of the answers the humans found correct that it flagged. The humans
are the project's human raters, its reviewers and imported human labels (`assay import-labels`), on
answers they submitted a review of; an answer several of them reviewed has an error if any of them
marked one. Only answers both the judge judged and a human reviewed count."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, cast, func, select
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql import operators
from sqlalchemy.sql.expression import UnaryExpression

from models.vocabulary import OutcomeStatus, RaterKind, ReviewStatus, Tag
from storage import adjudication, raters
from storage.plain_rows import plain_rows
from storage.schema import (
    AnswerRow,
    DataPointRow,
    DocumentRow,
    JudgeOutcomeRow,
    LabelRow,
    QuestionRow,
    RaterRow,
    ReviewRow,
    ReviewSampleRow,
)

if TYPE_CHECKING:  # numpy is not imported for the queries alone
    from storage.scoring import ScoreTable

HUMAN_ERROR_TAGS = (Tag.INCORRECT.value, Tag.MISSING.value)  # a human's mark of an error in the answer


def sampled_answers(session: Session) -> dict[str, int]:
    """Answers drawn at random for review, with the number of their draw."""
    return dict(plain_rows(session.connection(), select(ReviewSampleRow.answer_id, ReviewSampleRow.draw)))


def add_sampled(session: Session, answer_ids: list[str], seed: int | None, population: int, actor: str) -> int:
    """Record one draw; returns its number. Answers already in a sample are kept as they were."""
    draw = (session.scalar(select(func.max(ReviewSampleRow.draw))) or 0) + 1
    known = set(sampled_answers(session))
    for answer_id in answer_ids:
        if answer_id not in known:
            session.add(
                ReviewSampleRow(answer_id=answer_id, draw=draw, seed=seed, population=population, drawn_by=actor)
            )
    session.flush()
    return draw


def latest_judge_per_answer(session: Session, verifier: str = "verifier") -> dict[str, int]:
    """The rater of each answer's latest successful judge run, the model-free verifier aside: it tags
    only what it can disprove and leaves the rest untagged, so as "the judge" it would clear nothing."""
    latest = (
        select(JudgeOutcomeRow.answer_id, func.max(JudgeOutcomeRow.id).label("outcome"))
        .join(RaterRow, RaterRow.id == JudgeOutcomeRow.rater_id)
        .where(JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value, RaterRow.name != verifier)
        .group_by(JudgeOutcomeRow.answer_id)
        .subquery()
    )
    rows = session.connection().execute(  # Core: ORM rows cost a third of a second at 100,000 answers
        select(JudgeOutcomeRow.answer_id, JudgeOutcomeRow.rater_id).join(latest, latest.c.outcome == JudgeOutcomeRow.id)
    )
    return dict(rows.all())


def judged_by(session: Session, rater: str) -> dict[str, int]:
    """The rater's id on each answer it judged (its successful runs), for figures read through one rater."""
    rows = plain_rows(  # the answers may be many
        session.connection(),
        select(JudgeOutcomeRow.answer_id, JudgeOutcomeRow.rater_id)
        .join(RaterRow, RaterRow.id == JudgeOutcomeRow.rater_id)
        .where(RaterRow.name == rater, JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value),
    )
    return dict(rows)


def judged_counts(session: Session) -> dict[int, int]:
    """How many answers each judge rater judged (its successful runs), by rater id."""
    rows = session.connection().execute(
        select(JudgeOutcomeRow.rater_id, func.count())
        .where(JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value)
        .group_by(JudgeOutcomeRow.rater_id)
    )
    return {rater_id: int(n) for rater_id, n in rows.all()}


def answer_ids(session: Session) -> list[str]:
    return list(session.scalars(select(AnswerRow.id).order_by(AnswerRow.id)))


def answer_slices(session: Session) -> list[dict[str, Any]]:
    """Per answer: its document, question, generator and source (the groups figures are given by)."""
    source = AnswerRow.meta["source"].as_string()  # read in SQL: 100,000 JSON objects parsed here took seconds
    rows = session.connection().execute(
        select(AnswerRow.id, DocumentRow.name, QuestionRow.id, AnswerRow.generator, source)
        .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
        .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
    )
    return [
        {
            "answer_id": answer,
            "document": document,
            "question": question,
            "generator": generator or "unknown",
            "source": source or "unknown",
        }
        for answer, document, question, generator, source in rows.all()
    ]


def point_labels(session: Session, *, reviewed_only: bool = False, judges_only: bool = False) -> dict[str, list[Any]]:
    """Labels on data points with a span, as columns (answer_id, item, rater_id, kind, tag, confidence,
    submitted): every rater's record of the same point (its identity, storage/points.py) is one item.
    `submitted` says whether that rater submitted a review of the answer. `reviewed_only` keeps
    answers someone submitted a review of; `judges_only` keeps judges' labels."""
    item = func.coalesce(DataPointRow.point_key, "id:" + cast(DataPointRow.id, String))
    submitted = (
        select(ReviewRow.answer_id, ReviewRow.rater_id)
        .where(ReviewRow.status == ReviewStatus.SUBMITTED.value)
        .subquery()
    )
    statement = (
        select(
            DataPointRow.answer_id,
            item.label("item"),
            LabelRow.rater_id,
            RaterRow.kind,
            LabelRow.tag,
            LabelRow.confidence,
            submitted.c.rater_id.is_not(None).label("submitted"),
        )
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .join(RaterRow, RaterRow.id == LabelRow.rater_id)
        .outerjoin(
            submitted,
            (submitted.c.answer_id == DataPointRow.answer_id) & (submitted.c.rater_id == LabelRow.rater_id),
        )
        .where(DataPointRow.span_start.is_not(None))
    )
    if reviewed_only:
        statement = statement.where(DataPointRow.answer_id.in_(select(submitted.c.answer_id)))
    if judges_only:
        statement = statement.where(RaterRow.kind == "judge")
    # Core on the connection, as columns: at a million labels, per-row objects dominate the time.
    rows = session.connection().execute(statement).all()
    keys = ("answer_id", "item", "rater_id", "kind", "tag", "confidence", "submitted")
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(keys)
    return dict(zip(keys, map(list, columns), strict=True))


def real_label_figures(
    source: Session | sessionmaker[Session], rater: str, table: ScoreTable | None = None
) -> dict[str, Any] | None:
    """How the judge rater did against human labels, per answer (the rule is in the module docstring):
    answers both it judged and a human reviewed (`answers`), of them those with an error (`with_errors`)
    and those it flagged (`caught`, with `recall` and its 95 % Wilson interval `recall_ci`), those the
    humans found correct (`correct`) and those it flagged (`false_alarms`, `false_alarm_rate`,
    `false_alarm_ci`); also the human raters and how many of the answers were drawn at random for
    review (`sampled`). None where no such answer exists. Where several human raters reviewed an
    answer, the answer has an error if any of them marked one.

    `table`: every rater's scores (storage/scoring.score_table), where the caller has read them: which
    answers have an error and which the rater flagged are then read from its tag counts, not from two
    queries over the labels (the same figures; at 1 M data points and 100,000 reviews the queries took
    1.2 s of CPU and their rows as much again)."""
    if not isinstance(source, Session):
        with source() as session:
            return real_label_figures(session, rater, table)
    session = source
    found = raters.rater_named(session, rater)
    if found is None:
        return None
    # Reviews joined to the rater's outcome of their answer (one at most: unique by rater and answer). Not
    # "answer IN (every answer the rater judged)", which lists 100,000 judged answers first, nor a
    # correlated EXISTS, which SQLite ran once per review and took minutes at 10,000 reviews.
    reviewed = (
        select(ReviewRow.answer_id, ReviewRow.rater_id, RaterRow.name)
        .join(RaterRow, RaterRow.id == ReviewRow.rater_id)
        .join(
            JudgeOutcomeRow,
            (JudgeOutcomeRow.answer_id == ReviewRow.answer_id)
            & (JudgeOutcomeRow.rater_id == found.id)
            & (JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value),
        )
        .where(
            ReviewRow.status == ReviewStatus.SUBMITTED.value,
            RaterRow.kind == RaterKind.HUMAN.value,
            # an adjudicated answer is read as its consensus alone
            ReviewRow.answer_id.not_in(adjudication.settled_answers()) | (RaterRow.name == adjudication.CONSENSUS),
        )
        .subquery()
    )
    connection = session.connection()  # Core: the answers may be many
    pairs = plain_rows(connection, select(reviewed.c.answer_id, reviewed.c.name))
    if not pairs:
        return None
    answer_ids = {answer for answer, _ in pairs}
    if table is not None:
        wrong, flagged = _marked_in_table(table, pairs, rater)
        flagged &= answer_ids
    else:
        points_of = select(DataPointRow.answer_id).join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        # The labels' rater behind a unary plus, which SQLite's planner reads as no indexed column: along
        # the index on (rater_id, tag, data_point_id) it joined each review to every label of its rater
        # with an error's tag, and read all of them for each (90 s at 10,000 reviews). So it goes from
        # each review to its answer's points, then to their labels.
        wrong = set(
            connection.execute(
                points_of.join(
                    reviewed,
                    (reviewed.c.answer_id == DataPointRow.answer_id)
                    & (reviewed.c.rater_id == _unindexed(LabelRow.rater_id)),
                )
                .where(LabelRow.tag.in_(HUMAN_ERROR_TAGS))
                .distinct()
            ).scalars()
        )
        flagged = set(
            connection.execute(
                points_of.where(
                    LabelRow.rater_id == found.id,
                    LabelRow.tag == Tag.INCORRECT.value,
                    DataPointRow.answer_id.in_(select(reviewed.c.answer_id)),
                ).distinct()
            ).scalars()
        )
    sampled = answer_ids & set(sampled_answers(session))
    caught, alarms = len(flagged & wrong), len(flagged - wrong)
    correct = len(answer_ids) - len(wrong)
    return {
        "rater": rater,
        "answers": len(answer_ids),
        "with_errors": len(wrong),
        "caught": caught,
        "recall": caught / len(wrong) if wrong else None,
        "recall_ci": wilson_interval(caught, len(wrong)),
        "correct": correct,
        "false_alarms": alarms,
        "false_alarm_rate": alarms / correct if correct else None,
        "false_alarm_ci": wilson_interval(alarms, correct),
        "human_raters": sorted({name for _, name in pairs}),
        "sampled": len(sampled),
    }


def _unindexed(column: Any) -> Any:
    """`+column`: the same value, which SQLite will not look up along an index (its documented way to
    keep a term off one); PostgreSQL reads it as the column."""
    return UnaryExpression(column, operator=operators.custom_op("+"), type_=column.type)


def _marked_in_table(table: ScoreTable, pairs: Sequence[Any], rater: str) -> tuple[set[str], set[str]]:
    """`real_label_figures`' answers with an error (a reviewing human's pair there counts an incorrect
    or missing tag) and the answers the rater flagged (its pair counts an incorrect tag), from the
    score table's counts: per rater, one comparison over the pairs."""
    from storage.columns import TAGS

    incorrect, missing = (TAGS.index(Tag(t)) for t in HUMAN_ERROR_TAGS)
    erred = (table.counts[:, incorrect] + table.counts[:, missing]) > 0
    erred_in = {human: table.answers_where(human, erred) for human in {human for _, human in pairs}}
    wrong = {answer for answer, human in pairs if answer in erred_in[human]}
    return wrong, table.answers_where(rater, table.counts[:, incorrect] > 0)


def wilson_interval(k: int, n: int) -> tuple[float, float] | None:
    """The 95 % Wilson interval of k in n (None for n = 0)."""
    if n == 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)

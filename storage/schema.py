"""The tables of a project file. Every change here needs a migration in storage/migrations."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from models.vocabulary import OutcomeStatus, PassageKind, RaterKind, ReviewStatus, Tag


def utcnow() -> datetime:
    return datetime.now(UTC)


def _in(column: str, values: type[Enum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class DocumentRow(Base):
    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(primary_key=True)
    # None: unassigned, as every document was before matters (seen by anyone who sees the project).
    matter_id: Mapped[int | None] = mapped_column(ForeignKey("matters.id"), index=True)
    name: Mapped[str] = mapped_column(String(500), unique=True)
    format: Mapped[str] = mapped_column(String(10))
    sha256: Mapped[str] = mapped_column(String(64))
    # Passage ids are only stable for one parse of one text: keep both.
    parser_version: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # what the claim checker's encoders read of it, kept at import (models/checker/engine.ClaimEngine.read_whole);
    # None until then. Deferred: a few megabytes that only the checker reads
    readings: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)


class PassageRow(Base):
    __tablename__ = "passages"
    __table_args__ = (
        UniqueConstraint("document_id", "citation_id"),
        CheckConstraint(_in("kind", PassageKind), name="passage_kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    ordinal: Mapped[int] = mapped_column(Integer)
    citation_id: Mapped[str] = mapped_column(String(20))  # par_14
    kind: Mapped[str] = mapped_column(String(20))
    article: Mapped[str | None] = mapped_column(String(20))  # IV
    section: Mapped[str | None] = mapped_column(String(60), index=True)  # 6.01(a)(i)
    heading_path: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text)
    page: Mapped[int | None] = mapped_column(Integer)
    char_start: Mapped[int | None] = mapped_column(Integer)  # offsets into DocumentRow.text
    char_end: Mapped[int | None] = mapped_column(Integer)
    footnote_label: Mapped[str | None] = mapped_column(String(10))
    # A footnote points at the passage whose text carries its marker.
    refers_to_id: Mapped[int | None] = mapped_column(ForeignKey("passages.id", ondelete="SET NULL"))
    ocr_confidence: Mapped[float | None] = mapped_column(Float)  # read from a scan: Tesseract's 0-1


class QuestionRow(Base):
    __tablename__ = "questions"
    __table_args__ = (UniqueConstraint("document_id", "text"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    text: Mapped[str] = mapped_column(Text)


class AnswerRow(Base):
    __tablename__ = "answers"
    __table_args__ = (Index("ix_answers_queue", "id", "question_id"),)  # the queue reads no answer's text

    id: Mapped[str] = mapped_column(String(200), primary_key=True)  # the dataset's id
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    text: Mapped[str] = mapped_column(Text)
    generator: Mapped[str | None] = mapped_column(String(200))
    gold_answer: Mapped[str | None] = mapped_column(Text)
    gold_required: Mapped[str | None] = mapped_column(Text)
    gold_helpful: Mapped[str | None] = mapped_column(Text)
    gold_spans: Mapped[list[Any] | None] = mapped_column(JSON)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    position: Mapped[int | None] = mapped_column(Integer, index=True)  # its place in the dataset: `judge --limit`
    # Its data points as the segmenter cut them, {"version": SEGMENTER_VERSION, "points": [[start, end,
    # context_start, context_end], ...]}: None until first read (storage/answers.segmentations)
    segmentation: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RaterRow(Base):
    __tablename__ = "raters"
    __table_args__ = (CheckConstraint(_in("kind", RaterKind), name="rater_kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(10))
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # a judge run's model, rubric…
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DataPointRow(Base):
    """One rater's record of a data point. Records of different raters that say the same thing (the
    same span, or for a missing point the same words and passage) share a `point_key`: that key is
    the data point every rater tags (models/identity.py)."""

    __tablename__ = "data_points"
    __table_args__ = (Index("ix_data_points_answer_key", "answer_id", "point_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"))  # who created it
    ordinal: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    span_start: Mapped[int | None] = mapped_column(Integer)  # None for a `missing` point
    span_end: Mapped[int | None] = mapped_column(Integer)
    # The lead-in the point is read with ("Specifically, it includes:"), as offsets into the answer.
    context_start: Mapped[int | None] = mapped_column(Integer)
    context_end: Mapped[int | None] = mapped_column(Integer)
    # A reviewer's copy of a judge's point: the tag the judge gave it is the one shown beside theirs.
    source_id: Mapped[int | None] = mapped_column(ForeignKey("data_points.id", ondelete="SET NULL"))
    point_key: Mapped[str | None] = mapped_column(String(80))
    # A reviewer's split, merge or edit: the keys of the points this one replaces.
    replaces: Mapped[list[Any] | None] = mapped_column(JSON)
    comment: Mapped[str | None] = mapped_column(Text)
    # Ids a judge cited that its document does not have: kept for the reviewer, never linked.
    unverified_citations: Mapped[list[Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LabelRow(Base):
    __tablename__ = "labels"
    __table_args__ = (
        UniqueConstraint("data_point_id", "rater_id"),  # history lives in the audit log
        CheckConstraint(_in("tag", Tag), name="label_tag"),
        CheckConstraint("confidence IS NULL OR (confidence >= 0 AND confidence <= 1)", name="label_confidence"),
        Index("ix_labels_rater_tag_point", "rater_id", "tag", "data_point_id"),  # the figures' read (0024)
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    data_point_id: Mapped[int] = mapped_column(ForeignKey("data_points.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"))
    tag: Mapped[str] = mapped_column(String(12))
    confidence: Mapped[float | None] = mapped_column(Float)
    rationale: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CitationRow(Base):
    __tablename__ = "citations"

    data_point_id: Mapped[int] = mapped_column(ForeignKey("data_points.id", ondelete="CASCADE"), primary_key=True)
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"), primary_key=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    # A judge's evidence: 0 = most relevant. NULL for a reviewer's passages and older projects.
    rank: Mapped[int | None] = mapped_column(Integer)
    basis: Mapped[str | None] = mapped_column(String(12))  # cited | section | shown | answer | found


class ReviewRow(Base):
    __tablename__ = "reviews"
    __table_args__ = (
        UniqueConstraint("answer_id", "rater_id"),
        CheckConstraint(_in("status", ReviewStatus), name="review_status"),
        CheckConstraint("holistic_correctness IS NULL OR holistic_correctness BETWEEN 1 AND 5", name="review_hc"),
        CheckConstraint("holistic_relevance IS NULL OR holistic_relevance BETWEEN 1 AND 5", name="review_hr"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"))
    status: Mapped[str] = mapped_column(String(12), default=ReviewStatus.UNREVIEWED.value)
    active_seconds: Mapped[float] = mapped_column(Float, default=0.0)
    # LeMAJ Table 8: 5 = completely correct / relevant … 1 = completely incorrect / irrelevant.
    holistic_correctness: Mapped[int | None] = mapped_column(Integer)
    holistic_relevance: Mapped[int | None] = mapped_column(Integer)
    comment: Mapped[str | None] = mapped_column(Text)
    guideline_version: Mapped[int | None] = mapped_column(Integer)  # the guidelines it was submitted under
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class JudgeOutcomeRow(Base):
    """How a judge run went on one answer: judged or failed (with the raw output), and what it saw."""

    __tablename__ = "judge_outcomes"
    __table_args__ = (
        UniqueConstraint("rater_id", "answer_id"),
        CheckConstraint(_in("status", OutcomeStatus), name="judge_outcome_status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id", ondelete="CASCADE"), index=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    status: Mapped[str] = mapped_column(String(10))
    attempts: Mapped[int] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    raw_output: Mapped[str | None] = mapped_column(Text)
    passages_seen: Mapped[list[Any]] = mapped_column(JSON, default=list)  # citation ids in the prompt
    # Judge points validation refused, by reason ("prompt echo": count); never stored as points.
    rejected: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RubricResultRow(Base):
    """An answer-level verdict under a rubric other than LeMAJ's data points (pointwise, coverage,
    two-dimensional, DeCE, SCORE): its label, its score, and the details (criteria, elements…)."""

    __tablename__ = "rubric_results"
    __table_args__ = (UniqueConstraint("rater_id", "answer_id", "rubric"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id", ondelete="CASCADE"), index=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    rubric: Mapped[str] = mapped_column(String(30))
    label: Mapped[str | None] = mapped_column(String(60))
    score: Mapped[float | None] = mapped_column(Float)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReviewSampleRow(Base):
    """An answer drawn uniformly at random for review (or imported as such): the reviews that back
    triage guarantees and prediction-powered estimates. `draw` numbers the draws; each drew from the
    answers no earlier draw had taken, so together they stay one uniform sample."""

    __tablename__ = "review_samples"

    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), primary_key=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    draw: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int | None] = mapped_column(Integer)  # None: imported as sampled by another tool
    population: Mapped[int] = mapped_column(Integer)  # answers it was drawn from
    drawn_by: Mapped[str] = mapped_column(String(200))
    drawn_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SettingRow(Base):
    """Project-wide settings: review mode (assisted or blind), network permission for API judges."""

    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(60), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON, nullable=True)


class AuditRow(Base):
    """Append-only (triggers refuse UPDATE and DELETE) and hash-chained: who changed what, when.
    Each entry's hash covers its content and the previous entry's hash, so an edited or deleted
    entry breaks the chain (`assay audit verify`)."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(60))
    entity: Mapped[str] = mapped_column(String(40))
    entity_id: Mapped[str] = mapped_column(String(200))
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its subject's (PostgreSQL sets it)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    prev_hash: Mapped[str | None] = mapped_column(String(64))
    hash: Mapped[str | None] = mapped_column(String(64))


class AdjudicationRow(Base):
    """An adjudicator's decision on a data point the reviewers of an answer disagreed on: the tag the
    consensus gives it (None: the point is left out of the consensus), why (one of a short list), and
    what each reviewer had said when it was decided (their name: their tag, None where they had no
    such point). Deciding a point again replaces the decision; the audit log keeps the history."""

    __tablename__ = "adjudications"
    __table_args__ = (
        UniqueConstraint("answer_id", "point_key"),
        CheckConstraint(f"tag IS NULL OR {_in('tag', Tag)}", name="adjudication_tag"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    point_key: Mapped[str] = mapped_column(String(80))
    tag: Mapped[str | None] = mapped_column(String(12))
    reason: Mapped[str | None] = mapped_column(String(30))
    adjudicator: Mapped[str] = mapped_column(String(200))
    reviewers: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    guideline_version: Mapped[str | None] = mapped_column(String(40))
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class GuidelineVersionRow(Base):
    """One version of the project's review guidelines (Markdown): setting new text adds a version,
    never changes one; a review records the version it was submitted under."""

    __tablename__ = "guideline_versions"

    id: Mapped[int] = mapped_column(primary_key=True)
    version: Mapped[int] = mapped_column(Integer, unique=True)
    text: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    author: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SignOffRow(Base):
    """A reviewer's signature on their review of an answer: the record signed (answer and document
    hashes, every tag and comment, guideline version, reviewer, time) and the SHA-256 of its canonical
    JSON, which the audit log also records. A reopen withdraws it (the row stays, with who and why)."""

    __tablename__ = "signoffs"

    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    id: Mapped[int] = mapped_column(primary_key=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    guideline_version: Mapped[int | None] = mapped_column(Integer)
    signed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    digest: Mapped[str] = mapped_column(String(64), index=True)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    reopened_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    reopened_by: Mapped[str | None] = mapped_column(String(200))
    reopen_reason: Mapped[str | None] = mapped_column(Text)
    key_fingerprint: Mapped[str | None] = mapped_column(String(64))  # None: signed before reviewer keys
    signature: Mapped[str | None] = mapped_column(Text)  # Ed25519 over the canonical record, base64


class ReviewerKeyRow(Base):
    """A reviewer's public signing key (Ed25519), registered with its fingerprint (SHA-256 of the raw
    key): retired, never deleted or changed (triggers refuse it). The private key never enters here."""

    __tablename__ = "reviewer_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    reviewer: Mapped[str] = mapped_column(String(200), index=True)
    algorithm: Mapped[str] = mapped_column(String(20), default="ed25519")
    public_key: Mapped[str] = mapped_column(Text)  # the raw 32 bytes, base64
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    retired_by: Mapped[str | None] = mapped_column(String(200))


class AuditHeadRow(Base):
    """A signed checkpoint of the audit chain: the newest entry's id and hash when a reviewer acted,
    signed with their key. Every entry up to it is covered; append-only like the log."""

    __tablename__ = "audit_heads"

    id: Mapped[int] = mapped_column(primary_key=True)
    entry_id: Mapped[int] = mapped_column(Integer)
    entry_hash: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(64))
    signed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    signature: Mapped[str] = mapped_column(Text)


class PairwisePreferenceRow(Base):
    """A reviewer's preference between two answers to one question: which is better, or a
    tie (`preferred_id` NULL), and why. The pair is stored in id order (`answer_a_id` < `answer_b_id`)
    so that one reviewer has one preference per pair; `shown_first_id` is the answer shown on the left,
    and `seed` the blind review's seed that put it there (NULL when the generators were named).
    Deciding again replaces the preference; the audit log keeps the history."""

    __tablename__ = "pairwise_preferences"
    __table_args__ = (
        UniqueConstraint("rater_id", "answer_a_id", "answer_b_id"),
        CheckConstraint("answer_a_id < answer_b_id", name="preference_pair_order"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    answer_a_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    answer_b_id: Mapped[str] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    matter_id: Mapped[int | None] = mapped_column(Integer, index=True)  # its document's: set by the database
    preferred_id: Mapped[str | None] = mapped_column(String(200))
    reason: Mapped[str | None] = mapped_column(Text)
    shown_first_id: Mapped[str] = mapped_column(String(200))
    blind: Mapped[bool] = mapped_column(default=False)
    seed: Mapped[int | None] = mapped_column(Integer)
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MatterRow(Base):
    """A client matter: one engagement's documents and everything about them (questions, answers,
    points, tags, reviews, sign-offs, their audit entries). Every such row carries its matter's id;
    on PostgreSQL row-level security shows a login only the rows of the matters it is a member of."""

    __tablename__ = "matters"
    __table_args__ = (UniqueConstraint("client", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    client: Mapped[str] = mapped_column(String(200))
    number: Mapped[str] = mapped_column(String(100))  # the firm's matter number, e.g. 2024-0117
    name: Mapped[str] = mapped_column(String(300))
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # closed: kept, read-only
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MatterMemberRow(Base):
    """A person on a matter. On a database server `person` is their database login: what the
    row-level security policies compare with the login of the session."""

    __tablename__ = "matter_members"
    __table_args__ = (UniqueConstraint("matter_id", "person"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    matter_id: Mapped[int] = mapped_column(ForeignKey("matters.id", ondelete="CASCADE"), index=True)
    person: Mapped[str] = mapped_column(String(200), index=True)
    added_by: Mapped[str] = mapped_column(String(200))
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MatterWallRow(Base):
    """An ethical wall: a person who must see nothing of a client's matters (a conflict of interest).
    Adding them to such a matter is refused, and the attempt audited."""

    __tablename__ = "matter_walls"
    __table_args__ = (UniqueConstraint("person", "client"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    person: Mapped[str] = mapped_column(String(200), index=True)
    client: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str | None] = mapped_column(Text)
    added_by: Mapped[str] = mapped_column(String(200))
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

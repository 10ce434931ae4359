"""The report's content as plain data: what gather.py reads from the project and the templates show.

Every figure of the summary is a `Number` that names the `assay` command whose `--json` output holds
it and its key there, so the summary can be checked against the command line figure by figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Redact = Callable[[Any], Any]
SLICES = ("rater", "source", "document", "generator")


@dataclass(frozen=True)
class Number:
    """A figure as shown (`text`), its value, and where the command line gives it: `assay <command>
    --json`, then `key` (dot-separated; list positions as numbers)."""

    value: float | int | None
    text: str
    command: str
    key: str


@dataclass(frozen=True)
class Headline:
    words: str
    estimate: Number
    low: Number | None
    high: Number | None
    basis: list[str | Number]  # words and figures, in the order read
    whole_set: bool = False  # an estimate for every answer, not only for those a person tagged
    no_interval: str = "—"  # what the interval's cell says where there is none ("too few answers …")


@dataclass(frozen=True)
class RaterLine:
    name: str  # readable
    answers: Number
    incorrect: Number | None = None
    missing: Number | None = None
    irrelevant: Number | None = None
    cannot_tag: bool = False  # tags correct or incorrect only: its omissions and irrelevant points are no figures


@dataclass(frozen=True)
class Table:
    columns: list[str]  # headings, in words
    rows: list[list[str]]
    numeric: list[bool]  # right-aligned columns
    caption: str = ""
    keep: list[bool] = field(default_factory=list)  # columns of ids, never broken across lines
    grouped: bool = False  # the first column heads its rows, across the table's width, said once


@dataclass(frozen=True)
class Claim:
    text: str
    tag: str  # incorrect | missing
    rater: str
    evidence: str | None  # "par_12, § 6.3: the passage's text"
    cited_by: str | None  # who cited the passage: the reviewer, or a judge on the same claim
    comment: str | None


@dataclass(frozen=True)
class ErrorAnswer:
    answer_id: str
    question: str
    document: str
    generator: str | None
    answer: str
    claims: list[Claim]
    comments: list[str]  # the reviewers' comments on the whole answer


@dataclass(frozen=True)
class Triage:
    """What triage would clear, read through one rater's tags: its name, the answers it judged and those
    it tagged points in, all from the rater triage chose (an answer with no point tagged is never cleared)."""

    judged: Number
    rater: str | None = None  # readable
    tagged: Number | None = None  # the answers it tagged points in, as "Which judges" counts them
    trusted: bool = True  # it is the rater that speaks for the project (else it is named as left out)
    cleared: Number | None = None
    cleared_share: Number | None = None
    reviewed_cleared: Number | None = None
    missed: Number | None = None
    upper: Number | None = None
    upper_by_document: Number | None = None
    min_correctness: Number | None = None
    min_relevance: Number | None = None
    reviews_used: Number | None = None
    reviews_left_out: Number | None = None


@dataclass(frozen=True)
class Agreement:
    raters: list[str]
    items: Number
    percent: Number
    ac1: Number | None
    kappa: Number | None
    alpha: Number | None
    meaning: str
    left_out: list[str]
    by_source: Table | None


@dataclass(frozen=True)
class Guidelines:
    version: str
    author: str | None
    created_at: str | None
    sha256: str | None


@dataclass(frozen=True)
class Signoff:
    answer_id: str
    reviewer: str
    signed_at: str
    digest: str
    matches: bool
    problem: str | None


@dataclass
class Report:
    title: str
    project: str
    made_at: str
    documents: Number
    answers: Number
    questions: Number
    points: Number
    labels: Number
    reviewers: list[RaterLine]
    judges: list[RaterLine]
    headlines: list[Headline]
    triage: Triage
    agreement: Agreement | None
    agreement_problem: str | None
    guidelines: Guidelines | None
    scores: dict[str, Table]  # by rater, source, document, generator
    no_generator: bool
    standings: Table | None
    planted: Table | None  # planted errors caught, by kind of error
    standing_note: str
    demonstration: list[str]  # judges near chance, by readable name
    error_answers: list[ErrorAnswer]
    error_answers_total: int
    signoffs: list[Signoff]
    comparisons: Table | None
    comparison_notes: list[str]  # pairs with questions in common but nothing to compare them by yet
    appendix: dict[str, Table] = field(default_factory=dict)
    figures: list[tuple[str, str, str]] = field(default_factory=list)  # (title, data URI, caption)
    figures_data: tuple[Any, ...] = ()  # what they are drawn from: answer scores, points, triage
    calibration: dict[str, Any] | None = None  # the judge's confidence against reviewers (ECE), when measured
    # Which automatic rater the figures come from (app/raters.py): in words in the summary (no number there
    # that is not a traced figure), with its standing's figures in the judges' section.
    speaker: tuple[str, str] | None = None  # its name, and why it speaks
    left_out: list[tuple[str, str]] = field(default_factory=list)  # raters left out of the figures: name, why
    speaker_standing: str = ""
    left_out_standing: list[str] = field(default_factory=list)
    left_out_rule: str = ""

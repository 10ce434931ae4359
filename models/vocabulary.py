"""Words shared by every layer: the LeMAJ tags and the kinds of raters and passages."""

from __future__ import annotations

from enum import StrEnum


class Tag(StrEnum):
    """A LeMAJ data-point tag (LeMAJ section 3.2)."""

    CORRECT = "correct"
    INCORRECT = "incorrect"  # a factual error or a hallucination
    IRRELEVANT = "irrelevant"  # correct, but not an answer to the question
    MISSING = "missing"  # a critical omission, added by the rater


class RaterKind(StrEnum):
    HUMAN = "human"
    JUDGE = "judge"


class PassageKind(StrEnum):
    PARAGRAPH = "paragraph"
    FOOTNOTE = "footnote"
    TOC = "toc"  # table-of-contents lines: kept for citation, left out of search


class ReviewStatus(StrEnum):
    UNREVIEWED = "unreviewed"
    IN_REVIEW = "in_review"
    SUBMITTED = "submitted"


# LeMAJ's holistic answer ratings (Table 8), stored on a review as 1-5 (storage/schema.py's ReviewRow);
# index 0, "—", is "not rated yet", so a label's index is the stored rating.
CORRECTNESS_LABELS = [
    "—",
    "1 Completely incorrect",
    "2 Mostly incorrect",
    "3 Equally correct and incorrect",
    "4 Mostly correct",
    "5 Completely correct",
]
RELEVANCE_LABELS = [
    "—",
    "1 Completely irrelevant",
    "2 Mostly irrelevant",
    "3 Equally relevant and irrelevant",
    "4 Mostly relevant",
    "5 Completely relevant",
]

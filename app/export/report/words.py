"""The report's words: every figure's name as a lawyer reads it (one place: a table column or a
sentence never shows an internal name such as `miss_rate_upper_95_by_document`), and how numbers,
shares and intervals are written."""

from __future__ import annotations

from typing import Any

# Column (or JSON key) -> words. A table asks here for its headings; a key missing here is a bug
# the tests catch, never a heading printed as its key.
COLUMN_WORDS = {
    "rater": "Rater",
    "answers": "Answers",
    "answer_id": "Answer",
    "document": "Document",
    "source": "Source",
    "generator": "Generator",
    "group": "Group",
    "question": "Question",
    "correct": "Correct points",
    "incorrect": "Incorrect points",
    "irrelevant": "Irrelevant points",
    "missing": "Missing points",
    "correctness": "Correctness",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "Relevance (F1)",
    "any_incorrect": "Answers with an error",
    "n_items": "Points rated by two or more",
    "percent_agreement": "Agreement",
    "cohen_kappa": "Cohen's κ",
    "fleiss_kappa": "Fleiss' κ",
    "krippendorff_alpha": "Krippendorff's α",
    "gwet_ac1": "Gwet's AC1",
    "min_correctness": "Correctness at least",
    "min_relevance": "Relevance at least",
    "cleared_count": "Answers cleared",
    "cleared_share": "Share cleared",
    "reviewed_cleared": "Cleared answers reviewed at random",
    "missed": "Of those, with an error",
    "miss_rate": "Miss rate seen",
    "miss_rate_upper_95": "Miss rate, 95 % upper bound",
    "miss_rate_upper_95_by_document": "Miss rate, 95 % upper bound (documents as the unit)",
    "documents_reviewed": "Documents reviewed",
    "hours_saved": "Review hours saved",
    "hours_saved_basis": "Review time assumed",
    "reviews_used": "Random reviews used",
    "reviews_left_out": "Reviews left out (answers not drawn at random)",
    "human_correctness": "Reviewers' correctness of the cleared answers",
    "human_relevance": "Reviewers' relevance of the cleared answers",
    "ppi": "Estimate (reviews and judge) [95 % CI]",
    "judge_only": "Judge alone [95 % CI]",
    "human_only": "Reviewers alone [95 % CI]",
    "reviewed": "Randomly reviewed answers",
    "standing": "Standing",
    "judge": "Judge",
    "labelled": "Human-labelled answers",
    "caught": "Wrong answers caught [95 % CI]",
    "false_alarms": "False alarms on correct answers [95 % CI]",
    "planted": "Planted errors caught",
    "kind": "Kind of error planted",
    "interval": "95 % CI",
    "tag": "Tag",
    "rubric": "Rubric",
    "label": "Verdict",
    "score": "Score",
    "difference": "Difference",
    "figure": "Figure",
    "questions": "Questions answered by both",
    "pair": "Candidate against baseline",
    "compared": "Questions compared",
    "outcomes": "Better / as good / worse",
    "win_rate": "Better where they differ [95 % CI]",
    "correctness_difference": "Correctness, difference [95 % CI]",
    "error_difference": "Answers with an error, difference [95 % CI]",
    # Not "worse", which the outcomes count: a question can be as good, or better, and still hold a regression.
    "regressions": "Questions with a regression",
    "rules": "Rules",
}

TAG_WORDS = {  # what each LeMAJ tag says about a claim
    "correct": "the document supports it and it helps answer the question",
    "incorrect": "the document does not support it, or says otherwise",
    "irrelevant": "true, but it does not help answer the question",
    "missing": "a point the answer leaves out that the question needs (added by the reviewer)",
}


def heading(column: str) -> str:
    return COLUMN_WORDS[column]


def share(value: float | None) -> str:
    """A share as a lawyer writes it: 79 %, 0.4 %, 100 %; — when undefined."""
    if value is None:
        return "—"
    percent = value * 100
    if percent != 0 and abs(percent) < 1:
        return f"{percent:.1f} %"
    return f"{percent:.0f} %"


def score(value: float | None) -> str:
    """A LeMAJ score in [0, 1], two decimals."""
    return "—" if value is None else f"{value:.2f}"


def interval(low: float | None, high: float | None, as_share: bool = True) -> str:
    if low is None or high is None:
        return "—"
    write = share if as_share else score
    return f"{write(low)} – {write(high)}"


def cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)

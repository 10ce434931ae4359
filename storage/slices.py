"""What a slice of the answers groups them by, as a column of the answers joined to their question
and document: the dashboard's scores (storage/scoring.py) and their SQL definition (storage/analytics.py)
slice alike."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, literal
from sqlalchemy.orm.attributes import InstrumentedAttribute
from sqlalchemy.sql import ColumnElement

from storage.schema import AnswerRow, DocumentRow, QuestionRow


def slice_column(by: str) -> ColumnElement[Any] | InstrumentedAttribute[str]:
    """The column a slice groups answers by: "answer", "document", "question", "generator", "rater"
    (everything at once) or any metadata key (source, contract_type…)."""
    if by == "answer":
        return AnswerRow.id
    if by == "document":
        return DocumentRow.name
    if by == "question":
        return QuestionRow.text
    if by == "generator":
        return func.coalesce(AnswerRow.generator, "unknown")
    if by == "rater":
        return literal("all")
    return func.coalesce(AnswerRow.meta[by].as_string(), "unknown")  # metadata: source, contract_type…

"""Import labels from other tools or raters, all or nothing.

One JSON object per line: ``answer_id``, ``rater``, optional ``kind`` (human or judge) and
``data_points``, a list of objects with a ``data_point_id`` or a ``text``, a ``tag`` and optional
``citations`` and ``comment`` — or a string in LeMAJ's inline markup
(``<correct>…</correct> <missing>…</missing>``). A text equal to an existing data point of that
answer labels that point; any other text creates a data point of the rater.

Imported labels take part like native ones: a human rater's line is a submitted review of the answer
(``"sampled": true`` says the answer was drawn at random for review, so the review backs triage
bounds and estimates), and a judge rater's line is that judge's run on the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from app.errors import InvalidInput
from app.ingest.datasets import jsonl_objects
from app.project import Project
from models.verdict import align
from models.vocabulary import OutcomeStatus, RaterKind, ReviewStatus, Tag
from storage import answers, audit, documents, raters, reviews, statistics
from storage.points import key_points
from storage.schema import CitationRow, DataPointRow, JudgeOutcomeRow, LabelRow, PassageRow

_MARKUP = re.compile(r"<(correct|incorrect|irrelevant|missing)>(.*?)</\1>", re.S | re.I)


@dataclass
class LabelImportSummary:
    lines: int = 0
    labels: int = 0
    data_points_created: int = 0
    raters_created: list[str] = field(default_factory=list)
    sampled: int = 0  # answers recorded as drawn at random


def parse_markup(markup: str) -> list[dict[str, Any]]:
    """LeMAJ's inline markup as data points: <tag>text</tag> pieces, in order."""
    return [{"text": " ".join(text.split()), "tag": tag.lower()} for tag, text in _MARKUP.findall(markup)]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _field_problem(point: dict[str, Any]) -> str | None:
    """What is wrong with a data point's optional fields, checked before anything is written."""
    confidence = point.get("confidence")
    if confidence is not None and (type(confidence) not in (int, float) or not 0 <= confidence <= 1):
        return "'confidence' must be a number from 0 to 1"
    for name in ("rationale", "comment"):
        if point.get(name) is not None and not isinstance(point[name], str):
            return f"{name!r} must be text"
    citations = point.get("citations")
    if citations is not None and not (isinstance(citations, list) and all(isinstance(c, str) for c in citations)):
        return "'citations' must be a list of citation ids"
    span = point.get("span")
    if span is not None and not (isinstance(span, list) and len(span) == 2 and all(type(o) is int for o in span)):
        return "'span' must be two offsets into the answer"
    return None


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    records = []
    for place, record in jsonl_objects(path):
        for key in ("answer_id", "rater"):
            if not isinstance(record.get(key), str) or not record[key].strip():
                raise InvalidInput(place, f"field {key!r} is missing or not text")
        points = record.get("data_points", record.get("markup"))
        if isinstance(points, str):
            points = parse_markup(points)
        if not isinstance(points, list) or not points:
            raise InvalidInput(place, "field 'data_points' must be a non-empty list or LeMAJ markup")
        for i, point in enumerate(points, start=1):
            if not isinstance(point, dict) or _text(point.get("tag")) not in {t.value for t in Tag}:
                raise InvalidInput(place, f"data point {i}: 'tag' must be correct, incorrect, irrelevant or missing")
            if not isinstance(point.get("data_point_id"), int) and not (
                isinstance(point.get("text"), str) and point["text"].strip()
            ):
                raise InvalidInput(place, f"data point {i}: give a 'data_point_id' or a 'text'")
            if problem := _field_problem(point):
                raise InvalidInput(place, f"data point {i}: {problem}")
        if _text(record.get("kind", "human")) not in {k.value for k in RaterKind}:
            raise InvalidInput(place, "field 'kind' must be human or judge")
        if not isinstance(record.get("sampled", False), bool):
            raise InvalidInput(place, "field 'sampled' must be true or false")
        record["data_points"] = points
        records.append((place, record))
    return records


def import_labels(project: Project, path: Path, actor: str = "import-labels") -> LabelImportSummary:
    if not path.is_file():
        raise InvalidInput(str(path), "no such file")
    records = _records(path)
    summary = LabelImportSummary(lines=len(records))
    sampled: list[str] = []
    with project.sessions.begin() as session:
        for place, record in records:
            answer = answers.answer_detail(session, record["answer_id"])
            if answer is None:
                raise InvalidInput(place, f"no answer {record['answer_id']!r} in the project")
            rater = raters.rater_named(session, record["rater"])
            if rater is None:
                kind = RaterKind(record.get("kind", "human"))
                rater = raters.add_rater(session, record["rater"], kind, {"imported_from": path.name}, actor)
                summary.raters_created.append(rater.name)
            passages = {p.citation_id: p.id for p in documents.passages_of(session, answer.document_id)}
            existing = {
                row.id: row for row in session.scalars(select(DataPointRow).where(DataPointRow.answer_id == answer.id))
            }
            # A text that occurs twice in an answer names its points in order: first, then second.
            by_text: dict[str, list[DataPointRow]] = {}
            for row in sorted(existing.values(), key=lambda r: (r.rater_id, r.ordinal, r.id)):
                by_text.setdefault(" ".join(row.text.split()), []).append(row)
            used: dict[str, int] = {}
            created_before = summary.data_points_created
            new_ids: list[int] = []
            for i, point in enumerate(record["data_points"], start=1):
                row = _target(session, place, i, point, answer, rater.id, existing, by_text, used, summary)
                if summary.data_points_created > created_before + len(new_ids):
                    new_ids.append(row.id)
                session.merge(
                    LabelRow(
                        id=session.scalar(
                            select(LabelRow.id).where(LabelRow.data_point_id == row.id, LabelRow.rater_id == rater.id)
                        ),
                        data_point_id=row.id,
                        rater_id=rater.id,
                        tag=point["tag"],
                        confidence=point.get("confidence"),
                        rationale=point.get("rationale"),
                    )
                )
                if point.get("comment"):
                    row.comment = point["comment"]
                for citation in point.get("citations") or ():
                    if citation in passages and session.get(CitationRow, (row.id, passages[citation])) is None:
                        session.add(CitationRow(data_point_id=row.id, passage_id=passages[citation]))
                summary.labels += 1
            key_points(session, answer.id, new_ids)  # after citations: a missing point's passage
            if rater.kind is RaterKind.JUDGE:
                _judged(session, rater.id, answer.id)
            else:
                reviews.update_review(session, answer.id, rater.id, status=ReviewStatus.SUBMITTED)
                if record.get("sampled"):
                    sampled.append(answer.id)
            audit.append_audit(
                session,
                actor,
                "labels.imported",
                "answer",
                answer.id,
                {"rater": rater.name, "points": len(record["data_points"])},
            )
        if sampled:
            population = len(statistics.answer_ids(session))
            statistics.add_sampled(session, sorted(set(sampled)), None, population, actor)
    summary.sampled = len(set(sampled))
    return summary


def _judged(session, rater_id: int, answer_id: str) -> None:
    """An imported judge's labels on an answer stand for a judge run on it (triage looks for runs)."""
    found = session.scalar(
        select(JudgeOutcomeRow).where(JudgeOutcomeRow.rater_id == rater_id, JudgeOutcomeRow.answer_id == answer_id)
    )
    if found is None:
        session.add(
            JudgeOutcomeRow(rater_id=rater_id, answer_id=answer_id, status=OutcomeStatus.JUDGED.value, attempts=0)
        )
    elif found.status != OutcomeStatus.JUDGED:
        found.status, found.error = OutcomeStatus.JUDGED.value, None
    session.flush()


def _target(session, place, i, point, answer, rater_id, existing, by_text, used, summary) -> DataPointRow:
    answer_text = answer.text
    if isinstance(point.get("data_point_id"), int):
        row = existing.get(point["data_point_id"])
        if row is None:
            raise InvalidInput(place, f"data point {i}: no data point {point['data_point_id']} in this answer")
        return row
    text = " ".join(point["text"].split())
    nth = used.get(text, 0)
    used[text] = nth + 1
    same = by_text.get(text, [])
    if point["tag"] == Tag.MISSING.value and point.get("citations"):
        # An omission is its words and the passage it points to: the same words about another
        # clause are another point.
        cited = {c for c in point["citations"] if isinstance(c, str)}
        same = [r for r in same if r.span_start is not None or _cited(session, r.id) & cited]
    if nth < len(same):
        return same[nth]
    span = point.get("span")
    if point["tag"] == Tag.MISSING.value:
        start = end = None
    elif isinstance(span, list) and len(span) == 2 and answer_text[span[0] : span[1]] == point["text"]:
        start, end = span
    else:
        found = align(point["text"], answer_text)
        if found is None:
            raise InvalidInput(place, f"data point {i}: tagged {point['tag']} but its text is not in the answer")
        start, end = found[0], found[1]
    row = DataPointRow(
        answer_id=answer.id,
        rater_id=rater_id,
        ordinal=len(existing),
        text=point["text"] if start is None else answer_text[start:end],
        span_start=start,
        span_end=end,
    )
    return _add_point(session, row, existing, by_text, text, summary)


def _add_point(session, row, existing, by_text, text, summary) -> DataPointRow:
    session.add(row)
    session.flush()
    existing[row.id] = row
    by_text.setdefault(text, []).append(row)
    summary.data_points_created += 1
    return row


def _cited(session, point_id: int) -> set[str]:
    return set(
        session.scalars(
            select(PassageRow.citation_id)
            .join(CitationRow, CitationRow.passage_id == PassageRow.id)
            .where(CitationRow.data_point_id == point_id)
        )
    )

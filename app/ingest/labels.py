"""Import labels from other tools or raters, all or nothing.

One JSON object per line: ``answer_id``, ``rater``, optional ``kind`` (human or judge) and
``data_points``, a list of objects with a ``data_point_id`` or a ``text``, a ``tag`` and optional
``citations`` and ``comment`` — or a string in LeMAJ's inline markup
(``<correct>…</correct> <missing>…</missing>``). A text equal to an existing data point of that
answer labels that point; any other text creates a data point of the rater.

Or span labels, as RAGTruth and ContractNLI give them: ``spans`` (or ``labels``, with ``id`` for the
answer as in a dataset's truth.jsonl), a list of ``{"start", "end", "label"}`` character offsets into the
answer, label ``supported``, ``contradicted`` or ``unsupported``, with an optional ``text`` that must be
``answer[start:end]`` (else the labels were made for another answer text). Tags are given to data
points, so spans are mapped onto the answer's own segmentation (``segment_answer``, the points a judge
run and a reviewer start from; never another rater's added points): a point is ``incorrect`` when it
shares a non-whitespace character with any contradicted or unsupported span, else ``correct`` — text
outside every span counts as supported, as in RAGTruth, and an error anywhere in a claim makes the
claim wrong, even where a supported span overlaps it too. A span across two points marks both; an
empty list says the whole answer is supported. Each label's rationale names the spans that decided it.
The points are the rater's own records (found again on a re-import), keyed with other raters' points
of the same span. A line without ``rater`` takes the one the caller names (``--rater``).

A line with ``preference`` instead carries a reviewer's pairwise preference between two answers to one
question (storage/preferences.py gives its form; `assay export --format jsonl` writes them).

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
from models.segmentation import Segment, segment_answer
from models.verdict import align
from models.vocabulary import OutcomeStatus, RaterKind, ReviewStatus, Tag
from storage import answers, audit, documents, raters, reviews, statistics
from storage.points import key_points
from storage.preferences import preference_problem, record_preference, same_question
from storage.schema import CitationRow, DataPointRow, JudgeOutcomeRow, LabelRow, PassageRow

_MARKUP = re.compile(r"<(correct|incorrect|irrelevant|missing)>(.*?)</\1>", re.S | re.I)
SPAN_LABELS = ("supported", "contradicted", "unsupported")


@dataclass
class LabelImportSummary:
    lines: int = 0
    labels: int = 0
    data_points_created: int = 0
    raters_created: list[str] = field(default_factory=list)
    sampled: int = 0  # answers recorded as drawn at random
    preferences: int = 0  # pairwise preferences between two answers


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


def _records(path: Path, default_rater: str | None) -> list[tuple[str, dict[str, Any]]]:
    records = []
    for place, record in jsonl_objects(path):
        spans = "spans" in record or "labels" in record
        if spans and "answer_id" not in record:
            record["answer_id"] = record.get("id")
        if record.get("rater") is None:
            if default_rater is None:
                raise InvalidInput(place, "no 'rater' on this line: give one, or name the rater with --rater")
            record["rater"] = default_rater
        if "preference" in record:  # a pairwise preference between two answers, no labels
            records.append((place, _checked_preference(place, record)))
            continue
        for key in ("answer_id", "rater"):
            if not isinstance(record.get(key), str) or not record[key].strip():
                raise InvalidInput(place, f"field {key!r} is missing or not text")
        if spans:
            record["spans"] = _checked_spans(place, record)
            records.append((place, _checked_kind(place, record)))
            continue
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
        record["data_points"] = points
        records.append((place, _checked_kind(place, record)))
    return records


def _checked_kind(place: str, record: dict[str, Any]) -> dict[str, Any]:
    if _text(record.get("kind", "human")) not in {k.value for k in RaterKind}:
        raise InvalidInput(place, "field 'kind' must be human or judge")
    if not isinstance(record.get("sampled", False), bool):
        raise InvalidInput(place, "field 'sampled' must be true or false")
    return record


def _checked_spans(place: str, record: dict[str, Any]) -> list[dict[str, Any]]:
    """A line's spans, checked for all that can be known without the answer's text."""
    if "data_points" in record or "markup" in record:
        raise InvalidInput(place, "give spans or data points, not both")
    spans = record["spans"] if "spans" in record else record["labels"]
    if not isinstance(spans, list):
        raise InvalidInput(place, "field 'spans' must be a list (empty when the whole answer is supported)")
    for i, span in enumerate(spans, start=1):
        if not isinstance(span, dict) or type(span.get("start")) is not int or type(span.get("end")) is not int:
            raise InvalidInput(place, f"span {i}: 'start' and 'end' must be whole numbers")
        if span["start"] < 0 or span["end"] <= span["start"]:
            raise InvalidInput(place, f"span {i}: needs 0 <= start < end, got {span['start']}-{span['end']}")
        if span.get("label") not in SPAN_LABELS:
            raise InvalidInput(place, f"span {i}: 'label' must be supported, contradicted or unsupported")
        if span.get("text") is not None and not isinstance(span["text"], str):
            raise InvalidInput(place, f"span {i}: 'text' must be text")
    return spans


def _span_points(place: str, answer: str, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer's segmentation as data points, each tagged from the spans it shares text with
    (the rule is in the module docstring); refuses spans that do not fit this answer's text."""
    for i, span in enumerate(spans, start=1):
        if span["end"] > len(answer):
            raise InvalidInput(place, f"span {i}: ends at {span['end']}, past the answer's {len(answer)} characters")
        if span.get("text") is not None and span["text"] != answer[span["start"] : span["end"]]:
            raise InvalidInput(place, f"span {i}: its text is not the answer's text at {span['start']}-{span['end']}")
    points = []
    for segment in segment_answer(answer) or [Segment(0, len(answer), answer)]:
        hits = [s for s in spans if _shares_text(answer, segment, s)]
        errors = [s for s in hits if s["label"] != "supported"]
        reasons = [f"span label {s['label']}: '{answer[s['start'] : s['end']]}'" for s in errors or hits]
        points.append(
            {
                "text": segment.text,
                "span": [segment.start, segment.end],
                "context": [segment.context_start, segment.context_end],
                "tag": Tag.INCORRECT.value if errors else Tag.CORRECT.value,
                "rationale": "; ".join(reasons) or "outside every span: supported",
            }
        )
    return points


def _shares_text(answer: str, segment: Segment, span: dict[str, Any]) -> bool:
    common = answer[max(segment.start, span["start"]) : min(segment.end, span["end"])]
    return any(not ch.isspace() for ch in common)


def import_labels(
    project: Project, path: Path, actor: str = "import-labels", default_rater: str | None = None
) -> LabelImportSummary:
    """Import a labels file in one transaction; `default_rater` is the rater of lines that name none."""
    if not path.is_file():
        raise InvalidInput(str(path), "no such file")
    records = _records(path, default_rater)
    summary = LabelImportSummary(lines=len(records))
    sampled: list[str] = []
    with project.sessions.begin() as session:
        for place, record in records:
            if "preference" in record:
                _import_preference(session, place, record, path, actor, summary)
                continue
            answer = answers.answer_detail(session, record["answer_id"])
            if answer is None:
                raise InvalidInput(place, f"no answer {record['answer_id']!r} in the project")
            if "spans" in record:
                record["data_points"] = _span_points(place, answer.text, record["spans"])
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
                if "spans" in record:
                    row = _own_point(session, answer.id, rater.id, point, existing, summary)
                else:
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


def _own_point(session, answer_id: str, rater_id: int, point, existing, summary) -> DataPointRow:
    """The rater's own record of a segment, found again on a re-import: their review then holds every
    point of the answer, and key_points pairs it with other raters' points of the same span."""
    start, end = point["span"]
    for row in existing.values():
        if row.rater_id == rater_id and (row.span_start, row.span_end) == (start, end):
            return row
    row = DataPointRow(
        answer_id=answer_id,
        rater_id=rater_id,
        ordinal=len(existing),
        text=point["text"],
        span_start=start,
        span_end=end,
        context_start=point["context"][0],
        context_end=point["context"][1],
    )
    session.add(row)
    session.flush()
    existing[row.id] = row
    summary.data_points_created += 1
    return row


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


def _checked_preference(place: str, record: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(record.get("rater"), str) or not record["rater"].strip():
        raise InvalidInput(place, "field 'rater' is missing or not text")
    if record.get("kind", "human") != RaterKind.HUMAN.value:
        raise InvalidInput(place, "a preference is a human reviewer's: 'kind' must be human")
    if problem := preference_problem(record["preference"]):
        raise InvalidInput(place, problem)
    return record


def _import_preference(session, place: str, record: dict[str, Any], path: Path, actor: str, summary) -> None:
    """A reviewer's preference between two answers to one question, replacing theirs on that pair."""
    first, second = record["preference"]["answers"]
    for answer_id in (first, second):
        if answers.answer_detail(session, answer_id) is None:
            raise InvalidInput(place, f"no answer {answer_id!r} in the project")
    if not same_question(session, first, second):
        raise InvalidInput(place, f"answers {first!r} and {second!r} do not answer the same question")
    rater = raters.rater_named(session, record["rater"])
    if rater is None:
        rater = raters.add_rater(session, record["rater"], RaterKind.HUMAN, {"imported_from": path.name}, actor)
        summary.raters_created.append(rater.name)
    elif rater.kind is not RaterKind.HUMAN:
        raise InvalidInput(place, f"{rater.name!r} is a judge run in this project; a preference is a reviewer's")
    record_preference(session, rater.id, actor, record["preference"])
    summary.preferences += 1

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

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update

from app import limits
from app.errors import InvalidInput
from app.ingest.datasets import jsonl_objects
from app.project import Project
from models.segmentation import Segment, segment_answer
from models.verdict import align
from models.vocabulary import OutcomeStatus, RaterKind, ReviewStatus, Tag
from storage import answers, audit, documents, raters, signoffs, statistics
from storage.adjudication import CONSENSUS
from storage.points import key_points
from storage.preferences import preference_problem, record_preference, same_question
from storage.schema import (
    AnswerRow,
    CitationRow,
    DataPointRow,
    JudgeOutcomeRow,
    LabelRow,
    PassageRow,
    QuestionRow,
    ReviewRow,
)

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
    """Every line checked for what can be known without the project: shape, tags, kinds, and lines
    that contradict each other (one answer and rater labelled twice, differently; one rater as human
    and as judge)."""
    records = []
    for place, record in jsonl_objects(path, limits.LABELS, "a labels file"):
        spans = "spans" in record or "labels" in record
        if "id" in record and "answer_id" not in record and not spans and not {"data_points", "markup"} & set(record):
            raise InvalidInput(place, "field 'labels' is missing (a truth line gives an answer's 'id' and 'labels')")
        if spans and "answer_id" not in record:
            record["answer_id"] = record.get("id")
        if record.get("rater") is None:
            if default_rater is None:
                raise InvalidInput(place, "no 'rater' on this line: give one, or name the rater with --rater")
            record["rater"] = default_rater
        if isinstance(record.get("rater"), str):
            record["rater"] = " ".join(record["rater"].split())  # " alice " is alice
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


def _repeated(
    place: str,
    record: dict[str, Any],
    first_of: dict[tuple[str, str], tuple[str, dict[str, Any]]],
    kind_of: dict[str, tuple[str, str]],
) -> bool:
    """Whether the line repeats an earlier one (True: skip it); InvalidInput when it contradicts one:
    the same answer and rater labelled differently, or one rater given as human and as judge."""
    kind = record.get("kind", "human")
    if record["rater"] in kind_of and kind_of[record["rater"]][0] != kind:
        said, where = kind_of[record["rater"]]
        raise InvalidInput(place, f"rater {record['rater']!r} is {kind} here but {said} at {where}: one kind a rater")
    kind_of.setdefault(record["rater"], (kind, place))
    key = (record["answer_id"], record["rater"])
    if key in first_of:
        where, earlier = first_of[key]
        if _content(earlier) != _content(record):
            raise InvalidInput(
                place,
                f"answer {key[0]!r} is labelled by {key[1]!r} at {where} and again here, differently: "
                "keep one line per answer and rater",
            )
        return True  # the same line twice: once is enough
    first_of[key] = (place, record)
    return False


def _content(record: dict[str, Any]) -> str:
    """What a line says, to tell a repeated line from a contradicting one."""
    said = {k: v for k, v in record.items() if k not in ("answer_id", "id", "rater")}
    return json.dumps(said, sort_keys=True, default=str)


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


Progress = Callable[[int, int], None]  # (lines done, lines in all): a progress bar's callback


@dataclass
class _Answer:
    id: str
    text: str
    document_id: int


def _answers(session, ids: set[str]) -> dict[str, _Answer]:
    """The answers these lines name, read in chunks (a file may name hundreds of thousands)."""
    found: dict[str, _Answer] = {}
    wanted = sorted(ids)
    for at in range(0, len(wanted), 500):
        rows = session.execute(
            select(AnswerRow.id, AnswerRow.text, QuestionRow.document_id)
            .join(QuestionRow, AnswerRow.question_id == QuestionRow.id)
            .where(AnswerRow.id.in_(wanted[at : at + 500]))
        )
        found |= {row.id: _Answer(row.id, row.text, row.document_id) for row in rows}
    return found


def _check_against_project(
    session, records: list[tuple[str, dict[str, Any]]]
) -> tuple[dict[str, _Answer], list[tuple[str, dict[str, Any]]]]:
    """The second half of the check, against the project, before anything is written: the answers
    exist and the spans fit them, no rater changes kind, no line writes under the consensus's name,
    no line changes a review its reviewer signed off, and no line contradicts another. Returns the
    answers and the lines to write (a line repeated word for word, once)."""
    found = _answers(session, {r["answer_id"] for _, r in records if "preference" not in r})
    known: dict[str, raters.Rater | None] = {}
    first_of: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}  # (answer, rater): its line
    kind_of: dict[str, tuple[str, str]] = {}  # rater: (kind, the line that said so)
    kept = []
    in_force = signoffs.signoffs_in_force(session)  # one query, not one a line
    for place, record in records:
        name = record["rater"]
        if name not in known:
            known[name] = raters.rater_named(session, name)
        rater = known[name]
        if name.casefold() == CONSENSUS or (rater is not None and rater.config.get("consensus")):
            raise InvalidInput(
                place,
                f"{name!r} is the adjudicated consensus: it is written only by adjudication (assay adjudicate), "
                "so labels are not imported under its name",
            )
        if "preference" in record:
            kept.append((place, record))
            continue
        answer = found.get(record["answer_id"])
        if answer is None:
            raise InvalidInput(place, f"no answer {record['answer_id']!r} in the project")
        if "spans" in record:
            record["data_points"] = _span_points(place, answer.text, record["spans"])
        else:
            _check_points(session, place, answer, record["data_points"])
        kind = record.get("kind")
        if rater is not None and kind is not None and kind != rater.kind.value:
            raise InvalidInput(place, f"{name!r} is a {rater.kind.value} rater in this project, not a {kind} one")
        if rater is not None and rater.kind is RaterKind.HUMAN:
            signed = in_force.get((answer.id, rater.name))
            if signed is not None:
                raise InvalidInput(
                    place,
                    f"{name} signed off answer {answer.id} on {signed.signed_at:%Y-%m-%d %H:%M} UTC: reopen it "
                    "(assay reopen) before importing labels over that review; nothing was imported",
                )
        if not _repeated(place, record, first_of, kind_of):
            kept.append((place, record))
    return found, kept


def _check_points(session, place: str, answer: _Answer, points: list[dict[str, Any]]) -> None:
    """A point named by id is one of the answer's; a point's text is in the answer (or is the text of
    a point already stored, which a reviewer may have edited)."""
    for i, point in enumerate(points, start=1):
        if isinstance(point.get("data_point_id"), int):
            here = session.scalar(
                select(DataPointRow.id).where(
                    DataPointRow.id == point["data_point_id"], DataPointRow.answer_id == answer.id
                )
            )
            if here is None:
                raise InvalidInput(place, f"data point {i}: no data point {point['data_point_id']} in this answer")
            continue
        try:
            _located(place, i, point, answer.text)
        except InvalidInput:
            text = " ".join(point["text"].split())
            stored = session.scalars(select(DataPointRow.text).where(DataPointRow.answer_id == answer.id))
            if not any(" ".join(t.split()) == text for t in stored):
                raise


def import_labels(
    project: Project,
    path: Path,
    actor: str = "import-labels",
    default_rater: str | None = None,
    on_progress: Progress | None = None,
) -> LabelImportSummary:
    """Import a labels file in one transaction; `default_rater` is the rater of lines that name none.
    Every line is checked first, the file and then against the project, so a bad line (the last one
    too) is reported before anything is written; `on_progress` hears the lines written."""
    if not path.exists():
        raise InvalidInput(str(path), "no such file")
    limits.check_regular(path, limits.LABELS, "a labels file")
    with project.sessions() as session:
        found, records = _check_against_project(session, _records(path, default_rater))
    summary = LabelImportSummary(lines=len(records))
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}  # by answer, lines in file order
    for place, record in records:
        if "preference" not in record:
            groups.setdefault(record["answer_id"], []).append((place, record))
    done, total = 0, len(records)
    with project.sessions.begin() as session:
        writer = _Writer(session, path, actor, summary)
        for answer_id, lines in groups.items():
            writer.answer(found[answer_id], lines)
            done += len(lines)
            if on_progress is not None:
                on_progress(done, total)
        sampled = writer.sampled
        for place, record in records:
            if "preference" in record:
                _import_preference(session, place, record, path, actor, summary)
        if on_progress is not None:
            on_progress(total, total)
        if sampled:
            population = len(statistics.answer_ids(session))
            statistics.add_sampled(session, sorted(set(sampled)), None, population, actor)
    summary.sampled = len(set(sampled))
    return summary


class _Writer:
    """The write half of an import, an answer at a time: the answer's points read once, its new points
    flushed once, its labels, citations, reviews and judge runs written in a few statements, one audit
    entry for the answer. (A line at a time took 4 ms; 259 k lines, 19 minutes.)"""

    def __init__(self, session, path: Path, actor: str, summary: LabelImportSummary) -> None:
        self.session, self.path, self.actor, self.summary = session, path, actor, summary
        self.raters: dict[str, raters.Rater] = {}
        self.passages: dict[int, dict[str, int]] = {}
        self.sampled: list[str] = []

    def rater(self, record: dict[str, Any]) -> raters.Rater:
        name = record["rater"]
        if name not in self.raters:
            found = raters.rater_named(self.session, name)
            if found is None:
                kind = RaterKind(record.get("kind", "human"))
                found = raters.add_rater(self.session, name, kind, {"imported_from": self.path.name}, self.actor)
                self.summary.raters_created.append(found.name)
            self.raters[name] = found
        return self.raters[name]

    def citations_of(self, document_id: int) -> dict[str, int]:
        if document_id not in self.passages:
            self.passages[document_id] = {p.citation_id: p.id for p in documents.passages_of(self.session, document_id)}
        return self.passages[document_id]

    def answer(self, answer: _Answer, lines: list[tuple[str, dict[str, Any]]]) -> None:
        session, summary = self.session, self.summary
        points = _Points(session, answer)
        chosen: list[tuple[raters.Rater, DataPointRow, dict[str, Any]]] = []
        for place, record in lines:
            rater = self.rater(record)
            used: dict[str, int] = {}
            for i, point in enumerate(record["data_points"], start=1):
                if "spans" in record:
                    row = points.own(rater.id, point)
                else:
                    row = points.target(place, i, point, rater.id, used)
                chosen.append((rater, row, point))
        session.flush()  # the new points' ids, once for the answer
        summary.data_points_created += len(points.new)
        self._labels(chosen)
        self._citations(answer, chosen, points)
        key_points(session, answer.id, [row.id for row in points.new])  # after citations: a missing point's
        self._reviews(answer.id, [(self.rater(record), record) for _, record in lines])
        counts: dict[str, int] = {}
        for _, record in lines:
            counts[record["rater"]] = counts.get(record["rater"], 0) + len(record["data_points"])
        audit.append_audit(session, self.actor, "labels.imported", "answer", answer.id, {"raters": counts})

    def _labels(self, chosen: list[tuple[raters.Rater, DataPointRow, dict[str, Any]]]) -> None:
        """One label a point and rater: a point given twice takes its last tag, as a re-import does."""
        wanted: dict[tuple[int, int], dict[str, Any]] = {}
        for rater, row, point in chosen:
            wanted[(row.id, rater.id)] = {
                "tag": point["tag"],
                "confidence": point.get("confidence"),
                "rationale": point.get("rationale"),
            }
            if point.get("comment"):
                row.comment = point["comment"]
            self.summary.labels += 1
        ids = {point_id for point_id, _ in wanted}
        here = {
            (row.data_point_id, row.rater_id): row.id
            for row in self.session.execute(
                select(LabelRow.id, LabelRow.data_point_id, LabelRow.rater_id).where(LabelRow.data_point_id.in_(ids))
            )
        }
        new = [{"data_point_id": p, "rater_id": r, **v} for (p, r), v in wanted.items() if (p, r) not in here]
        old = [{"id": here[(p, r)], **v} for (p, r), v in wanted.items() if (p, r) in here]
        if new:
            self.session.execute(insert(LabelRow), new)
        if old:  # by primary key, in one statement
            self.session.execute(update(LabelRow), old)

    def _citations(self, answer: _Answer, chosen, points: _Points) -> None:
        pairs: set[tuple[int, int]] = set()
        for _, row, point in chosen:
            if point.get("citations"):
                passages = self.citations_of(answer.document_id)
                pairs |= {(row.id, passages[c]) for c in point["citations"] if c in passages}
        if not pairs:
            return
        here = {
            (row[0], row[1])
            for row in self.session.execute(
                select(CitationRow.data_point_id, CitationRow.passage_id).where(
                    CitationRow.data_point_id.in_({p for p, _ in pairs})
                )
            ).all()
        }
        new = [{"data_point_id": p, "passage_id": q} for p, q in sorted(pairs - here)]
        if new:
            self.session.execute(insert(CitationRow), new)

    def _reviews(self, answer_id: str, lines: list[tuple[raters.Rater, dict[str, Any]]]) -> None:
        """A human's line is a submitted review of the answer; a judge's, that judge's run on it."""
        humans = {r.id for r, _ in lines if r.kind is not RaterKind.JUDGE}
        judges = {r.id for r, _ in lines if r.kind is RaterKind.JUDGE}
        self.sampled += [answer_id for r, record in lines if r.id in humans and record.get("sampled")][:1]
        session = self.session
        if humans:
            reviewed = set(
                session.scalars(
                    select(ReviewRow.rater_id).where(ReviewRow.answer_id == answer_id, ReviewRow.rater_id.in_(humans))
                )
            )
            if reviewed:
                session.execute(
                    update(ReviewRow)
                    .where(ReviewRow.answer_id == answer_id, ReviewRow.rater_id.in_(reviewed))
                    .values(status=ReviewStatus.SUBMITTED.value),
                    execution_options={"synchronize_session": False},
                )
            new = [
                {"answer_id": answer_id, "rater_id": r, "status": ReviewStatus.SUBMITTED.value}
                for r in sorted(humans - reviewed)
            ]
            if new:
                session.execute(insert(ReviewRow), new)
        for rater_id in sorted(judges):
            _judged(session, rater_id, answer_id)


class _Points:
    """An answer's data points while an import writes to it: those stored, and those it adds."""

    def __init__(self, session, answer: _Answer) -> None:
        self.session, self.answer = session, answer
        rows = list(session.scalars(select(DataPointRow).where(DataPointRow.answer_id == answer.id)))
        self.by_id = {row.id: row for row in rows}
        self.all: list[DataPointRow] = list(rows)
        self.new: list[DataPointRow] = []
        self.cited: dict[int, set[str]] = {}  # a new point's citations, by id(row), before they are stored
        # A text that occurs twice in an answer names its points in order: first, then second.
        self.by_text: dict[str, list[DataPointRow]] = {}
        for row in sorted(rows, key=lambda r: (r.rater_id, r.ordinal, r.id)):
            self.by_text.setdefault(" ".join(row.text.split()), []).append(row)

    def _add(self, row: DataPointRow, text: str | None = None) -> DataPointRow:
        self.session.add(row)
        self.all.append(row)
        self.new.append(row)
        if text is not None:
            self.by_text.setdefault(text, []).append(row)
        return row

    def own(self, rater_id: int, point: dict[str, Any]) -> DataPointRow:
        """The rater's own record of a segment, found again on a re-import: their review then holds every
        point of the answer, and key_points pairs it with other raters' points of the same span."""
        start, end = point["span"]
        for row in self.all:
            if row.rater_id == rater_id and (row.span_start, row.span_end) == (start, end):
                return row
        return self._add(
            DataPointRow(
                answer_id=self.answer.id,
                rater_id=rater_id,
                ordinal=len(self.all),
                text=point["text"],
                span_start=start,
                span_end=end,
                context_start=point["context"][0],
                context_end=point["context"][1],
            )
        )

    def _cited(self, row: DataPointRow) -> set[str]:
        if id(row) in self.cited:
            return self.cited[id(row)]
        return _cited(self.session, row.id) if row.id is not None else set()

    def target(self, place: str, i: int, point: dict[str, Any], rater_id: int, used: dict[str, int]) -> DataPointRow:
        if isinstance(point.get("data_point_id"), int):
            return self.by_id[point["data_point_id"]]  # checked before anything was written
        text = " ".join(point["text"].split())
        nth = used.get(text, 0)
        used[text] = nth + 1
        same = self.by_text.get(text, [])
        if point["tag"] == Tag.MISSING.value and point.get("citations"):
            # An omission is its words and the passage it points to: the same words about another
            # clause are another point.
            cited = {c for c in point["citations"] if isinstance(c, str)}
            same = [r for r in same if r.span_start is not None or self._cited(r) & cited]
        if nth < len(same):
            return same[nth]
        start, end = _located(place, i, point, self.answer.text)
        row = self._add(
            DataPointRow(
                answer_id=self.answer.id,
                rater_id=rater_id,
                ordinal=len(self.all),
                text=point["text"] if start is None else self.answer.text[start:end],
                span_start=start,
                span_end=end,
            ),
            text,
        )
        if point.get("citations"):
            self.cited[id(row)] = {c for c in point["citations"] if isinstance(c, str)}
        return row


def _located(place: str, i: int, point: dict[str, Any], answer_text: str) -> tuple[int | None, int | None]:
    """Where a point's text lies in the answer (None, None for a missing point); InvalidInput when it
    is not there. Found once, while checking, and kept with the point."""
    if "_at" in point:
        return point["_at"]
    span = point.get("span")
    if point["tag"] == Tag.MISSING.value:
        at: tuple[int | None, int | None] = (None, None)
    elif isinstance(span, list) and len(span) == 2 and answer_text[span[0] : span[1]] == point["text"]:
        at = (span[0], span[1])
    else:
        found = align(point["text"], answer_text)
        if found is None:
            raise InvalidInput(place, f"data point {i}: tagged {point['tag']} but its text is not in the answer")
        at = (found[0], found[1])
    point["_at"] = at
    return at


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

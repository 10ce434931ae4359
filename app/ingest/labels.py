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

from app import limits
from app.errors import InvalidInput
from app.ingest.datasets import jsonl_objects
from app.project import Project
from models.segmentation import Segment
from models.verdict import align
from models.vocabulary import RaterKind, Tag
from storage import answers, raters, signoffs, statistics
from storage.adjudication import CONSENSUS
from storage.label_import import AnswerText, LabelWriter, answer_texts, has_point, point_texts
from storage.preferences import preference_problem, record_preference, same_question

_MARKUP = re.compile(r"<(correct|incorrect|irrelevant|missing)>(.*?)</\1>", re.S | re.I)
SPAN_LABELS = ("supported", "contradicted", "unsupported")
TAGS = frozenset(t.value for t in Tag)  # once, not once a data point (a large file has millions)
KINDS = frozenset(k.value for k in RaterKind)


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
            if not isinstance(point, dict) or _text(point.get("tag")) not in TAGS:
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
    if _text(record.get("kind", "human")) not in KINDS:
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


def _span_points(place: str, answer: str, spans: list[dict[str, Any]], segments: list[Segment]) -> list[dict[str, Any]]:
    """The answer's segmentation as data points, each tagged from the spans it shares text with
    (the rule is in the module docstring); refuses spans that do not fit this answer's text."""
    for i, span in enumerate(spans, start=1):
        if span["end"] > len(answer):
            raise InvalidInput(place, f"span {i}: ends at {span['end']}, past the answer's {len(answer)} characters")
        if span.get("text") is not None and span["text"] != answer[span["start"] : span["end"]]:
            raise InvalidInput(place, f"span {i}: its text is not the answer's text at {span['start']}-{span['end']}")
    points = []
    for segment in segments or [Segment(0, len(answer), answer)]:
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


def _check_against_project(
    session, records: list[tuple[str, dict[str, Any]]]
) -> tuple[dict[str, AnswerText], list[tuple[str, dict[str, Any]]], dict[str, list[Segment]]]:
    """The second half of the check, against the project, before anything is written: the answers
    exist and the spans fit them, no rater changes kind, no line writes under the consensus's name,
    no line changes a review its reviewer signed off, and no line contradicts another. Returns the
    answers, the lines to write (a line repeated word for word, once) and the segmentations of the
    answers span labels are given to (as stored, else segmented now, to be stored with the labels)."""
    found = answer_texts(session, {r["answer_id"] for _, r in records if "preference" not in r})
    segmented = answers.segmentations(session, [r["answer_id"] for _, r in records if "spans" in r])
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
            record["data_points"] = _span_points(place, answer.text, record["spans"], segmented[answer.id])
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
    return found, kept, segmented


def _check_points(session, place: str, answer: AnswerText, points: list[dict[str, Any]]) -> None:
    """A point named by id is one of the answer's; a point's text is in the answer (or is the text of
    a point already stored, which a reviewer may have edited)."""
    for i, point in enumerate(points, start=1):
        if isinstance(point.get("data_point_id"), int):
            if not has_point(session, answer.id, point["data_point_id"]):
                raise InvalidInput(place, f"data point {i}: no data point {point['data_point_id']} in this answer")
            continue
        try:
            _located(place, i, point, answer.text)
        except InvalidInput:
            text = " ".join(point["text"].split())
            if not any(" ".join(t.split()) == text for t in point_texts(session, answer.id)):
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
        found, records, segmented = _check_against_project(session, _records(path, default_rater))
    summary = LabelImportSummary(lines=len(records))
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}  # by answer, lines in file order
    for place, record in records:
        if "preference" not in record:
            groups.setdefault(record["answer_id"], []).append((place, record))
    done, total = 0, len(records)
    with project.sessions.begin() as session:
        answers.keep_segmentations(session, segmented)  # segmented once: a judge or the checker reads it
        writer = LabelWriter(session, path.name, actor, _located)
        for answer_id, lines in groups.items():
            writer.answer(found[answer_id], lines)
            done += len(lines)
            if on_progress is not None:
                on_progress(done, total)
        written = writer.written
        summary.labels += written.labels
        summary.data_points_created += written.points_created
        summary.raters_created += written.raters_created
        sampled = written.sampled
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

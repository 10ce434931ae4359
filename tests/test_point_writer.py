"""Issue 66 §2: a data point is written by one writer (storage/point_fields.py), from a typed record
with exactly the row's columns, so a misspelt or forgotten field fails loudly instead of going unsaved."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import select

from app.project import Project
from models.vocabulary import RaterKind, Tag
from storage import documents, judgements, raters, reviews
from storage.point_fields import (
    Evidence,
    PointLabel,
    PointRecord,
    WholePoint,
    check_record,
    point_record,
    write_points,
)
from storage.schema import CitationRow, DataPointRow, LabelRow

ROOT = Path(__file__).resolve().parents[1]
POINT_TABLES = {"DataPointRow", "LabelRow", "CitationRow"}
FIELDS = {"point_key", "tag", "confidence", "rationale", "comment", "span_start", "span_end", "replaces"}
# The writer, and key_points (storage/points.py), the one function that gives a point its identity key.
WRITERS = {ROOT / "storage" / "point_fields.py", ROOT / "storage" / "points.py"}


def _writes(tree: ast.AST) -> list[str]:
    """Where a module builds a point's row, label or citation, inserts or updates one, or sets a field of one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            named = {n.id for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Name)}
            if name in POINT_TABLES or (name in {"insert", "update"} and named & POINT_TABLES):
                found.append(f"{name}(…) at line {node.lineno}")
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(t, ast.Attribute) and t.attr in FIELDS and ast.unparse(t.value) != "self":
                        found.append(f".{t.attr} = at line {node.lineno}")
    return found


# Fields of that name on rows that are not a data point's: an adjudication's decision (AdjudicationRow).
NOT_A_POINT = {("storage/adjudication.py", ".tag =")}


def test_only_the_writer_writes_a_data_points_row_tag_evidence_or_key() -> None:
    outside = {}
    for folder in ("storage", "app", "ui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path in WRITERS or "migrations" in path.parts:
                continue
            name = str(path.relative_to(ROOT))
            writes = _writes(ast.parse(path.read_text(encoding="utf-8")))
            writes = [w for w in writes if (name, w.split(" at ")[0]) not in NOT_A_POINT]
            if writes:
                outside[name] = writes
    assert outside == {}


def test_a_misspelt_field_fails_where_the_record_is_made() -> None:
    with pytest.raises(TypeError, match="context_strat"):
        PointRecord(text="The term is two years.", context_strat=3)  # type: ignore[call-arg]
    record = PointRecord(text="The term is two years.")
    with pytest.raises((AttributeError, TypeError)):  # frozen and slotted: no field can be added after
        record.span_strat = 4  # type: ignore[attr-defined,misc]


def test_a_column_the_record_lacks_stops_the_writer_loading() -> None:
    columns = [c.name for c in DataPointRow.__table__.columns]
    check_record(columns)  # as the schema stands: every own column has its field
    with pytest.raises(TypeError, match="severity"):
        check_record([*columns, "severity"])  # a column added to the table and not to the record
    with pytest.raises(TypeError, match="comment"):
        check_record([c for c in columns if c != "comment"])


@pytest.mark.every_store
def test_every_field_of_a_whole_point_is_written_and_read_back(sample_project: Project) -> None:
    with sample_project.sessions.begin() as session:
        answer_id = sample_project.answers()[0].id
        judge = raters.add_rater(session, "writer-test judge", RaterKind.JUDGE, {}, "test")
        detail = sample_project.answer(answer_id)
        assert detail is not None
        passages = [p.id for p in documents.passages_of(session, detail.document_id)[:3]]
        source = write_points(
            session, answer_id, [WholePoint(rater_id=judge.id, ordinal=0, record=PointRecord(text="source"))]
        )[0]
        record = PointRecord(
            text=detail.text[0:12],
            span_start=0,
            span_end=12,
            context_start=0,
            context_end=5,
            source_id=source,
            comment="a comment",
            replaces=("span:1-2",),
            unverified_citations=("par_999",),
        )
        assert all(getattr(record, f) not in (None, ()) for f in record.__slots__)  # every field set
        label = PointLabel(tag=Tag.INCORRECT, confidence=0.25, rationale="why")
        evidence = (
            Evidence(passage_id=passages[2], rank=0, basis="cited"),
            Evidence(passage_id=passages[0], rank=1, basis="shown"),
        )
        whole = WholePoint(rater_id=judge.id, ordinal=1, record=record, label=label, evidence=evidence, key="k-1")
        (point_id,) = write_points(session, answer_id, [whole])

    with sample_project.sessions() as session:
        row = session.get(DataPointRow, point_id)
        assert row is not None
        assert point_record(row) == record
        assert (row.answer_id, row.rater_id, row.ordinal, row.point_key) == (answer_id, judge.id, 1, "k-1")
        stored = session.execute(
            select(LabelRow.tag, LabelRow.confidence, LabelRow.rationale).where(LabelRow.data_point_id == point_id)
        ).one()
        assert tuple(stored) == ("incorrect", 0.25, "why")
        cited = session.execute(
            select(CitationRow.passage_id, CitationRow.rank, CitationRow.basis)
            .where(CitationRow.data_point_id == point_id)
            .order_by(CitationRow.rank)
        ).all()
        assert [tuple(c) for c in cited] == [(passages[2], 0, "cited"), (passages[0], 1, "shown")]
        # the judge's own reading of it, as the review and the exports read it
        (_, mine) = judgements.data_points_of(session, answer_id, judge.id)
        assert (mine.text, mine.context_start, mine.source_id, mine.comment) == (record.text, 0, source, "a comment")
        assert mine.unverified_citations == ("par_999",) and mine.key == "k-1" and mine.tag is Tag.INCORRECT


@pytest.mark.every_store
def test_a_reviewers_point_restored_keeps_every_field(sample_project: Project) -> None:
    answer_id = sample_project.answers()[0].id
    with sample_project.sessions.begin() as session:
        reviewer = raters.add_rater(session, "writer-test reviewer", RaterKind.HUMAN, {}, "test")
        point = reviews.PointSnapshot(
            id=0,
            ordinal=0,
            text="A point the reviewer wrote.",
            span_start=None,
            span_end=None,
            source_id=None,
            comment="why it is missing",
            tag=Tag.MISSING,
            passage_ids=(),
            context_start=None,
            context_end=None,
            replaces=("span:0-10",),
        )
        reviews.restore(session, answer_id, reviewer.id, [point])
    with sample_project.sessions() as session:
        (back,) = reviews.snapshot(session, answer_id, reviewer.id)
    assert replace(back, id=0, key=None) == point and back.key is not None

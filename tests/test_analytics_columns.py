"""The fast figures (numpy on label columns) equal the slow definitions (SQL aggregates, a pandas
pivot, row-by-row matching; tests/reference_figures.py) on small projects: every score, every agreement coefficient, the
judge–human confusion and disagreements, the queue's judge counts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from app.cli import main
from app.figures import analytics, columnar
from app.project import Project
from models.segmentation import segment_answer
from models.vocabulary import RaterKind
from storage import analytics as sql
from storage import columns, scoring
from storage.raters import add_rater

from . import reference_figures as reference

pytestmark = pytest.mark.every_store

TAGS = ["correct", "incorrect", "irrelevant", "missing"]


def _import(project: Project, tmp_path: Path, seed: int) -> None:
    """Three raters on real answers: ana tags everything, ben most segments (skipping some, so ratings
    go missing), carl only a few answers and only 'irrelevant' or 'missing' (undefined scores)."""
    rng = random.Random(seed)
    lines = []
    for n, answer in enumerate(project.answers()):
        segments = segment_answer(project.answer(answer.id).text)
        ana = [rng.choice(TAGS[:3]) for _ in segments]
        lines.append({"answer_id": answer.id, "rater": "ana", "data_points": _points(segments, ana)})
        kept = [(s, t if rng.random() < 0.7 else rng.choice(TAGS[:3])) for s, t in zip(segments, ana, strict=True)]
        kept = [(s, t) for s, t in kept if rng.random() < 0.8]
        if kept:
            ben = _points([s for s, _ in kept], [t for _, t in kept])
            if n % 3 == 0:  # a point only ben saw, found missing
                ben.append({"text": "The notice period is not stated.", "tag": "missing"})
            lines.append({"answer_id": answer.id, "rater": "ben", "data_points": ben})
        if n % 4 == 1:
            carl = _points(segments[:2], ["irrelevant", "missing"][: len(segments[:2])])
            lines.append({"answer_id": answer.id, "rater": "carl", "data_points": carl})
    path = tmp_path / f"labels{seed}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["--db", project.url, "import-labels", str(path)]) == 0


def _points(segments, tags) -> list[dict]:
    return [{"text": s.text, "tag": t} for s, t in zip(segments, tags, strict=True)]


def test_scores_equal_the_sql_aggregates(sample_project: Project, tmp_path: Path, store: str) -> None:
    _import(sample_project, tmp_path, seed=3)
    for by in sql.SLICES:
        with sample_project.sessions() as session:
            table = scoring.score_table(session)
            if by == "answer":
                fast = [(a, r, 1, *rest) for a, r, *rest in table.rows()]
            else:
                fast = scoring.slice_means(table, scoring.answer_keys(session, by))
            slow = [tuple(vars(r).values()) for r in reference.scores_in_sql(session, by)]
        assert len(fast) == len(slow) > 0
        for got, want in zip(fast, slow, strict=True):
            assert got[:7] == want[:7]  # slice, rater, answers, counts: exactly
            if by == "answer" and store == "sqlite":
                assert got == want  # one answer's scores: the same divisions, bit for bit
            else:  # a slice's means add in another order; PostgreSQL's float SQL differs in the 16th digit
                assert [g is None for g in got[7:]] == [w is None for w in want[7:]]
                assert [g for g in got[7:] if g is not None] == pytest.approx([w for w in want[7:] if w is not None])
        if by == "answer":
            assert any(row[7] is None for row in slow)  # carl's answers: correctness undefined, not 0
    with sample_project.sessions() as session:
        dashboard = columnar.scores_by_slice(session, ("source", "rater"))
    assert {row["rater"] for row in dashboard["rater"]["carl"]} == {"carl"}
    assert len(dashboard["source"]["all raters"]) > len(dashboard["source"]["ana"]) > 0


@pytest.mark.parametrize("answers", [5, 5000])  # dense: every (answer, rater) counted; sparse: those with labels
def test_scores_count_each_answer_and_raters_tags(answers: int) -> None:
    rng = np.random.default_rng(answers)
    n = 3000 if answers == 5 else 40
    labels = columns.Labels(
        answers=[f"a{i:05d}" for i in range(answers)],
        answer=rng.integers(0, answers, n),
        rater=rng.choice([2, 5, 9], n),
        tag=rng.integers(0, 4, n).astype(np.int8),
        point=np.arange(n),
    )
    names = {2: "zoe", 5: "ana", 9: "judge"}
    want: dict[tuple[str, str], list[int]] = {}
    for a, r, t in zip(labels.answer.tolist(), labels.rater.tolist(), labels.tag.tolist(), strict=True):
        want.setdefault((f"a{a:05d}", names[r]), [0, 0, 0, 0])[t] += 1
    table = scoring.scores_of(labels, names)
    assert [row[:6] for row in table.rows()] == [(a, r, *c) for (a, r), c in sorted(want.items())]


def test_agreement_equals_the_pandas_pivot(sample_project: Project, tmp_path: Path) -> None:
    import pandas as pd

    _import(sample_project, tmp_path, seed=5)
    for raters in (["ana", "ben"], ["ana", "ben", "carl"], None):
        fast = analytics.agreement(sample_project, raters)
        with sample_project.sessions() as session:
            ids = analytics._pick_raters(session, raters)
            frame = pd.DataFrame(reference.item_labels(session, list(ids.values())))
            sources = reference.answer_sources(session)
        frame["code"] = frame["tag"].map({t: i for i, t in enumerate(TAGS)}).astype(float)
        wide = frame.pivot_table(index=["answer", "item"], columns="rater_id", values="code", aggfunc="first")
        wide = wide.reindex(columns=list(ids.values()))
        slow = analytics.agreement_of(wide.to_numpy(), TAGS)
        assert {k: fast[k] for k in slow} == slow
        per_source = wide.index.get_level_values("answer").map(lambda a, sources=sources: sources.get(a) or "unknown")
        for source, stats in fast["by_source"].items():
            part = analytics.agreement_of(wide[per_source == source].to_numpy(), TAGS)
            assert stats == {k: part[k] for k in stats}
    assert fast["n_items"] > 0 and fast["cohen_kappa"] is None and fast["krippendorff_alpha"] is not None


def test_answer_agreement_equals_the_row_by_row_definition(sample_project: Project, tmp_path: Path) -> None:
    """Bucketed answer scores and holistic ratings, as numpy matrices, agree as the dictionaries of
    rows (the first definition) do: every coefficient, bit for bit."""
    from app.review.service import ReviewService

    _import(sample_project, tmp_path, seed=7)
    rng = random.Random(7)
    answers = [a.id for a in sample_project.answers()][:40]
    for name in ("ana", "ben"):
        reviewer = ReviewService(sample_project, name)
        for answer_id in answers[: 30 if name == "ana" else 40]:
            reviewer.open(answer_id)
            reviewer.rate(answer_id, rng.choice([1, 2, 3, 4, 5, None]), rng.choice([2, 3, 4, 5, None]))
    for raters in (["ana", "ben"], ["ana", "ben", "carl"]):
        fast = analytics.agreement(sample_project, raters, level="answer")
        assert fast == _answer_agreement_by_rows(sample_project, raters)
    assert fast["n_items"] > 0 and fast["krippendorff_alpha"] is not None
    assert fast["manual"]["correctness"]["n_items"] > 0


def _answer_agreement_by_rows(project: Project, raters: list[str]) -> dict:
    with project.sessions() as session:
        ids = analytics._pick_raters(session, raters)
        rows = sql.scores(session, "answer", list(ids.values()))
        reviews = sql.reviews(session)
    order = list(ids)
    buckets = [0.0, 0.25, 0.5, 0.75, 1.0]

    def matrix(values: dict) -> list[list]:
        return [[values.get((a, r)) for r in order] for a in sorted({a for a, _ in values})]

    def agree(values: dict) -> dict:
        return analytics.agreement_of(matrix(values), buckets, ordinal=True)

    correctness = {(row.key, row.rater): analytics.bucket(row.correctness) for row in rows}
    relevance = {(row.key, row.rater): analytics.bucket(row.f1) for row in rows}
    manual = [r for r in reviews if r.reviewer in order]
    manual_c = {(r.answer_id, r.reviewer): analytics.holistic(r.holistic_correctness) for r in manual}
    manual_r = {(r.answer_id, r.reviewer): analytics.holistic(r.holistic_relevance) for r in manual}
    return (
        {"raters": order, "level": "answer"}
        | agree(correctness)
        | {
            "relevance": agree(relevance),
            "manual": {
                "correctness": analytics._short(agree(manual_c)),
                "relevance": analytics._short(agree(manual_r)),
            },
        }
    )


def test_alignment_equals_the_row_by_row_matching(sample_project: Project) -> None:
    """A judge run, then a reviewer who keeps some points, splits one, rewords one and adds a missing
    one: points paired by identity, by words, or not at all, on both paths."""
    from app.judging.runs import run_judge
    from app.review.service import ReviewService
    from models.judge import LemajJudge, Mode
    from models.vocabulary import Tag

    from .test_judge import ScriptedBackendStandIn

    ids = [a.id for a in sample_project.answers() if a.document.startswith("DoiT")][:4]
    outputs = [
        json.dumps({"tag": t, "confidence": c}) for t, c in zip(TAGS[:3] * 40, [0.9, 0.6, 0.75] * 40, strict=True)
    ]
    judge = LemajJudge(ScriptedBackendStandIn(outputs + [json.dumps({"missing": []})] * 5), Mode.TWO_STAGE)
    run_judge(sample_project.sessions, judge, "judge", answer_ids=ids)
    judged = "rater_id = (SELECT id FROM raters WHERE name = 'judge')"
    with sample_project.sessions.begin() as session:  # a judge that generates its tags gives no confidence
        session.execute(text(f"UPDATE labels SET confidence = (id % 7) / 7.0 WHERE {judged}"))
    reviewer = ReviewService(sample_project, "ana")
    for n, answer_id in enumerate(ids[:3]):
        state = reviewer.open(answer_id)
        for i, point in enumerate(state.points):
            reviewer.set_tag(answer_id, point.point.id, [Tag.CORRECT, Tag.INCORRECT, Tag.MISSING][(i + n) % 3])
        first = reviewer.state(answer_id).points[0].point
        if n == 1:
            reviewer.split(answer_id, first.id, max(1, len(first.text) // 2))
        if n == 2:
            reviewer.edit_text(answer_id, first.id, first.text + " (as amended)")
            reviewer.add_missing(answer_id, "The notice period is not stated.", [])
        for point in reviewer.state(answer_id).points:
            if point.point.tag is None:
                reviewer.set_tag(answer_id, point.point.id, Tag.IRRELEVANT)
    fast = analytics.alignment(sample_project, "judge", "ana")
    slow = reference.alignment_by_rows(sample_project, "judge", "ana")
    assert fast == slow
    assert fast["n_pairs"] > 0 and fast["disagreements"] and fast["correctness"]["n_answers"] == 3
    assert len({d["judge_confidence"] for d in fast["disagreements"]}) > 2  # each its own, not all None


def test_label_columns_line_up_with_the_rows(sample_project: Project, tmp_path: Path) -> None:
    """Every label's answer, rater and tag as the rows say; its item the same as another label's
    exactly where both are on points of one answer with one identity key, a point with no key
    (as a point recorded before identities were) being an item of its own."""
    from sqlalchemy import text

    _import(sample_project, tmp_path, seed=2)
    with sample_project.sessions.begin() as session:  # two points of one answer lose their keys
        first = "SELECT answer_id FROM data_points WHERE id = (SELECT min(id) FROM data_points)"
        two = f"SELECT id FROM data_points WHERE answer_id = ({first}) ORDER BY id LIMIT 2"
        assert session.execute(text(f"UPDATE data_points SET point_key = NULL WHERE id IN ({two})")).rowcount == 2
    with sample_project.sessions() as session:
        got = columns.labels(session, items=True, creators=True)
        rows = reference.item_labels(session, list(sql.rater_ids(session, None).values()))
        ids = {v: k for k, v in sql.rater_ids(session, None).items()}
        identity = {
            point: key
            for point, key in session.execute(
                text("SELECT id, answer_id || ' ' || coalesce(point_key, 'id:' || id) FROM data_points")
            )
        }
    seen = sorted(
        (got.answers[a], ids[r], TAGS[t])
        for a, r, t in zip(got.answer.tolist(), got.rater.tolist(), got.tag.tolist(), strict=True)
    )
    assert seen == sorted((a, ids[r], t) for a, r, t in zip(rows["answer"], rows["rater_id"], rows["tag"], strict=True))
    same = set(zip(got.item.tolist(), [identity[p] for p in got.point.tolist()], strict=True))
    assert len(same) == len(set(got.item.tolist())) == len({i for _, i in same})  # one item, one identity
    assert len(same) == len(set(zip(rows["answer"], rows["item"], strict=True)))


def test_label_columns_are_never_older_than_the_project(sample_project: Project, tmp_path: Path) -> None:
    """Read once per committed state: a tag changed by this process, by another connection, or
    written and rolled back in a session, shows (or stops showing) in the next read."""
    from sqlalchemy import text

    _import(sample_project, tmp_path, seed=4)

    def tags() -> list[int]:
        with sample_project.sessions() as session:
            got = columns.labels(session, items=True)
        order = np.lexsort((got.point, got.rater))
        return got.tag[order].tolist()

    first = tags()
    assert tags() == first
    with sample_project.sessions.begin() as session:
        point = session.execute(text("SELECT min(data_point_id) FROM labels WHERE tag = 'correct'")).scalar()
        session.execute(text("UPDATE labels SET tag = 'incorrect' WHERE data_point_id = :p"), {"p": point})
    changed = tags()
    assert changed != first and changed.count(TAGS.index("incorrect")) > first.count(TAGS.index("incorrect"))
    with sample_project.sessions() as session:  # written, read by the writer, rolled back
        session.execute(text("UPDATE labels SET tag = 'missing'"))
        assert set(columns.labels(session).tag.tolist()) == {TAGS.index("missing")}
        session.rollback()
    assert tags() == changed
    if sample_project.url.startswith("sqlite"):  # another connection, as another process would write
        import sqlite3

        with sample_project.sessions() as session:
            lingering = session.connection().execute(text("SELECT id FROM labels"))
            lingering.fetchone()  # a read left open: its snapshot is older than the write below
            other = sqlite3.connect(sample_project.url.removeprefix("sqlite:///"))
            other.execute("UPDATE labels SET tag = 'irrelevant' WHERE data_point_id = ?", (point,))
            other.commit()
            other.close()
            got = columns.labels(session)
            assert TAGS.index("irrelevant") == got.tag[got.point == point][0]
            lingering.close()
        assert tags() != changed
    else:  # a teammate's commit, from another connection of the server
        import psycopg
        from sqlalchemy.engine import make_url

        url = make_url(sample_project.url)
        with psycopg.connect(dbname=url.database, user=url.username, host=url.query["host"]) as other:
            other.execute("UPDATE labels SET tag = 'irrelevant' WHERE data_point_id = %s", (point,))
        assert tags() != changed


def test_raters_with_no_data_points_yet_agree_on_nothing(project: Project) -> None:
    """Two judges ran only answer-level rubrics (no data points): the dashboard and the exports read
    empty label columns and report agreement over 0 items, not a crash."""
    with project.sessions.begin() as session:
        for name in ("judge-a", "judge-b"):
            add_rater(session, name, RaterKind.JUDGE, {}, actor="test")
    with project.sessions() as session:
        got = columns.labels(session, items=True, creators=True)
    assert len(got) == 0 and len(got.item) == 0 and got.answers == []
    agreement = analytics.agreement(project)
    assert agreement["raters"] == ["judge-a", "judge-b"] and agreement["n_items"] == 0

"""Issue 66 §3: an answer is segmented once per segmenter version, stored with it; the claim checker,
the span-label import, the review, a judge run and the stress test read what is stored; a new segmenter
version segments again."""

from __future__ import annotations

import json
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

import app.judging.cases
import app.judging.model_check
import app.judging.paired_stress
import models.judge
import models.segmentation
import storage.answers
from app.ingest.labels import import_labels
from app.judging.paired_stress import JudgeRater, VerifierRater, paired_stress_test
from app.judging.runs import run_judge
from app.judging.verification import Verifier, verify_project
from app.project import Project
from app.review.service import ReviewService
from models.backends.base import Generation
from models.judge import LemajJudge, Mode
from models.segmentation import SEGMENTER_VERSION, segment_answer
from storage.schema import AnswerRow


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """segment_answer's calls, by answer text, wherever the code segments."""
    calls: Counter[str] = Counter()
    original = models.segmentation.segment_answer

    def counting(answer: str) -> list[models.segmentation.Segment]:
        calls[answer] += 1
        return original(answer)

    modules = [m for m in list(sys.modules.values()) if getattr(m, "segment_answer", None) is original]
    assert {storage.answers, models.judge, app.judging.cases} <= set(modules)
    for module in modules:  # each module that imported it by name
        monkeypatch.setattr(module, "segment_answer", counting)
    return calls


def _stored(project: Project, answer_id: str) -> dict | None:
    with project.sessions() as session:
        return session.scalar(select(AnswerRow.segmentation).where(AnswerRow.id == answer_id))


@pytest.mark.every_store
def test_verify_twice_segments_each_answer_once(sample_project: Project, counted: Counter[str]) -> None:
    ids = [a.id for a in sample_project.answers()[:4]]
    texts = {a: sample_project.answer(a).text for a in ids}  # type: ignore[union-attr]
    verifier = Verifier(sample_project.sessions, neural=False)
    first = verify_project(sample_project.sessions, ids, verifier=verifier)
    again = verify_project(sample_project.sessions, ids, verifier=verifier)
    assert {t: counted[t] for t in texts.values()} == {t: 1 for t in texts.values()}  # check and save: one
    assert [[(p.start, p.end) for p in r.points] for r in first] == [
        [(p.start, p.end) for p in r.points] for r in again
    ]
    stored = _stored(sample_project, ids[0])
    assert stored is not None and stored["version"] == SEGMENTER_VERSION
    spans = [(s.start, s.end) for s in segment_answer(texts[ids[0]])]
    assert [tuple(p[:2]) for p in stored["points"]] == spans
    # a reviewer opening the answer starts from the same points, read as stored
    service = ReviewService(sample_project, "ana")
    state = service.open(ids[1])
    assert counted[texts[ids[1]]] == 1
    assert {(p.point.span_start, p.point.span_end) for p in state.points} <= {
        (s.start, s.end) for s in segment_answer(texts[ids[1]])
    } | {(None, None)}


@pytest.mark.every_store
def test_an_older_segmenter_version_is_segmented_again(
    sample_project: Project, counted: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer_id = sample_project.answers()[0].id
    text = sample_project.answer(answer_id).text  # type: ignore[union-attr]
    with sample_project.sessions.begin() as session:
        current = storage.answers.segmentation(session, answer_id)
    assert counted[text] == 1
    with sample_project.sessions.begin() as session:  # stored by the segmenter before: another cut, version 1
        row = session.get(AnswerRow, answer_id)
        assert row is not None
        row.segmentation = {"version": SEGMENTER_VERSION - 1, "points": [[0, len(text), None, None]]}
    with sample_project.sessions.begin() as session:
        assert storage.answers.segmentation(session, answer_id) == current  # not the old version's one point
    assert counted[text] == 2
    assert _stored(sample_project, answer_id)["version"] == SEGMENTER_VERSION  # type: ignore[index]
    with sample_project.sessions() as session:
        assert storage.answers.segmentation(session, answer_id) == current
    assert counted[text] == 2
    # a new version of the segmenter: every answer is segmented again when next read, once
    monkeypatch.setattr(storage.answers, "SEGMENTER_VERSION", SEGMENTER_VERSION + 1)
    for _ in range(2):
        with sample_project.sessions.begin() as session:
            storage.answers.segmentation(session, answer_id)
    assert counted[text] == 3
    assert _stored(sample_project, answer_id)["version"] == SEGMENTER_VERSION + 1  # type: ignore[index]


@pytest.mark.every_store
def test_span_labels_use_and_keep_the_stored_segmentation(
    sample_project: Project, counted: Counter[str], tmp_path: Path
) -> None:
    answer_id = sample_project.answers()[0].id
    text = sample_project.answer(answer_id).text  # type: ignore[union-attr]
    labels = tmp_path / "spans.jsonl"
    line = {"answer_id": answer_id, "rater": "span-rater", "spans": [{"start": 0, "end": 5, "label": "unsupported"}]}
    labels.write_text(json.dumps(line) + "\n", encoding="utf-8")
    import_labels(sample_project, labels)
    assert counted[text] == 1
    verify_project(sample_project.sessions, [answer_id], verifier=Verifier(sample_project.sessions, neural=False))
    assert counted[text] == 1  # the checker read what the import stored


def test_a_new_answer_text_is_segmented_anew(sample_project: Project, counted: Counter[str]) -> None:
    answer_id = sample_project.answers()[0].id
    with sample_project.sessions.begin() as session:
        storage.answers.segmentation(session, answer_id)
        storage.answers.update_answer(
            session, answer_id, {"text": "The term is two years. The agreement renews every year."}
        )
    with sample_project.sessions.begin() as session:
        segments = storage.answers.segmentation(session, answer_id)
    assert [s.text for s in segments] == ["The term is two years.", "The agreement renews every year."]


class _TagsCorrect:
    """Stands in for a model: every point correct, nothing missing (the test counts segmentations, not tags)."""

    context_tokens = 4096

    def describe(self) -> dict[str, Any]:
        return {"backend": "stand-in", "model": "none"}

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def reset_cache(self) -> None:
        pass

    def close(self) -> None:
        pass

    def label_scores(self, *_: Any) -> None:
        return None  # no log-probabilities: the tag is asked for

    def generate(self, _prompt: Any, *, schema: dict[str, Any], **_: Any) -> Generation:
        reply = {"tag": "correct"} if "tag" in schema["properties"] else {"missing": []}
        return Generation(json.dumps(reply), 10, 10, 5)


@pytest.mark.parametrize("mode", [Mode.TWO_STAGE, Mode.ONE_PASS])
def test_a_judge_run_judges_the_stored_points(sample_project: Project, counted: Counter[str], mode: Mode) -> None:
    ids = [a.id for a in sample_project.answers()[:3]]
    texts = [sample_project.answer(a).text for a in ids]  # type: ignore[union-attr]
    summary = run_judge(sample_project.sessions, LemajJudge(_TagsCorrect(), mode), "stand-in", answer_ids=ids)
    assert summary.judged + summary.failed == 3
    verify_project(sample_project.sessions, ids, verifier=Verifier(sample_project.sessions, neural=False))
    assert [counted[t] for t in texts] == [1, 1, 1]  # the run segmented each once, and stored it for the checker
    assert all(_stored(sample_project, a) is not None for a in ids)
    if mode is Mode.TWO_STAGE:  # its points are the stored segmentation's, one judged point each
        stored = _stored(sample_project, ids[0])
        judged = sample_project.data_points(ids[0])["stand-in"]
        assert [(p.span_start, p.span_end) for p in judged] == [tuple(p[:2]) for p in stored["points"]]  # type: ignore[index]


def test_the_stress_test_reads_the_stored_points_of_the_answers_it_plants_in(
    sample_project: Project, counted: Counter[str]
) -> None:
    ids = [a.id for a in sample_project.answers()[:2]]
    texts = [sample_project.answer(a).text for a in ids]  # type: ignore[union-attr]
    verify_project(sample_project.sessions, ids, verifier=Verifier(sample_project.sessions, neural=False))
    judge = LemajJudge(_TagsCorrect(), Mode.TWO_STAGE)
    raters = [
        VerifierRater(sample_project.sessions),
        JudgeRater(sample_project.sessions, "stand-in", judge, threading.Event()),
    ]
    paired_stress_test(sample_project.sessions, raters, answer_ids=ids, limit=2)
    assert [counted[t] for t in texts] == [1, 1]  # a planted error's text is new, and segmented; the answer's is not

"""The default jury keeps what a model it cannot yet measure catches (issue 63 §8): where the claim checker
is silent ("not confirmed"), the model's `incorrect` stays a flag for a reviewer, never turned into
nothing; its `correct` does not clear a point there. A `missing` point that repeats the question is no
omission and is dropped."""

from __future__ import annotations

import json
from typing import Any

from app import raters
from app.judging.jury import combine_roles, repeats_question, roles_jury
from app.judging.runs import run_judge
from app.judging.verification import VERIFIER, verify_project
from app.project import Project
from models.backends.base import Generation
from models.judge import LemajJudge, Mode
from models.vocabulary import Tag
from storage import judgements
from storage import raters as stored_raters

from .test_judge import ScriptedBackendStandIn

INSTALLED = "judge:my-installed-model:two-stage:standard"  # a model the user installed: never measured here


class TagAndProposeStandIn(ScriptedBackendStandIn):
    """A model that tags every point `tag` and proposes `missing` (a test double: a real small model cannot be
    made to say a given tag on demand)."""

    def __init__(self, tag: str, missing: list[str]) -> None:
        super().__init__([])
        self.tag = tag
        self.missing = [{"text": m, "citations": ["par_2"], "rationale": "left out"} for m in missing]

    def generate(self, prompt: Any, **options: Any) -> Generation:
        if "missing" in options.get("schema", {}).get("properties", {}):
            return Generation(json.dumps({"missing": self.missing}), 10, 10, 5)
        return Generation(json.dumps({"tag": self.tag}), 10, 10, 5)


def _jury_of(project: Project, tag: str, answer_ids: list[str], missing: list[str]) -> dict[str, Any]:
    verify_project(project.sessions, answer_ids)
    judge = LemajJudge(TagAndProposeStandIn(tag, missing), Mode.TWO_STAGE)
    run_judge(project.sessions, judge, INSTALLED, answer_ids=answer_ids)
    assert combine_roles(project.sessions, INSTALLED, answer_ids) == len(answer_ids)
    out: dict[str, Any] = {}
    with project.sessions() as session:
        ids = {n: stored_raters.rater_named(session, n).id for n in (VERIFIER, roles_jury(INSTALLED))}
        for answer_id in answer_ids:
            checker = {p.span_start: p.tag for p in judgements.data_points_of(session, answer_id, ids[VERIFIER])}
            jury = judgements.data_points_of(session, answer_id, ids[roles_jury(INSTALLED)])
            out[answer_id] = (checker, jury)
    return out


def test_an_unmeasured_models_catch_stands_where_the_checker_is_silent(sample_project: Project) -> None:
    answer_ids = [a.id for a in sample_project.answers() if a.document.startswith("DoiT")][:4]
    question = sample_project.answer(answer_ids[0]).question
    real = "The receiving party must return all confidential information on request."
    found = _jury_of(sample_project, "incorrect", answer_ids, [question, question.rstrip("?") + ".", real])
    assert next(s for s in raters.standings(sample_project.sessions) if s.name == INSTALLED).trusted is None
    silent = 0
    for checker, jury in found.values():
        for point in (p for p in jury if p.span_start is not None):
            if checker.get(point.span_start) is None:  # the checker did not confirm it: the model's flag stands
                silent += 1
                assert point.tag is Tag.INCORRECT and "not measured yet" in (point.rationale or "")
            else:
                assert point.tag is Tag.INCORRECT or checker[point.span_start] is Tag.CORRECT
        proposed = [p.text for p in jury if p.span_start is None]
        assert proposed == [real]  # the question, asked or restated, is no omission
    assert silent > 0


def test_an_unmeasured_models_correct_does_not_clear_a_point_the_checker_left(sample_project: Project) -> None:
    answer_ids = [a.id for a in sample_project.answers() if a.document.startswith("DoiT")][:4]
    for checker, jury in _jury_of(sample_project, "correct", answer_ids, []).values():
        for point in (p for p in jury if p.span_start is not None):
            assert point.tag is checker.get(point.span_start)  # the checker's, or undecided where it is silent


def test_a_missing_point_repeating_the_question_is_told_from_an_omission() -> None:
    question = "How long do the confidentiality obligations survive?"
    assert repeats_question("How long do the confidentiality obligations survive?", question)
    assert repeats_question("how long the confidentiality obligations survive.", question)
    assert not repeats_question("The confidentiality obligations survive for three years after disclosure.", question)

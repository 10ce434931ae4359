"""The projects the report is rendered for, each rendered once for the package: the sample as it ships,
a project a reviewer worked on (a judge run, a random sample reviewed, comments, an omission with its
passage, a sign-off), and the sample after the claim checker read every answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.judging.sample_tour import import_sample
from app.project import Project
from models.vocabulary import Tag
from storage.db import url_for_path

from .reading import COMMENT, OMISSION, REVIEWER, Rendered


@pytest.fixture(scope="package")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report-sample") / "sample.assay"
    project = Project.open(url_for_path(path))
    import_sample(project)
    project.close()
    return path


@pytest.fixture(scope="package")
def reviewed_file(sample_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample after a day's work: a judge tags ten answers, five of them drawn at random and
    reviewed (one point found incorrect with a comment, an omission added with its passage), one signed."""
    from app.judging.runs import run_judge
    from app.raters import set_default
    from app.review.sampling import draw_sample
    from app.review.service import ReviewService
    from models.judge import LemajJudge, Mode

    from ..test_judge import ScriptedBackendStandIn

    path = tmp_path_factory.mktemp("report-reviewed") / "reviewed.assay"
    shutil.copy(sample_file, path)
    project = Project.open(url_for_path(path))
    drawn = list(draw_sample(project, 5, seed=7, actor=REVIEWER).answer_ids)
    others = [a.id for a in project.answers() if a.document.startswith("DoiT") and a.id not in drawn][:5]
    outputs = [json.dumps({"tag": "correct"})] * 400 + [json.dumps({"missing": []})] * 20
    judge = LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE)
    run_judge(project.sessions, judge, "judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard", answer_ids=drawn + others)
    # it calls every point correct, near chance on these labels: the lead chooses it to speak (app/raters.py)
    set_default(project.sessions, "judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard", REVIEWER)
    reviewer = ReviewService(project, REVIEWER)
    for n, answer_id in enumerate(drawn):
        state = reviewer.open(answer_id)
        for i, point in enumerate(state.points):
            wrong = n == 0 and i == 0
            reviewer.set_tag(answer_id, point.point.id, Tag.INCORRECT if wrong else Tag.CORRECT)
            if wrong:
                reviewer.comment_point(answer_id, point.point.id, COMMENT)
        if n == 1:
            detail = project.answer(answer_id)
            passage = project.passages(detail.document_id)[3]
            reviewer.add_missing(answer_id, OMISSION, [passage.citation_id])
            reviewer.comment_answer(answer_id, "Incomplete: the term of the obligations is left out.")
        reviewer.submit(answer_id)
    reviewer.sign_off(drawn[2])
    project.close()
    return path


@pytest.fixture(scope="package")
def checked_file(sample_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample after the claim checker has read every answer (about a minute): every document and both
    generators have figures, as in the report of issue 56."""
    from app.judging.verification import verify_project

    path = tmp_path_factory.mktemp("report-checked") / "checked.assay"
    shutil.copy(sample_file, path)
    project = Project.open(url_for_path(path))
    verify_project(project.sessions, [a.id for a in project.answers()])
    project.close()
    return path


@pytest.fixture(scope="package")
def checked(checked_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return Rendered(checked_file, tmp_path_factory.mktemp("checked-report"))


@pytest.fixture(scope="package")
def sample(sample_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return Rendered(sample_file, tmp_path_factory.mktemp("sample-report"))


@pytest.fixture(scope="package")
def reviewed(reviewed_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return Rendered(reviewed_file, tmp_path_factory.mktemp("reviewed-report"))

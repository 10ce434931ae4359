"""A name a reader would take for another's is refused, or taken as that other (issue 62, items 3 and
11; models/names.py): reviewers named "аlice" (a Cyrillic а), "alice\\u200b" or "Alice" beside alice,
whether they come by a bundle, the window or a key; walls' clients "ACME™" and "ᴀcme" are ACME."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.errors import InvalidInput
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from app.raters import NotAReviewer
from app.review.service import ReviewService
from app.review.team import export_bundle, import_bundle
from storage.matters import client_key, same_client

from .forgery_helpers import ANSWER, reseal, state, submitted
from .forgery_helpers import computer as computer  # autouse: ana's laptop, or another computer by name
from .key_helpers import cli as _cli

LOOK_ALIKES = {
    "\u0430lice": "mixes letters of CYRILLIC and LATIN",
    "alice\u200b": r"holds an invisible character \(U\+200B\)",
    "Alice": "reads as 'alice', already in this project",
    "\u0430\u0441\u0435": "is written in letters that look like Latin ones",  # асе, all Cyrillic
}


@pytest.fixture
def lead(new_project_url: Callable[[str], str]) -> Iterator[Project]:
    opened = Project.open(new_project_url("lead"))
    import_dataset(opened.sessions, SAMPLE_DATASET)
    yield opened
    opened.close()


def test_a_bundle_under_a_name_that_reads_as_a_reviewers_is_refused(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path
) -> None:
    submitted(lead, ANSWER, "alice")  # alice reviews in the lead's project
    submitted(sample_project, ANSWER, "mallory")
    path = tmp_path / "mallory.json"
    export_bundle(sample_project, "mallory", path)
    genuine = path.read_text(encoding="utf-8")
    before = state(lead)
    for name, problem in LOOK_ALIKES.items():
        path.write_text(genuine, encoding="utf-8")
        reseal(path, lambda data, n=name: data.update(reviewer=n))
        with pytest.raises(InvalidInput, match=problem):
            import_bundle(lead, path)
        assert state(lead) == before
    status, out = _cli(capsys, lead, "audit", "verify")
    assert status == 0 and "\u0430lice" not in out


def test_the_window_and_keys_refuse_a_name_that_reads_as_a_reviewers(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    submitted(sample_project, ANSWER, "alice")
    before = state(sample_project)
    for name, problem in LOOK_ALIKES.items():
        with pytest.raises(NotAReviewer, match=problem):
            ReviewService(sample_project, name)
        status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", name)
        assert status == 2 and out.strip().count("\n") == 0, out
    assert state(sample_project) == before
    with pytest.raises(NotAReviewer, match="holds an invisible character"):
        ReviewService(sample_project, "\ud800")  # a lone surrogate (the command line refuses it before)
    status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", "bob\u202e")  # right-to-left override
    assert status == 2 and "holds an invisible character (U+202E)" in out, out


def test_walls_take_trademark_signs_and_small_capitals_for_the_company() -> None:
    for spelling in ("ACME™", "ᴀcme", "ACME®", "ᴀᴄᴍᴇ Inc.", "Acme\u200b"):
        assert same_client(spelling, "ACME"), spelling
    assert client_key("Acme") != client_key("Acne")

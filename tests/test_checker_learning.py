"""The claim checker learns from a project's own reviews and never gets worse for it (issue 64): a small firm
of real NDAs (ContractNLI dev, its statements in a lawyer's wording), its annotators' labels imported as a
person's reviews; `assay checker fit` adopts the refit only where it beats the shipped checker held out,
never on shuffled tags; reset, the audit log, an altered model refused, and a matter's checker kept to it.

The engine here finds evidence by words (`neural=False`): seconds, not minutes; bench/learning_curve.py
measures the neural engine.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from app import matters
from app.cli import main
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.judging.fitted import CheckerAltered
from app.judging.learning import fit_checker, reset_checker, show_checker
from app.judging.verification import VERIFIER, Verifier, verify_project
from app.project import Project
from app.raters import standings
from app.workspace import Workspace
from storage import audit, judgements, raters, reviews
from storage import learned_checker as store
from storage.db import url_for_path
from storage.schema import AnswerRow

REAL = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "real_errors" / "contractnli-dev"
WORDINGS = Path(__file__).resolve().parents[1] / "packaging" / "training" / "data" / "nda_wordings.json"
NDAS = 13
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="the shared ContractNLI dev set is not on this machine")


def write_firm(
    folder: Path, shuffled: bool = False, first: int = 0, last: int = NDAS, name: str = "firm"
) -> tuple[Path, Path, list[str]]:
    """The first NDAS NDAs (or those from `first` to `last`) with every statement in one of the held-out
    wordings, and their labels as one person's reviews (`shuffled`: the labels dealt to other statements
    at random)."""
    spec = json.loads(WORDINGS.read_text())
    rows = [json.loads(r) for r in (REAL / "qa.jsonl").read_text().splitlines() if r.strip()]
    truth = {t["id"]: t["labels"] for t in map(json.loads, (REAL / "truth.jsonl").read_text().splitlines())}
    kept = sorted({r["document"] for r in rows})[first:last]
    data = folder / name
    data.mkdir(parents=True)
    (data / "documents").mkdir()
    for name in kept:
        shutil.copy(REAL / "documents" / name, data / "documents" / name)
    qa, labels = [], []
    for turn, row in enumerate(r for r in rows if r["document"] in kept):
        choices = spec["test_wordings"]
        sentence = spec["statements"][row["id"].split("-", 2)[2]][choices[turn % len(choices)]]
        answer = f"Yes. {sentence}"
        qa.append({**row, "answer": answer})
        (label,) = {s["label"] for s in truth[row["id"]]}
        labels.append({"id": row["id"], "spans": [{"start": 5, "end": len(answer), "label": label}]})
    if shuffled:
        said = [line["spans"][0]["label"] for line in labels]
        random.Random(7).shuffle(said)
        for line, label in zip(labels, said, strict=True):
            line["spans"][0]["label"] = label
    (data / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    path = folder / f"{name}-labels.jsonl"
    path.write_text(
        "".join(json.dumps({"answer_id": t["id"], "spans": t["spans"], "rater": "ana"}) + "\n" for t in labels)
    )
    return data, path, kept


@pytest.fixture(scope="module")
def firm_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project file with the firm imported and its reviews (the annotators' labels) imported."""
    folder = tmp_path_factory.mktemp("firm")
    data, labels, _ = write_firm(folder)
    project = Project.open(url_for_path(folder / "firm.assay"))
    import_dataset(project.sessions, data)
    import_labels(project, labels, "ana")
    project.close()
    return folder / "firm.assay"


@pytest.fixture
def firm(firm_file: Path, tmp_path: Path):
    path = tmp_path / "firm.assay"
    shutil.copy(firm_file, path)
    project = Project.open(url_for_path(path))
    yield project
    project.close()


@pytest.fixture(scope="module")
def adopted_file(firm_file: Path, tmp_path_factory: pytest.TempPathFactory):
    """The firm after `checker fit` (once for the module: the tests below read copies)."""
    path = tmp_path_factory.mktemp("adopted") / "firm.assay"
    shutil.copy(firm_file, path)
    project = Project.open(url_for_path(path))
    result = fit_checker(project, None, "lead", neural=False)
    project.close()
    return path, result


@pytest.fixture
def adopted(adopted_file, tmp_path: Path):
    path = tmp_path / "adopted.assay"
    shutil.copy(adopted_file[0], path)
    project = Project.open(url_for_path(path))
    yield project, adopted_file[1]
    project.close()


def _checker_that_spoke(project: Project) -> set[str]:
    with project.sessions() as session:
        rater = raters.rater_named(session, VERIFIER)
        assert rater is not None
        outcomes = judgements.judge_outcomes(session, rater.id).values()
        return {json.loads(o.raw_output)["made_by"]["checker"] for o in outcomes if o.raw_output}


def _verify(project: Project) -> dict[str, list[str]]:
    reports = verify_project(project.sessions, verifier=Verifier(project.sessions, neural=False))
    return {r.answer_id: [p.verdict for p in r.points] for r in reports}


def _actions(project: Project) -> list[str]:
    with project.sessions() as session:
        return [e.action for e in audit.audit_entries(session) if e.action.startswith("checker.")]


def test_the_refit_is_adopted_where_it_beats_the_shipped_checker_held_out(adopted) -> None:
    project, result = adopted
    held = result.standing
    assert result.adopted, held.reasons
    assert held.p_mcnemar < 0.05 and held.wins > held.losses
    assert held.refit.false_alarms <= 0.15
    assert held.refit.f1 > held.shipped.f1  # what a reviewer sees: more wrong statements flagged
    assert _actions(project) == ["checker.fitted", "checker.adopted"]
    with project.sessions() as session:
        entries = [e for e in audit.audit_entries(session) if e.action == "checker.adopted"]
    assert entries[0].payload["sha256"] == result.sha256
    shown = show_checker(project, None)
    assert shown["sha256"] == result.sha256
    assert shown["last_fit"]["held_out"]["shipped"]["points"] == shown["last_fit"]["held_out"]["refit"]["points"]
    _verify(project)
    assert _checker_that_spoke(project) == {f"fitted {result.sha256}"}
    # the verifier's standing (triage, the default rater) rests on the refit's held-out figures, not on its
    # verdicts on the very answers it learnt from
    with project.sessions() as session:
        (verifier,) = [s for s in standings(session) if s.name == VERIFIER]
    assert verifier.recall == pytest.approx(held.refit.recall)
    assert verifier.false_alarm_rate == pytest.approx(held.refit.false_alarms)


def test_checker_show_prints_both_standings(adopted, capsys: pytest.CaptureFixture[str]) -> None:
    project, result = adopted
    assert main(["--db", project.url, "checker", "show"]) == 0
    printed = capsys.readouterr().out
    assert f"the fitted {result.sha256[:12]} checker speaks" in printed
    assert "shipped  flags" in printed and "fitted   flags" in printed and "McNemar" in printed


def test_shuffled_tags_are_not_adopted_and_nothing_changes(tmp_path: Path) -> None:
    data, labels, _ = write_firm(tmp_path, shuffled=True)
    project = Project.open(url_for_path(tmp_path / "shuffled.assay"))
    try:
        import_dataset(project.sessions, data)
        import_labels(project, labels, "ana")
        before = _verify(project)
        result = fit_checker(project, None, "lead", neural=False)
        assert not result.adopted
        assert result.standing is not None and result.standing.reasons  # it says why
        assert show_checker(project, None)["speaks"] == "shipped"
        assert _actions(project) == ["checker.fitted"]
        assert _verify(project) == before
        assert _checker_that_spoke(project) == {"shipped"}
    finally:
        project.close()


def test_reset_lets_the_shipped_checker_speak_again(adopted) -> None:
    project, result = adopted
    assert reset_checker(project, None, "lead") == result.sha256
    assert show_checker(project, None)["speaks"] == "shipped"
    assert _actions(project) == ["checker.fitted", "checker.adopted", "checker.reset"]
    _verify(project)
    assert _checker_that_spoke(project) == {"shipped"}


def test_an_altered_fitted_checker_is_refused(adopted, capsys: pytest.CaptureFixture[str]) -> None:
    project, _ = adopted
    with project.sessions.begin() as session:
        kept = store.stored(session, None)
        assert kept is not None
        model = json.loads(kept["model"])
        model["flag"] = 0.0  # flag everything: what a tamperer would want
        reviews.set_setting(session, store.key_of(None), kept | {"model": json.dumps(model)})
    with pytest.raises(CheckerAltered, match="altered"):
        _verify(project)
    assert main(["--db", project.url, "verify"]) == 2
    assert "altered" in capsys.readouterr().err


def test_a_matters_checker_learns_from_that_matter_alone_and_speaks_for_it_alone(firm: Project) -> None:
    documents = sorted(p.name for p in (REAL / "documents").iterdir())[:NDAS]
    a = matters.create(firm, "Acme", "A-1", "Acme diligence", "lead")
    matters.create(firm, "Birch", "B-1", "Birch diligence", "lead")
    for name in documents[:12]:
        matters.assign(firm, "A-1", name, "lead")
    for name in documents[12:]:
        matters.assign(firm, "B-1", name, "lead")
    with pytest.raises(Exception, match="no person has tagged"):  # the unassigned answers: none left
        fit_checker(firm, None, "lead", neural=False)
    result = fit_checker(firm, a, "lead", neural=False)
    assert result.answers == 12 * 17  # A's reviews only
    assert result.adopted, result.standing
    assert show_checker(firm, matters.find(firm, "B-1"))["speaks"] == "shipped"
    _verify(firm)
    with firm.sessions() as session:
        rater = raters.rater_named(session, VERIFIER)
        assert rater is not None
        spoke = {
            answer: json.loads(o.raw_output)["made_by"]["checker"]
            for answer, o in judgements.judge_outcomes(session, rater.id).items()
        }
    from storage.matters import answer_matters

    with firm.sessions() as session:
        matter_of = answer_matters(session, list(spoke))
    assert {spoke[x] for x in spoke if matter_of[x] == a.id} == {f"fitted {result.sha256}"}
    assert {spoke[x] for x in spoke if matter_of[x] != a.id} == {"shipped"}


SERVER = os.environ.get("ASSAY_TEST_POSTGRES")


@pytest.mark.skipif(not SERVER, reason="no PostgreSQL server: run under tests/with_postgres.sh")
def test_a_matters_fitted_checker_is_neither_used_nor_seen_by_a_walled_login(tmp_path: Path) -> None:
    """Three real logins: lead (owner), ana on Acme's matter A, ben on Birch's B (walled from A)."""
    from tests.test_matters_postgres import Server

    server = Server(tag="ck")
    assert server.assay("lead", "init") == 0
    server.grant_everything()
    assert server.assay("lead", "matters", "--create", "A-1", "--client", "Acme", "--name", "Acme diligence") == 0
    assert server.assay("lead", "matters", "--create", "B-1", "--client", "Birch", "--name", "Birch diligence") == 0
    assert server.assay("lead", "matters", "--add", server.logins["ana"], "--to", "A-1") == 0
    assert server.assay("lead", "matters", "--add", server.logins["ben"], "--to", "B-1") == 0
    for key, first, last in (("A", 0, 12), ("B", 12, 13)):
        data, labels, _ = write_firm(tmp_path, first=first, last=last, name=f"firm{key}")
        assert server.assay("lead", "import", str(data), "--matter", f"{key}-1") == 0
        assert server.assay("lead", "import-labels", str(labels)) == 0
    lead = Project.open(server.url("lead"))
    try:
        a = matters.find(lead, "A-1")
        result = fit_checker(lead, a, "lead", neural=False)
        assert result.adopted, result.standing
        with lead.sessions() as session:
            assert store.stored(session, a.id) is not None
    finally:
        lead.close()
    key = store.key_of(a.id)
    assert server.value("lead", f"SELECT count(*) FROM settings WHERE key = '{key}'") == "1"
    assert server.value("ben", "SELECT count(*) FROM settings WHERE key LIKE 'model\\_check.%'") == "0"
    assert server.value("ben", "SELECT count(*) FROM audit_log WHERE action LIKE 'checker.%'") == "0"
    ben = Project.open(server.url("ben"))
    try:
        with ben.sessions() as session:
            assert store.stored(session, a.id) is None and store.last_fit(session, a.id) is None
        reports = verify_project(ben.sessions, verifier=Verifier(ben.sessions, neural=False))
        assert reports and all(r.answer_id.startswith("cnli-") for r in reports)
        assert _checker_that_spoke(ben) == {"shipped"}
    finally:
        ben.close()
    assert server.assay("ben", "checker", "show", "--matter", "A-1") == 2  # no such matter, for him


def test_learn_from_reviews_in_the_window_says_why_it_was_not_adopted(qtbot, tmp_path: Path) -> None:
    """Reviews of two NDAs: too few to hold some out, which the dialog says, after a progress bar that ran
    to its end while the window stayed free."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QWidget

    from ui.learn_dialog import LearnDialog

    data, labels, _ = write_firm(tmp_path, last=2)
    sample_project = Project.open(url_for_path(tmp_path / "two.assay"))
    import_dataset(sample_project.sessions, data)
    import_labels(sample_project, labels, "ana")

    parent = QWidget()
    qtbot.addWidget(parent)
    dialog = LearnDialog(parent, Workspace(sample_project), "ana")
    qtbot.addWidget(dialog)
    qtbot.mouseClick(dialog.start, Qt.MouseButton.LeftButton)
    assert not dialog.start.isEnabled()  # running, off the GUI thread
    qtbot.waitUntil(dialog.start.isEnabled, timeout=600_000)
    assert "Not adopted" in dialog.message.text() and "at least 4 are needed" in dialog.message.text()
    assert dialog.progress.value() == dialog.progress.maximum() > 0
    assert show_checker(sample_project, None)["speaks"] == "shipped"
    sample_project.close()


def test_a_signoff_records_the_fitted_checker_that_speaks(adopted) -> None:
    """Issue 64 §4: a sign-off records which checker spoke, by the SHA-256 its adoption pinned."""
    from storage.signoffs import checker_that_spoke

    project, _ = adopted
    with project.sessions() as session:
        answer = session.scalars(select(AnswerRow.id)).first()
        assert answer is not None
        assert checker_that_spoke(session, answer) == f"fitted {store.pinned_sha256(session, None)}"
    reset_checker(project, None, "lead")
    with project.sessions() as session:
        assert checker_that_spoke(session, answer) == "shipped"

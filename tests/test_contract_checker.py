"""The contract checker as a lawyer meets it, on the sample's two labelled NDAs (ContractNLI's annotators'
labels; never trained on, and left out of the exemplar memory): reading what other contracts' annotated
clauses say, it confirms correct statements the words-only checker leaves for the lawyer to read, and
what it confirms is right. Real encoders, memory and models; no doubles."""

from __future__ import annotations

import json

import pytest

from app.ingest.datasets import import_dataset
from app.judging.verification import Verifier, verify_project
from app.project import SAMPLE_DATASET, Project
from models.checker import shipped
from models.checker.encoder import Encoders, shipped_encoders
from models.checker.ranking import MEANING, PassageIndex
from models.verifier.verify import INCORRECT, SUPPORTED
from storage import answers


def _figures(project: Project, verifier: Verifier) -> dict[str, int]:
    """Points confirmed (right, wrong) and answers flagged (with an error, without) against the labels."""
    labels = {
        row["id"]: row["labels"] for row in map(json.loads, (SAMPLE_DATASET / "labels.jsonl").read_text().splitlines())
    }
    reports = verify_project(project.sessions, sorted(labels), save=False, verifier=verifier)
    out = {"confirmed_right": 0, "confirmed_wrong": 0, "caught": 0, "false_alarms": 0, "correct_answers": 0}
    for report in reports:
        spans = labels[report.answer_id]
        wrong = any(s["label"] != "supported" for s in spans)
        for p in report.points:
            held = [s["label"] for s in spans if s["start"] < p.end and p.start < s["end"]]
            if p.verdict == SUPPORTED and held:
                out["confirmed_right" if held == ["supported"] else "confirmed_wrong"] += 1
        flagged = any(p.verdict == INCORRECT for p in report.points)
        out["caught" if wrong else "false_alarms"] += flagged
        out["correct_answers"] += not wrong
    return out


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Project:
    from storage.db import url_for_path

    project = Project.open(url_for_path(tmp_path_factory.mktemp("contracts") / "sample.assay"))
    import_dataset(project.sessions, SAMPLE_DATASET)
    return project


def test_it_confirms_what_the_words_only_checker_leaves_to_read_and_is_right(sample: Project) -> None:
    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders) and encoders.checker.reads_meaning
    by_meaning = _figures(sample, Verifier(sample.sessions))
    by_words = _figures(sample, Verifier(sample.sessions, neural=False))
    assert by_meaning["confirmed_right"] > by_words["confirmed_right"]
    assert by_meaning["confirmed_wrong"] <= max(1, by_meaning["confirmed_right"] // 10)  # right 9 times in 10
    assert by_meaning["caught"] >= by_words["caught"] - 1  # it catches as many wrong answers, give or take one
    assert by_meaning["false_alarms"] <= by_meaning["correct_answers"] / 5


def test_each_checker_refuses_features_it_was_not_trained_on() -> None:
    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders)
    claim = [("Receiving Party may retain one archival copy of Confidential Information.", SUPPORTED)]
    with pytest.raises(ValueError, match="needs what the exemplars and the cross-encoder say"):
        encoders.checker.assess_many(claim, None)
    with pytest.raises(ValueError, match="reads words only"):
        shipped().assess_meaning([claim[0][0]], [[0.0]], [])


CLAUSES = [
    "1. The Receiving Party shall keep the Disclosing Party's Confidential Information confidential and shall "
    "not use any of it except for the Purpose.",
    "2. The Recipient shall not decompile, disassemble or take apart any prototype, software or sample "
    "provided by the Discloser.",
    "3. This Agreement shall be governed by the laws of England.",
]
REVERSE_ENGINEERING = (
    "Receiving Party shall not reverse engineer any objects which embody Disclosing Party's Confidential Information."
)


def test_the_cross_encoder_reads_which_clause_decides_a_claim() -> None:
    """The clause on taking prototypes apart decides the claim, though the confidentiality clause shares
    more of its words; governing law says nothing of it."""
    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders)
    supported, _, not_stated = encoders.judge([(REVERSE_ENGINEERING, clause) for clause in CLAUSES]).T
    assert supported[1] > 0.5
    assert not_stated[0] > 0.5 and not_stated[2] > 0.5


def test_a_claim_the_exemplars_know_is_shown_the_clause_the_cross_encoder_reads_as_deciding_it() -> None:
    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders)
    index = PassageIndex(["par_1", "par_2", "par_3"], CLAUSES, encoders)
    claims = [REVERSE_ENGINEERING, "The parties met in Paris on a sunny day."]
    ranked = index.rank(claims, encoders.ranker, encoders.memory)
    assert ranked[0].ids[0] == "par_2" and len(ranked[0].meaning) == len(MEANING)
    assert ranked[1].meaning == []  # no exemplar says such a thing: the words decide it


def test_a_claim_longer_than_the_cross_encoder_reads_is_read_in_part_not_refused() -> None:
    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders)
    claim = " ".join([REVERSE_ENGINEERING] * 30)  # some 500 word pieces: more than a pair may hold
    probabilities = encoders.judge([(claim, CLAUSES[1]), (REVERSE_ENGINEERING, CLAUSES[1])])
    assert probabilities.shape == (2, 3) and abs(float(probabilities[0].sum()) - 1) < 1e-5


def test_what_the_encoders_say_of_a_text_does_not_hang_on_what_they_read_beside_it() -> None:
    """The same answer verified twice gives the same verdicts, whatever was verified in between: the int8
    models quantise their activations over whatever they read at once."""
    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders)
    alone = encoders.embed([CLAUSES[1]])
    beside = encoders.embed([CLAUSES[0], CLAUSES[1] * 3, CLAUSES[1], CLAUSES[2]])
    assert (alone[0] == beside[2]).all()
    pair = (REVERSE_ENGINEERING, CLAUSES[1])
    assert (encoders.judge([pair])[0] == encoders.judge([(REVERSE_ENGINEERING, CLAUSES[0]), pair])[1]).all()


def test_an_answer_verified_alone_gets_what_the_whole_project_run_gave_it(sample: Project) -> None:
    """A lawyer who verifies one answer again sees the verdicts, probabilities and passages the run over
    the project showed, whatever passages of its contract were read before. (With texts read in batches,
    this content licence's answer was shown another passage alone than after the others about it.)"""
    with sample.sessions() as session:
        document = answers.answer_detail(session, "cuad-041").document_id
        about_it = sorted(
            a.id for a in answers.list_answers(session) if answers.answer_detail(session, a.id).document_id == document
        )
    [alone] = verify_project(sample.sessions, ["cuad-041"], save=False, verifier=Verifier(sample.sessions))
    in_run = verify_project(sample.sessions, about_it, save=False, verifier=Verifier(sample.sessions))
    [after] = [r for r in in_run if r.answer_id == "cuad-041"]
    assert len(about_it) > 1 and about_it[0] != "cuad-041" and alone.points
    assert [p.as_dict() for p in alone.points] == [p.as_dict() for p in after.points]

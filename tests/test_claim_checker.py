"""The learned claim checker as a lawyer meets it: a claim the contract makes is not flagged, one it never
makes is, with the passage it compared them with; "supported" only where the checker is sure, else the
passage is evidence with no verdict; the probability is the flagged point's confidence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.ingest.datasets import import_dataset
from app.judging.verification import Verifier, verify_project
from app.project import Project
from models.checker import ClaimChecker, Evidence, shipped
from models.checker.encoder import Encoders, shipped_encoders
from models.checker.model import MODEL_FILE

CONTRACT = """MUTUAL NON-DISCLOSURE AGREEMENT

This Agreement is made between Acme Corp ("Disclosing Party") and Beta LLC ("Receiving Party").

1. Confidential Information. "Confidential Information" means all technical and business information
disclosed by the Disclosing Party, whether in writing or orally.

2. Obligations. The Receiving Party shall hold the Confidential Information in strict confidence and shall
not disclose it to any third party without the prior written consent of the Disclosing Party.

3. Term. This Agreement shall remain in effect for three (3) years from the Effective Date.

4. Governing Law. This Agreement shall be governed by the laws of the State of New York.
"""
# Web passages, not a contract: the kind of document RAGTruth's answers are about.
PASSAGES = """passage 1: To season a cast-iron pan, wash it in warm soapy water and dry it completely on the stove.
Rub a thin coat of vegetable oil over the whole pan, inside and out.

passage 2: Put the pan upside down on the middle rack of an oven heated to 450 degrees and bake it for one hour.
Place a sheet of foil on the rack below to catch any drips. Let the pan cool in the oven.

passage 3: Repeat the oiling and baking three or four times for a darker, tougher finish. Never soak a cast-iron
pan or put it in the dishwasher, because it will rust.
"""
MADE = "The Receiving Party shall not disclose the Confidential Information to any third party."
NEVER_MADE = "The Receiving Party may retain copies for archival backup purposes on its servers in Singapore."


def _evidence() -> Evidence:
    paragraphs = [p for p in CONTRACT.split("\n\n") if p.strip()]
    return Evidence.of([(f"par_{i}", p) for i, p in enumerate(paragraphs, start=1)])


def test_a_claim_the_contract_makes_is_less_likely_unsupported_than_one_it_never_makes() -> None:
    checker = shipped()
    made, never = checker.assess_many([(MADE, "supported"), (NEVER_MADE, "unverifiable")], _evidence())
    assert made is not None and never is not None
    assert made.kind == never.kind == "contract"
    assert made.p_unsupported < 0.5 < never.p_unsupported
    assert not made.flagged and never.flagged
    assert made.passage == "par_4"  # "2. Obligations", where the claim's words are


def test_a_bare_verdict_has_nothing_to_check() -> None:
    assert shipped().assess_many([("Yes.", "unverifiable")], _evidence()) == [None]


def test_features_are_the_same_in_every_process() -> None:
    """String hashing differs between processes: sums and ties must not depend on a set's order."""
    code = (
        "import sys; sys.path.insert(0, '.');"
        "from tests.test_claim_checker import _evidence, NEVER_MADE, MADE;"
        "from models.checker.features import measure;"
        "print([measure(c, _evidence(), 'supported').values for c in (MADE, NEVER_MADE)])"
    )
    root = Path(__file__).resolve().parent.parent
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], cwd=root, env={"PYTHONHASHSEED": seed}, capture_output=True, text=True
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(runs) == 1 and runs.pop().startswith("[")


def test_a_model_of_other_features_or_without_a_kind_of_answer_is_refused_with_a_sentence() -> None:
    data = json.loads(MODEL_FILE.read_text())
    with pytest.raises(ValueError, match="rebuild it"):
        ClaimChecker({**data, "features": data["features"][:-1]})
    with pytest.raises(ValueError, match=r"a summary.*rebuild it"):
        ClaimChecker({**data, "calibration": {k: v for k, v in data["calibration"].items() if k != "summary"}})


def test_a_summary_is_judged_by_the_thresholds_set_for_summaries() -> None:
    """A summary makes several points where an answer makes one or two: each kind has its own calibration
    and flag threshold, so that a correct summary is not flagged for its length."""
    checker = shipped()
    passages = Evidence.of([(f"par_{i}", p) for i, p in enumerate(PASSAGES.split("\n\n"), start=1)])
    claim = [("Bake the pan upside down at 450 degrees for one hour.", "supported")]
    summary = checker.assess_many(claim, passages, "Summarize the following passages.")[0]
    answer = checker.assess_many(claim, passages, "How do you season a cast-iron pan?")[0]
    in_contract = checker.assess_many([(MADE, "supported")], _evidence(), "Summarise the agreement.")[0]
    assert summary and answer and in_contract
    assert (summary.kind, answer.kind, in_contract.kind) == ("summary", "other", "contract")
    assert checker.thresholds["flag"]["summary"] != checker.thresholds["flag"]["other"]
    assert not summary.flagged and not answer.flagged


def test_outside_contracts_supported_still_holds_were_errors_three_times_as_common() -> None:
    """Where few points are wrong (6 % of RAGTruth's summary points), 95 % right says little more than the
    base rate: a reader whose LLM errs more often would find "supported" wrong too often. Outside contracts
    the threshold also holds 9 times in 10 with every error counted three times."""
    import numpy as np

    from training import train_claim_checker as script

    rng = np.random.default_rng(7)
    p = np.sort(rng.uniform(0.0, 0.3, 4000))
    y = (rng.uniform(size=p.size) < p / 2).astype(int)  # errors grow likelier as the probability rises

    def right_were_errors_tripled(threshold: float) -> float:
        said = p <= threshold
        right, wrong = int((y[said] == 0).sum()), int((y[said] > 0).sum())
        return right / (right + 3 * wrong)

    plain = script.support_threshold(p, y)
    shifted = script.support_threshold(p, y, script.SHIFTED_PRECISION, script.ERRORS_MORE_COMMON)
    assert right_were_errors_tripled(plain) < 0.90 <= right_were_errors_tripled(shifted)
    assert shifted < plain and (p <= shifted).sum() >= 30
    thresholds = shipped().thresholds
    assert thresholds["support"]["summary"] < thresholds["flag"]["summary"] / 2  # no longer "all but the flagged"


@pytest.fixture
def contract_project(project: Project, tmp_path: Path) -> Project:
    folder = tmp_path / "nda"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "nda.txt").write_text(CONTRACT)
    answer = f"{MADE} {NEVER_MADE} This Agreement shall be governed by the laws of the State of New York."
    row = {"id": "nda-1", "document": "nda.txt", "question": "What does the NDA say?", "answer": answer}
    (folder / "qa.jsonl").write_text(json.dumps(row) + "\n")
    import_dataset(project.sessions, folder)
    return project


def test_verify_says_supported_only_where_the_checker_is_sure_and_keeps_its_probability(
    contract_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", contract_project.url, "verify", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["answers"][0]["points"]
    verdicts = {"supported", "quoted", "unconfirmed", "incorrect", "needs_review", "unverifiable"}
    assert {p["verdict"] for p in points} <= verdicts
    never = next(p for p in points if p["text"].startswith("The Receiving Party may retain"))
    assert never["verdict"] == "incorrect" and never["probability"] > 0.5
    assert never["reasons"][0]["check"] in ("unsupported", "contradicted")
    made = next(p for p in points if p["text"] == MADE)  # read with the definition it relies on
    assert main(["--db", contract_project.url, "terms", "nda.txt", "--json"]) == 0
    terms = json.loads(capsys.readouterr().out)
    defining = next(t["passage"] for t in terms if t["term"] == "Confidential Information")
    assert {"term": "Confidential Information", "passage": defining} in made["definitions"]
    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders)

    def threshold(claim: str) -> float:
        """The "supported" threshold of the checker that decides the claim: the contract checker's where
        the exemplars know such a claim, else the claim checker's."""
        knows = len(encoders.memory.neighbours(encoders.embed([claim])[0], decided=False)) > 0
        return (encoders.checker if knows else shipped()).thresholds["support"]["contract"]

    for p in points:
        assert p["passage"]
        if p["verdict"] == "quoted" and not p["quote"]["rest"]:  # only a quotation: no model read it
            assert p["probability"] is None and p["reading"] == "the quotation alone, found word for word"
            continue
        assert p["probability"] is not None
        if p["verdict"] == "supported":
            assert p["probability"] <= threshold(p["text"]) + 5e-5  # the JSON rounds to four places
    # the flagged point's stored confidence is the checker's probability: what triage and calibration use
    assert main(["--db", contract_project.url, "show", "nda-1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    stored = [p for p in shown["raters"]["verifier"] if p["tag"] == "incorrect"]
    assert stored and stored[0]["confidence"] == pytest.approx(never["probability"], abs=1e-3)


def _import_web_answers(project: Project, tmp_path: Path, answers: dict[str, str]) -> None:
    """Answers (id -> text) to "how do you season a cast iron pan", about a web page (PASSAGES)."""
    folder = tmp_path / "web"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "pan.txt").write_text(PASSAGES)
    question = "how do you season a cast iron pan"
    rows = [{"id": i, "document": "pan.txt", "question": question, "answer": text} for i, text in answers.items()]
    (folder / "qa.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    import_dataset(project.sessions, folder)


def test_outside_contracts_a_rule_alone_does_not_flag_quoting_the_question(project: Project, tmp_path: Path) -> None:
    """On RAGTruth's answers the rules flagged 15 % of correct answers (a quoted question is not in the
    passages: "misquote"); the quotations check now reads the question's words as such, and outside
    contracts the checker weighs a rule's outcome. In a contract a rule's flag still stands
    (tests/test_verifier.py), and a misquote of the document stands everywhere (tests/test_stress_goals.py)."""
    answer = (
        'Here is a brief answer to the question "how do you quickly season a cast iron skillet": wash the pan, dry'
        " it, coat it thinly with vegetable oil and bake it upside down at 450 degrees for one hour."
    )
    _import_web_answers(project, tmp_path, {"pan-1": answer})
    rules = Verifier(project.sessions, rules_only=True)
    [by_rules] = verify_project(project.sessions, ["pan-1"], save=False, verifier=rules)[0].points
    assert by_rules.verdict != "incorrect" and not by_rules.reasons
    [point] = verify_project(project.sessions, ["pan-1"], save=False)[0].points
    assert point.verdict != "incorrect" and point.probability is not None
    assert point.probability < shipped().thresholds["flag"]["other"]


def test_outside_contracts_the_checker_never_confirms_what_a_rule_objects_to(project: Project, tmp_path: Path) -> None:
    """The checker weighs a rule's flag there, and may find the claim likely supported; a lawyer skips
    reading what is "supported", so a value the passage contradicts leaves it unconfirmed, reason shown."""
    claims = {"right": "one hour", "changed": "two hours"}
    bake = "Rub vegetable oil over the whole pan, then bake it upside down at 450 degrees for {}."
    _import_web_answers(project, tmp_path, {name: bake.format(hours) for name, hours in claims.items()})
    [right], [changed] = (r.points for r in verify_project(project.sessions, list(claims), save=False))
    assert right.verdict == "supported" and not right.reasons
    assert changed.verdict in ("unconfirmed", "incorrect") and changed.probability is not None
    assert [(r["check"], r["claim"], r["document"]) for r in changed.reasons] == [
        ("value_mismatch", "2 hours", "1 hour")
    ]


def test_rules_alone_give_the_old_verdicts_without_probabilities(contract_project: Project) -> None:
    rules = Verifier(contract_project.sessions, rules_only=True)
    reports = verify_project(contract_project.sessions, ["nda-1"], save=False, verifier=rules)
    assert all(p.probability is None and p.verdict != "unconfirmed" for p in reports[0].points)


def test_the_window_shows_evidence_without_a_verdict_and_the_definitions_as_links() -> None:
    from models.checker.report import PointReport
    from ui.review.verifier_flags import describe

    point = PointReport(0, 10, "The Receiving Party keeps it secret.", "unconfirmed", [], "par_4", "", 0.34, 0.1)
    point.definitions = [{"term": "Receiving Party", "passage": "par_1"}]
    text = describe(point)
    assert "not confirmed" in text and "found in the document" not in text
    assert 'href="passage:par_4"' in text and 'href="passage:par_1"' in text
    assert "34% likely that the document does not support this" in text
    assert "objection" not in text  # no rule objected

    reason = {"check": "value_mismatch", "claim": "2 hours", "document": "1 hour", "passage": "par_3"}
    objected = describe(PointReport(0, 10, "Bake it for two hours.", "unconfirmed", [reason], "par_3", "", 0.05, 0.2))
    assert "not confirmed" in objected and "weighs the objection below" in objected
    assert "The document says “1 hour”; the answer says “2 hours”" in objected


def test_one_manifest_pins_every_artefact_and_an_altered_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """resources/claim_checker/manifest.json pins the words-only checker's model.json beside the encoder
    files; a model.json edited by hand is refused with one sentence, not read."""
    import shutil

    from models.checker import manifest

    assert "model.json" in manifest.pinned() and "encoder/cross.int8.onnx" in manifest.pinned()
    assert ClaimChecker.load().held_out  # the shipped file passes its check
    shutil.copytree(manifest.RESOURCES, tmp_path / "claim_checker")
    monkeypatch.setattr(manifest, "RESOURCES", tmp_path / "claim_checker")
    monkeypatch.setattr(manifest, "MANIFEST", tmp_path / "claim_checker" / "manifest.json")
    model = tmp_path / "claim_checker" / "model.json"
    model.write_text(model.read_text().replace('"shipped": true', '"shipped": false', 1))
    with pytest.raises(manifest.ArtefactUnavailable, match=r"model[.]json is altered .*make install") as refused:
        ClaimChecker.load()
    assert "\n" not in str(refused.value)
    shipped.cache_clear()  # `assay verify` loads it afresh and says the same sentence, no traceback
    try:
        assert main(["--db", project.url, "verify"]) == 2
    finally:
        shipped.cache_clear()
    assert "model.json is altered" in capsys.readouterr().err

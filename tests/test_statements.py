"""A claim about an NDA in a lawyer's wording is read as the ContractNLI statement it makes (issue 65): the
same verdict and evidence as the statement in ContractNLI's words, the statement named in the pane; a
claim that denies the statement, gives a value or makes no statement is never read so. The shipped
encoders and statements.json, an NDA written here; no doubles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.checker.encoder import Encoders, shipped_encoders
from models.checker.engine import ClaimEngine, Passage
from models.checker.manifest import RESOURCES
from models.checker.report import PointReport
from models.checker.statements import (
    FILE,
    StatementReader,
    names_an_nda,
    said_alike,
    same_sense,
    shipped_statements,
)
from models.verifier.verify import SUPPORTED

TRAINING = Path(__file__).resolve().parents[1] / "packaging" / "training" / "data"

NDA = [
    ("title", "MUTUAL NON-DISCLOSURE AGREEMENT"),
    (
        "preamble",
        'This Mutual Non-Disclosure Agreement (the "Agreement") is entered into by Harbor Analytics Ltd.'
        ' ("Harbor") and Quill Robotics, Inc. ("Quill") in connection with a possible acquisition (the'
        ' "Purpose").',
    ),
    (
        "§1",
        '1. Definition. "Confidential Information" means all information disclosed by a party (the "Disclosing'
        ' Party") to the other party (the "Receiving Party"), whether in writing, orally or by inspection of'
        " tangible objects.",
    ),
    ("§2", "2. Use. The Receiving Party shall use the Confidential Information solely for the Purpose."),
    (
        "§3",
        "3. Disclosure. The Receiving Party may disclose Confidential Information only to those of its employees"
        " who need to know it for the Purpose.",
    ),
    (
        "§4",
        "4. Reverse engineering. The Receiving Party shall not reverse engineer, decompile or disassemble any"
        " prototypes, software or other tangible objects which embody the Disclosing Party's Confidential"
        " Information.",
    ),
    (
        "§5",
        "5. Return. Upon termination of this Agreement or upon the Disclosing Party's request, the Receiving"
        " Party shall promptly return or destroy all Confidential Information in its possession.",
    ),
]
REVERSE_ENGINEERING = (
    "Receiving Party shall not reverse engineer any objects which embody Disclosing Party's Confidential Information."
)
RETURN = "Receiving Party shall destroy or return some Confidential Information upon the termination of Agreement."


@pytest.fixture(scope="module")
def engine() -> ClaimEngine:
    return ClaimEngine()


@pytest.fixture(scope="module")
def reader(engine: ClaimEngine) -> StatementReader:
    assert engine.statements is not None, "statements.json did not load"
    return engine.statements


def _check(engine: ClaimEngine, claim: str) -> PointReport:
    prepared = engine.prepare([Passage(pid, text) for pid, text in NDA], [])
    text = f"Yes. {claim}"
    (point,) = engine.assess(prepared, text, [(5, len(text))], [[]])
    return point


@pytest.mark.parametrize(
    ("statement", "reworded"),
    [
        (REVERSE_ENGINEERING, "The recipient may not reverse engineer the disclosed materials."),
        (RETURN, "When the agreement ends, the recipient must give back or destroy what it received."),
    ],
)
def test_a_reworded_claim_gets_the_statements_verdict_and_evidence(
    engine: ClaimEngine, statement: str, reworded: str
) -> None:
    said, read = _check(engine, statement), _check(engine, reworded)
    assert (read.verdict, read.passage) == (said.verdict, said.passage)
    assert read.verdict == SUPPORTED
    assert read.text == reworded  # the answer's own words stay what the reviewer sees
    assert f"“{statement}”" in read.reading


def test_a_claim_in_the_statements_own_words_is_not_said_to_be_reworded(engine: ClaimEngine) -> None:
    assert "NDA statement" not in _check(engine, REVERSE_ENGINEERING).reading


@pytest.mark.parametrize(
    ("claim", "clause"),
    [
        ("The recipient is allowed to reverse engineer the disclosed materials.", "§4"),
        ("Nothing prohibits the recipient from decompiling or disassembling the materials.", "§4"),
        ("The recipient does not have to return or destroy the information when the agreement ends.", "§5"),
    ],
)
def test_a_claim_that_denies_a_statement_is_never_read_as_it(engine: ClaimEngine, claim: str, clause: str) -> None:
    point = _check(engine, claim)
    assert "read as the NDA statement" not in point.reading
    assert point.verdict != SUPPORTED  # the NDA says the opposite: never "found"
    # but it is shown the clause that decides the statement it denies, and told so
    assert point.passage == clause and "the NDA statement nearest it" in point.reading


def test_a_denial_is_never_confirmed_from_the_statement_it_denies(engine: ClaimEngine) -> None:
    """Its words hold no "not", and the bi-encoder puts it beside the duty to return or destroy; "may keep" is
    not "shall return": read as that statement at all, it is never "found" from it."""
    point = _check(engine, "When the agreement ends, the recipient may keep the information it received.")
    assert point.verdict != SUPPORTED
    assert f"“{RETURN}”" not in point.reading or "the other way round" in point.reading


def test_a_wording_that_narrows_with_not_is_read_as_its_statement(engine: ClaimEngine) -> None:
    """The statement's "shall not use for any other purpose" said as "only for": the parity of negations differs,
    yet it says the statement the same way round (the sense model, not a count of "not"s, decides)."""
    point = _check(engine, "The recipient may use the information only to evaluate the proposed deal.")
    assert "“Receiving Party shall not use any Confidential Information" in point.reading


@pytest.mark.parametrize(
    ("claim", "statement", "alike"),
    [
        ("The recipient may not reverse engineer the disclosed materials.", REVERSE_ENGINEERING, True),
        ("Reverse engineering the prototypes is prohibited.", REVERSE_ENGINEERING, True),
        ("When the agreement ends, the recipient must give back or destroy what it received.", RETURN, True),
        ("When the agreement ends, the recipient may keep the information it received.", RETURN, False),
        ("The recipient may analyse the prototypes without restriction.", REVERSE_ENGINEERING, False),
    ],
)
def test_a_claim_is_said_alike_only_with_the_statements_negations_and_modal_words(
    claim: str, statement: str, alike: bool
) -> None:
    assert said_alike(claim, statement) is alike


def test_values_and_quotations_are_checked_as_given(reader: StatementReader, engine: ClaimEngine) -> None:
    assert engine.encoders is not None
    claims = [
        "The recipient must return or destroy the information within 30 days of termination.",
        'The recipient may not "reverse engineer" the disclosed materials.',
    ]
    assert reader.recognise(claims, engine.encoders.embed(claims), engine.encoders.judge) == [None, None]


def test_held_out_wordings_are_read_as_their_statement_and_denials_are_not(
    reader: StatementReader, engine: ClaimEngine
) -> None:
    """Wordings 3-5 and the denials of `check` were never learnt: three in five of the rewordings are read, as
    the right statement (the card: 34 of 51, all right); of the 17 denials, at most two are read as the statement
    they deny ("... is still subject to the confidentiality obligations": no word of it turns the statement round)."""
    assert engine.encoders is not None
    wordings = json.loads((TRAINING / "nda_wordings.json").read_text())["statements"]
    held = [(text, key) for key, texts in wordings.items() for text in texts[3:]]
    found = reader.recognise([t for t, _ in held], engine.encoders.embed([t for t, _ in held]), engine.encoders.judge)
    read = [(r.key, key) for r, (_, key) in zip(found, held, strict=True) if r is not None]
    assert len(read) >= 0.6 * len(held)
    assert sum(a == b for a, b in read) >= 0.95 * len(read)
    denials = json.loads((TRAINING / "nda_negations.json").read_text())["check"]
    claims = list(denials.values())
    found = reader.recognise(claims, engine.encoders.embed(claims), engine.encoders.judge)
    assert len([k for k, r in zip(denials, found, strict=True) if r is not None and r.key == k]) <= 2


@pytest.mark.parametrize(
    ("claim", "statement", "same"),
    [
        ("Reverse engineering is prohibited.", REVERSE_ENGINEERING, True),
        ("Nothing prohibits reverse engineering.", REVERSE_ENGINEERING, False),
        ("The recipient is allowed to reverse engineer.", REVERSE_ENGINEERING, False),
        ("Unmarked information is still protected.", "Confidential Information shall be expressly identified.", False),
    ],
)
def test_which_way_round_a_claim_says_a_statement(claim: str, statement: str, same: bool) -> None:
    assert same_sense(claim, statement) is same


def test_an_altered_statements_file_is_refused_in_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from models.checker import manifest, statements

    encoders = shipped_encoders()
    assert isinstance(encoders, Encoders)
    copy = tmp_path / "claim_checker"
    copy.mkdir()
    (copy / "manifest.json").write_bytes((RESOURCES / "manifest.json").read_bytes())
    spec = json.loads((RESOURCES / FILE).read_text())
    spec["threshold"] = 0.0  # every claim read as a statement
    (copy / FILE).write_text(json.dumps(spec))
    monkeypatch.setattr(manifest, "RESOURCES", copy)
    monkeypatch.setattr(manifest, "MANIFEST", copy / "manifest.json")
    statements._shipped_spec.cache_clear()
    try:
        said = shipped_statements(encoders.memory)
    finally:
        statements._shipped_spec.cache_clear()
    assert isinstance(said, str) and "altered" in said and FILE in said


def test_only_a_document_that_names_itself_an_nda_shows_a_statements_clause_as_evidence(engine: ClaimEngine) -> None:
    """ContractNLI's statements are about NDAs: in a supply agreement a claim near one is shown its own evidence."""
    assert names_an_nda("MUTUAL NON-DISCLOSURE AGREEMENT") and names_an_nda("This Confidentiality Agreement is made")
    assert not names_an_nda('SUPPLY AGREEMENT. "Confidential Information" means all information disclosed by a party')
    supply = [("title", "SUPPLY AGREEMENT"), *NDA[2:]]
    prepared = engine.prepare([Passage(pid, text) for pid, text in supply], [])
    text = "Yes. The recipient is allowed to reverse engineer the disclosed materials."
    (point,) = engine.assess(prepared, text, [(5, len(text))], [[]])
    assert "the NDA statement nearest it" not in point.reading


def test_an_nda_whose_title_is_read_as_a_heading_is_known_as_one(engine: ClaimEngine) -> None:
    """An imported NDA's title is often the heading of its first clauses, not a passage of its own: 26 of
    contractnli-dev's 61 NDAs were read as commercial contracts (and against commercial contracts) for it."""
    clauses = [Passage(pid, text, heading="MUTUAL NON-DISCLOSURE AGREEMENT") for pid, text in NDA[2:]]
    assert engine.prepare(clauses, []).nda
    untitled = [Passage(pid, text) for pid, text in NDA[2:]]
    assert not engine.prepare(untitled, []).nda
    # a title the segmenting left out of every passage is still in the text as imported
    assert engine.prepare(untitled, [], "MUTUAL NON-DISCLOSURE AGREEMENT\n1. Definition. ...").nda


def test_a_claim_read_as_an_nda_statement_is_never_found_in_a_document_that_is_no_nda(engine: ClaimEngine) -> None:
    """ContractNLI's statements are about NDAs: in a commercial contract "No licence of any rights is given" was
    read as the statement that the NDA grants no right to its information, and "found" where a licence is granted."""
    reworded = "The recipient may not reverse engineer the disclosed materials."
    assert _check(engine, reworded).verdict == SUPPORTED
    supply = [("title", "SUPPLY AGREEMENT"), *NDA[2:]]
    prepared = engine.prepare([Passage(pid, text) for pid, text in supply], [])
    text = f"Yes. {reworded}"
    (point,) = engine.assess(prepared, text, [(5, len(text))], [[]])
    assert point.verdict != SUPPORTED
    assert "the document does not name itself an NDA" in point.reading

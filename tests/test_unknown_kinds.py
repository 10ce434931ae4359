"""A claim that a contract has a clause of a kind no reader here knows (issue 65: kinds no training set has) is
read against other contracts (models/checker/reference.py): flagged as never made where the contract has nothing
as close to it as other contracts usually have and never uses its rare words, never where it has the clause, never
for a denial. The sample's affiliate agreement (no jury waiver in it) and the shipped encoders and reference.npz; no
doubles."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from app.ingest.documents import parse_document
from models.checker.engine import ClaimEngine, Passage
from models.checker.manifest import RESOURCES
from models.checker.reference import FILE, Reference, Sentences, shipped_reference
from models.checker.report import PointReport, tag_of
from models.verifier.verify import INCORRECT
from models.vocabulary import Tag

AFFILIATE = (
    Path(__file__).resolve().parent.parent
    / "resources"
    / "sample"
    / "documents"
    / "CybergyHoldingsInc_20140520_10-Q_EX-10.27_8605784_EX-10.27_Affiliate Agreement.txt"
)
JURY = "Each party waives its right to a jury trial."
WAIVER = (
    "15.9 Waiver of Jury Trial. EACH PARTY HEREBY IRREVOCABLY WAIVES ALL RIGHT TO TRIAL BY JURY IN ANY ACTION,"
    " PROCEEDING OR COUNTERCLAIM ARISING OUT OF OR RELATING TO THIS AGREEMENT."
)
NEVER_MADE = "no clause like this in the contract"


@pytest.fixture(scope="module")
def engine() -> ClaimEngine:
    assert isinstance(shipped_reference(), Reference)
    return ClaimEngine()


@pytest.fixture(scope="module")
def affiliate() -> list[Passage]:
    assert "jury" not in AFFILIATE.read_text(encoding="utf-8").lower()
    return [Passage(p.citation_id, p.text) for p in parse_document(AFFILIATE).passages]


def _check(engine: ClaimEngine, passages: list[Passage], claim: str) -> PointReport:
    prepared = engine.prepare(passages, [])
    text = f"Yes. {claim}"
    (point,) = engine.assess(prepared, text, [(5, len(text))], [[]])
    return point


def test_a_clause_of_an_unknown_kind_the_contract_lacks_is_flagged_never_made(
    engine: ClaimEngine, affiliate: list[Passage]
) -> None:
    point = _check(engine, affiliate, JURY)
    assert point.verdict == INCORRECT and tag_of(point) is Tag.INCORRECT
    assert point.reading.startswith(NEVER_MADE) and "standard deviations" in point.reading
    assert "“jury”" in point.reading  # the rare word the contract never uses is named
    assert point.reasons[0]["check"] == "unsupported"


def test_the_same_claim_is_not_flagged_where_the_contract_has_the_clause(
    engine: ClaimEngine, affiliate: list[Passage]
) -> None:
    point = _check(engine, [*affiliate, Passage("par_waiver", WAIVER)], JURY)
    assert point.verdict != INCORRECT and not point.reading.startswith(NEVER_MADE)


def test_an_nda_is_left_to_the_nda_readers(engine: ClaimEngine, affiliate: list[Passage]) -> None:
    """The reference contracts are commercial: a document that names itself an NDA is not read against them."""
    point = _check(engine, [Passage("title", "MUTUAL NON-DISCLOSURE AGREEMENT"), *affiliate], JURY)
    assert not point.reading.startswith(NEVER_MADE)


def test_a_denial_is_never_read_against_other_contracts(engine: ClaimEngine, affiliate: list[Passage]) -> None:
    for denial in (
        "The contract contains no jury waiver.",
        "There is no waiver of trial by jury in the agreement.",
        "There's no jury waiver in this agreement.",  # in words kinds.negated does not know
    ):
        point = _check(engine, affiliate, denial)
        assert point.verdict != INCORRECT and not point.reading.startswith(NEVER_MADE)


def test_a_word_every_contract_uses_weighs_nothing_and_a_rare_one_much(
    engine: ClaimEngine, affiliate: list[Passage]
) -> None:
    """The share of the claim's words the contract never uses is weighed by how rare each is in contracts: a
    contract lacking "agreement" says nothing; one lacking "jury" says much."""
    reference = shipped_reference()
    assert isinstance(reference, Reference) and engine.encoders is not None
    assert reference.rarity("agreement") < 0.2 < 1.0 < reference.rarity("jury")
    sentences = Sentences.of([p.citation_id for p in affiliate], [p.text for p in affiliate], engine.encoders.embed)
    (vector,) = engine.encoders.embed([JURY])
    features, _, missing = reference.features(JURY, vector, sentences)
    assert "jury" in missing and features[2] > 0.5
    assert "jury" not in sentences.words and "agreement" in sentences.words
    with_waiver = Sentences(sentences.passages, sentences.vectors, sentences.words | {"jury", "trial", "waiv"})
    assert reference.features(JURY, vector, with_waiver)[0][2] < features[2] / 3


def test_an_altered_reference_file_is_refused_in_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from models.checker import manifest, reference

    copy = tmp_path / "claim_checker"
    copy.mkdir()
    (copy / "manifest.json").write_bytes((RESOURCES / "manifest.json").read_bytes())
    with np.load(io.BytesIO((RESOURCES / FILE).read_bytes())) as arrays:
        altered = dict(arrays) | {"threshold": np.float64(9.0)}  # every claim flagged
    buffer = io.BytesIO()
    np.savez(buffer, **altered)
    (copy / FILE).write_bytes(buffer.getvalue())
    monkeypatch.setattr(manifest, "RESOURCES", copy)
    monkeypatch.setattr(manifest, "MANIFEST", copy / "manifest.json")
    reference.shipped_reference.cache_clear()
    try:
        said = shipped_reference()
    finally:
        reference.shipped_reference.cache_clear()
    assert isinstance(said, str) and "altered" in said and FILE in said

"""The kind reading (issue 65, item 1): a claim that a kind of clause is there or not is decided by what the
contract's clauses are, with the clause cited; a claim of no known kind is left to the general reader.
The shipped encoders and kinds.json, a supply agreement written here; no doubles."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from models.checker import kinds as kinds_module
from models.checker.encoder import Encoders, shipped_encoders
from models.checker.engine import ClaimEngine, Passage
from models.checker.kinds import (
    SHOWN_AT,
    KindReader,
    KindReading,
    denies,
    negated,
    passage_probabilities,
    polarity_terms,
    recognised,
    recognition_text,
    shipped_kinds,
    tfidf,
)
from models.checker.manifest import RESOURCES, pinned
from models.checker.readings import clause_like_shown, kind_reading
from models.checker.report import PointReport, tag_of
from models.verifier import Document, Source
from models.verifier.verify import INCORRECT, SUPPORTED, UNCONFIRMED
from models.vocabulary import Tag

CONTRACT = [
    ("title", "SUPPLY AGREEMENT"),
    (
        "preamble",
        'This Supply Agreement (the "Agreement") is entered into by and between Acme Components, Inc., a'
        ' Delaware corporation ("Supplier"), and Northwind Devices LLC ("Customer").',
    ),
    (
        "§2.1",
        "2.1 Supply. Supplier shall manufacture and sell to Customer, and Customer shall purchase from Supplier,"
        " the Products set forth in Exhibit A in the quantities stated in each purchase order issued hereunder.",
    ),
    (
        "§3.1",
        "3.1 Prices. The prices for the Products are set forth in Exhibit A. Customer shall pay each invoice"
        " within thirty (30) days after the date of invoice.",
    ),
    (
        "§5.1",
        "5.1 Delivery. Supplier shall deliver the Products FCA Supplier's facility. Title and risk of loss shall"
        " pass to Customer upon delivery to the carrier.",
    ),
    (
        "§9.1",
        "9.1 Confidentiality. Each party shall hold the other party's Confidential Information in confidence and"
        " shall not disclose it to any third party except as permitted by this Agreement.",
    ),
    (
        "§10.1",
        "10.1 Insurance. Supplier shall maintain, at its own expense, commercial general liability insurance and"
        " product liability insurance with reputable insurers, and shall furnish certificates of insurance to"
        " Customer upon request.",
    ),
    (
        "§12.2",
        "12.2 Limitation of Liability. EXCEPT FOR BREACHES OF SECTION 9, IN NO EVENT SHALL EITHER PARTY'S"
        " AGGREGATE LIABILITY ARISING OUT OF OR RELATED TO THIS AGREEMENT EXCEED THE TOTAL AMOUNTS PAID BY"
        " CUSTOMER TO SUPPLIER UNDER THIS AGREEMENT IN THE TWELVE MONTHS PRECEDING THE CLAIM. IN NO EVENT SHALL"
        " EITHER PARTY BE LIABLE FOR ANY INDIRECT, INCIDENTAL, SPECIAL OR CONSEQUENTIAL DAMAGES.",
    ),
    (
        "§14.1",
        "14.1 Notices. All notices under this Agreement shall be in writing and shall be deemed given when"
        " delivered personally or by overnight courier to the addresses set forth above.",
    ),
    (
        "§14.3",
        "14.3 Entire Agreement. This Agreement constitutes the entire agreement between the parties with respect"
        " to its subject matter and supersedes all prior agreements and understandings.",
    ),
]


@pytest.fixture(scope="module")
def engine() -> ClaimEngine:
    assert isinstance(shipped_encoders(), Encoders)
    assert isinstance(shipped_kinds(), KindReader)
    return ClaimEngine()


def _check(engine: ClaimEngine, claim: str, question: str = "") -> PointReport:
    prepared = engine.prepare([Passage(pid, text) for pid, text in CONTRACT], [])
    assert prepared.evidence.kind == "contract"
    text = f"Yes. {claim}"
    (point,) = engine.assess(prepared, text, [(5, len(text))], [[]], question)
    return point


def test_a_clause_the_contract_has_is_confirmed_with_its_citation(engine: ClaimEngine) -> None:
    point = _check(engine, "Liability under the agreement is capped.")
    assert point.verdict == SUPPORTED and tag_of(point) is Tag.CORRECT
    assert point.passage == "§12.2"
    assert point.reading == "the kind of clause, read: limitation of liability; clause of this kind found: §12.2"


def test_a_clause_the_contract_lacks_is_flagged_never_made(engine: ClaimEngine) -> None:
    point = _check(engine, "The contract contains a non-compete clause.")
    assert point.verdict == INCORRECT and tag_of(point) is Tag.INCORRECT
    assert point.reasons[0]["check"] == "unsupported"
    assert point.reading.endswith("no clause of this kind in the contract")


def test_denying_a_clause_the_contract_has_is_contradicted(engine: ClaimEngine) -> None:
    point = _check(engine, "The agreement does not require either party to carry insurance.")
    assert point.verdict == INCORRECT
    assert point.reasons[0]["check"] == "contradicted" and point.reasons[0]["passage"] == "§10.1"
    assert point.contradiction == 1.0
    assert point.reading.endswith("clause of this kind found: §10.1")


def test_a_clause_said_in_plain_words_is_found_with_its_citation(engine: ClaimEngine) -> None:
    """No word of the kind's name: the recogniser knows it from other hands' wordings of the same kind."""
    point = _check(engine, "There's a ceiling on what either side can be made to pay.")
    assert point.verdict == SUPPORTED and point.passage == "§12.2"


def test_a_denial_in_other_words_of_a_clause_the_contract_has_is_contradicted(engine: ClaimEngine) -> None:
    """No "does not" or "there is no" for the words alone to find: the denial model reads it as other hands'
    denials of the kind read."""
    point = _check(engine, "Supplier is free to operate without any insurance cover.")
    assert point.verdict == INCORRECT and point.reasons[0]["check"] == "contradicted"
    assert point.passage == "§10.1"


def test_a_claim_whose_sense_is_in_doubt_is_never_found(engine: ClaimEngine) -> None:
    """Read as saying the clause is there, it would be "found" citing §10.1: a promise the contract breaks. The
    denial model is not sure it denies (kinds.json's `doubt`), so where the clause is there the kind reading gives
    no verdict."""
    point = _check(engine, "Nobody has to keep insurance under this deal.")
    assert point.verdict != SUPPORTED


def test_a_claim_of_no_known_kind_is_left_to_the_general_reader(engine: ClaimEngine) -> None:
    point = _check(engine, "The Products are delivered FCA Supplier's facility.")
    assert not point.reading.startswith("the kind of clause")


@pytest.mark.parametrize(
    "claim",
    [
        "Customer pays each invoice within 30 days.",
        "Unless terminated, the contract renews for renewal periods of one year each.",
    ],
)
def test_a_value_is_the_values_readers_not_the_kind_readings(engine: ClaimEngine, claim: str) -> None:
    """The second had been read as a perpetual licence: "renews" is near "perpetual", and no digit said it was a
    term."""
    point = _check(engine, claim)
    assert not point.reading.startswith("the kind of clause")


@pytest.mark.parametrize(
    ("claim", "denies"),
    [
        ("There is no non-compete.", True),
        ("The agreement does not contain a non-solicitation clause.", True),
        ("Liability is not capped.", True),
        ("No license is granted.", True),
        ("A party may not solicit the other party's employees.", False),
        ("Neither party may compete with the other.", False),
        ("A party cannot freely transfer the agreement to a third party.", False),
    ],
)
def test_a_claim_that_denies_a_clause_is_told_from_one_that_states_a_restriction(claim: str, denies: bool) -> None:
    assert negated(claim) is denies


@pytest.mark.parametrize(
    ("claim", "denies_one"),
    [
        ("The parties are free to compete with each other.", True),
        ("Either party may assign the agreement freely.", True),
        ("Neither party is required to carry insurance.", True),
        ("Nothing restricts a party from offering competing products.", True),
        ("A party can be acquired without triggering any consent or termination right.", True),
        ("A party may not freely assign the agreement.", False),  # a restriction, said with "freely"
        ("Either party may terminate the agreement at will on notice.", False),
        ("Neither party may solicit the other's employees.", False),
        ("Neither party is liable for lost profits.", False),
        # a reader's search that came back empty
        ("I couldn't find any audit clause in the agreement.", True),
        ("The agreement does not appear to include a covenant not to compete.", True),
        ("There doesn't seem to be any requirement to insure.", True),
        ("We found no restriction on hiring the other side's staff.", True),
        ("The contract never says how long the warranty lasts.", True),
        ("Supplier shall see that the goods are insured in transit.", False),
        ("The licensee cannot assign the licence without consent.", False),
    ],
)
def test_a_claim_whose_words_deny_a_clause_is_read_as_a_denial(claim: str, denies_one: bool) -> None:
    """Words the denial model's first feature does not know ("free to compete", "Neither party is required to") deny
    a clause: such a claim is read as a denial by the kind reading, and never against other contracts."""
    assert denies(claim) is denies_one


def test_an_altered_kinds_file_is_refused_in_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = json.loads((RESOURCES / "kinds.json").read_text())
    spec["thresholds"]["present"] = 0.0  # everything "there"
    changed = tmp_path / "claim_checker"
    changed.mkdir()
    (changed / "kinds.json").write_text(json.dumps(spec))
    (changed / "manifest.json").write_text(json.dumps({"files": pinned()}))
    monkeypatch.setattr("models.checker.manifest.RESOURCES", changed)
    monkeypatch.setattr("models.checker.manifest.MANIFEST", changed / "manifest.json")
    kinds_module.shipped_kinds.cache_clear()
    try:
        said = kinds_module.shipped_kinds()
    finally:
        kinds_module.shipped_kinds.cache_clear()
    assert isinstance(said, str)
    assert said.endswith("reinstall Assay with `make install`") and "kinds.json is altered" in said
    assert said.count(". ") == 0


def test_the_shipped_file_is_the_one_pinned() -> None:
    data = (RESOURCES / "kinds.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == pinned()["kinds.json"]


def test_int8_and_float_vectors_recognise_the_same_kinds() -> None:
    """The recogniser is float numpy over the bi-encoder's vectors (the clause classifier reads words): the
    int8 encoder's vectors and the float reference vectors of tests/fixtures/encoder_reference.json give the
    same decision for every text there: the same kind where one is recognised, none where none is (below the
    threshold two kinds can tie, and which is nearest decides nothing)."""
    reference = json.loads((Path(__file__).parent / "fixtures" / "encoder_reference.json").read_text())
    reader = shipped_kinds()
    encoders = shipped_encoders()
    assert isinstance(reader, KindReader) and isinstance(encoders, Encoders)
    floats = np.asarray(reference["float"]["embed"], dtype=np.float32)
    ints = encoders.embed(reference["texts"])
    for f, i in zip(floats, ints, strict=True):
        kind_f, p_f = recognised(reader.prototypes, reader.owner, f, len(reader.keys), reader.recogniser)
        kind_i, p_i = recognised(reader.prototypes, reader.owner, i, len(reader.keys), reader.recogniser)
        assert abs(p_f - p_i) < 0.1  # one of the ten nearest prototypes may swap: a tenth of a vote
        assert (p_f >= reader.recognise) == (p_i >= reader.recognise)
        assert p_f < reader.recognise or kind_f == kind_i


def test_the_classifier_reads_words_as_it_was_trained() -> None:
    """The TF-IDF the reader computes is scikit-learn's: a passage that names the clause scores high."""
    reader = shipped_kinds()
    assert isinstance(reader, KindReader)
    p = passage_probabilities(reader.weights, reader.bias, reader.vocabulary, reader.idf, [t for _, t in CONTRACT])
    cap = reader.keys.index("cap-on-liability")
    assert int(np.argmax(p[:, cap])) == [pid for pid, _ in CONTRACT].index("§12.2")


def test_the_denial_model_reads_words_as_it_was_trained() -> None:
    """The words' TF-IDF the denial model computes is scikit-learn's, "may not" and "cannot" read alike."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [
        "I couldn’t find any audit clause.",
        "The Licensee may not assign the agreement.",
        "The licensee cannot assign the agreement without consent.",
        "Either party is free to assign the agreement.",
    ]
    learnt = TfidfVectorizer(analyzer=polarity_terms, sublinear_tf=True).fit(texts)
    vocabulary = {str(w): i for i, w in enumerate(learnt.get_feature_names_out())}
    expected = learnt.transform(texts).toarray()
    for text, row in zip(texts, expected, strict=True):
        idx, values = tfidf(polarity_terms(text), vocabulary, learnt.idf_)
        read = np.zeros(len(vocabulary))
        read[idx] = values
        assert np.allclose(read, row)
    assert "couldn't find any" in vocabulary and "prohibited assign the" in vocabulary
    assert tfidf(polarity_terms("§ 12"), vocabulary, learnt.idf_)[1].size == 0  # no word known: no terms


def test_where_the_kind_reading_gives_no_verdict_an_unconfirmed_point_shows_the_clause_most_like_it() -> None:
    """Between `absent` and `present` the kind reading decides nothing, but the passage most like a clause of
    the kind is the evidence shown for a point left unconfirmed (not for one a model or a rule decided), and the
    pane says why it is shown."""
    document = Document([Source(pid, text) for pid, text in CONTRACT])
    unsure = KindReading("insurance", "insurance requirement", "", None, 0.2, False, "§10.1")
    left = PointReport(5, 40, "A party must keep insurance.", UNCONFIRMED, [], "§14.3", "")
    shown = kind_reading(left, unsure, document)
    assert shown.passage == "§10.1"
    assert shown.reading == "shown first: §10.1, the passage most like a clause of this kind (insurance requirement)"
    flagged = PointReport(5, 40, "A party must keep insurance.", INCORRECT, [], "§14.3", "")
    assert kind_reading(flagged, unsure, document).passage == "§14.3"


def test_an_exception_in_the_clause_does_not_stop_the_kind_reading(engine: ClaimEngine) -> None:
    """§12.2 caps liability "EXCEPT FOR BREACHES OF SECTION 9": the rules' exception check asks for a review of
    any claim it aligns with, but the clause is no less a cap, and denying it is contradicted."""
    point = _check(engine, "There is no cap on liability.")
    assert point.verdict == INCORRECT and point.reasons[0]["check"] == "contradicted"
    assert point.reasons[0]["passage"] == "§12.2"


def test_a_point_no_reader_cites_a_clause_for_is_shown_the_clause_most_like_its_kind() -> None:
    """In a commercial contract, a point left unconfirmed, in doubt, or flagged as never made is shown first the
    passage most like a clause of the kind it names, and the pane says so; a verdict that rests on a clause of its
    own keeps it."""
    left = PointReport(5, 40, "A party must keep insurance.", UNCONFIRMED, [], "§14.3", "")
    left.reading = "read by meaning"
    shown = clause_like_shown(left, "§10.1", "insurance requirement")
    assert shown.passage == "§10.1" and shown.verdict == UNCONFIRMED
    assert shown.reading == (
        "read by meaning; shown first: §10.1, the passage most like a clause of this kind (insurance requirement)"
    )
    never = {"check": "unsupported", "claim": "", "said": "", "passage": "§14.3"}
    flagged = PointReport(5, 40, "A party must keep insurance.", INCORRECT, [never], "§14.3", "", 0.91, 0.1)
    said = "claim checker: the document does not support this (probability 0.91); closest passage"
    flagged.summary = f"{said} §14.3"
    shown = clause_like_shown(flagged, "§10.1", "insurance requirement")
    assert shown.passage == "§10.1" and shown.summary == f"{said} §10.1"  # the checker's flag names what is shown
    contradicted = {**never, "check": "contradicted"}
    for kept in (
        PointReport(5, 40, "A party must keep insurance.", SUPPORTED, [], "§14.3", ""),
        PointReport(5, 40, "No party must keep insurance.", INCORRECT, [contradicted], "§14.3", ""),
    ):
        assert clause_like_shown(kept, "§10.1", "insurance requirement").passage == "§14.3"


def test_a_claim_the_recogniser_reads_less_surely_than_a_verdict_needs_is_shown_its_kinds_clause(
    engine: ClaimEngine,
) -> None:
    """Below the verdict's bar the kind the recogniser reads is still the evidence to show first: the insurance
    clause, for a claim that never says "insurance"."""
    reader, encoders = engine.kinds, engine.encoders
    assert reader is not None and encoders is not None
    claim = "Certificates must be shown on request."
    vector = encoders.embed([recognition_text(claim)])[0]
    assert reader.kind_of(claim, vector) is None
    ids, texts = [pid for pid, _ in CONTRACT], [text for _, text in CONTRACT]
    assert reader.clause_like(claim, vector, ids, texts) == ("§10.1", "insurance requirement", True)
    value = "Certificates must be furnished within 30 days."
    assert reader.clause_like(value, encoders.embed([recognition_text(value)])[0], ids, texts) is None


def test_a_bare_yes_is_shown_no_passage(engine: ClaimEngine) -> None:
    """Nothing in "Yes." is checked: it was shown the one passage that said "Yes/No", as if that were evidence."""
    passages = [Passage(pid, text) for pid, text in CONTRACT] + [
        Passage("§15", "15. Form. Each answer on the order form shall be marked Yes/No by the Customer.")
    ]
    prepared = engine.prepare(passages, [])
    (point,) = engine.assess(prepared, "Yes.", [(0, 4)], [[]])
    assert point.passage is None and point.verdict != SUPPORTED


def test_a_claim_unsurely_of_a_kind_the_contract_has_is_never_called_never_made(engine: ClaimEngine) -> None:
    """Read against other contracts "prove" and "carries" are words the contract never uses, and the claim was
    flagged as never made; but the recogniser reads it (unsurely) as insurance, and §10.1 is an insurance clause."""
    point = _check(engine, "The seller must prove it carries policies.")
    assert point.verdict != INCORRECT and not point.reading.startswith("no clause like this")
    assert point.passage == "§10.1"


def test_a_denial_of_a_clause_the_contract_has_is_contradicted_below_the_verdicts_bar(engine: ClaimEngine) -> None:
    """The recogniser is less sure it is about insurance than a verdict needs, but its words deny a clause and the
    contract has the one it most likely means: it is contradicted, citing §10.1."""
    reader, encoders = engine.kinds, engine.encoders
    assert reader is not None and encoders is not None
    claim = "The supplier is free to operate without cover."
    vector = encoders.embed([recognition_text(claim)])[0]
    assert reader.kind_of(claim, vector) is None and denies(claim)
    point = _check(engine, claim)
    assert point.verdict == INCORRECT and point.reasons[0]["check"] == "contradicted"
    assert point.reasons[0]["passage"] == "§10.1"


def test_a_denial_in_words_no_rule_knows_is_read_by_the_denial_model(engine: ClaimEngine) -> None:
    """A claim that begins "Nothing requires" is in no rule's list of words that deny; the denial model reads it from
    its words and other hands' denials, and the contract's insurance clause contradicts it."""
    claim = "Nothing requires the supplier to be covered."
    assert not denies(claim)
    point = _check(engine, claim)
    assert point.verdict == INCORRECT and point.reasons[0]["check"] == "contradicted"
    assert point.reasons[0]["passage"] == "§10.1"


def test_a_denial_the_recogniser_reads_as_another_kind_is_read_against_the_kind_its_question_asks_about(
    engine: ClaimEngine,
) -> None:
    """Alone, "nothing in here limits it" is nearest insurance, and the claim is left unread; asked whether the
    agreement limits liability, it denies a cap, and §12.2 is one: contradicted, citing it."""
    claim = "They could be on the hook for every bit of the damage, since nothing in here limits it."
    alone = _check(engine, claim)
    assert alone.verdict != INCORRECT
    asked = _check(engine, claim, "Does the agreement limit liability?")
    assert asked.verdict == INCORRECT and asked.reasons[0]["check"] == "contradicted"
    assert asked.reasons[0]["passage"] == "§12.2"
    assert "limitation of liability (the kind the question asks about)" in asked.reading


@pytest.mark.parametrize(
    ("claim", "question"),
    [
        ("Neither party is liable for delays caused by events beyond its control.", "Does it limit liability?"),
        ("Neither party is required to indemnify the other.", "Does the agreement require a party to be insured?"),
    ],
)
def test_a_denial_of_another_kind_than_the_question_asks_about_is_not_read_against_it(
    engine: ClaimEngine, claim: str, question: str
) -> None:
    """Force majeure is no cap on liability, nor is an indemnity insurance: a claim about a kind the question does not
    ask about is not contradicted by the clause the question names."""
    reader, encoders = engine.kinds, engine.encoders
    assert reader is not None and encoders is not None
    assert reader.asked(question, encoders.embed([recognition_text(question)])[0]) is not None
    point = _check(engine, claim, question)
    assert point.verdict != INCORRECT, point.reading


def test_a_claim_of_no_sure_kind_is_shown_the_clause_of_the_kind_its_question_asks_about(engine: ClaimEngine) -> None:
    """Asked whether the supplier must be insured, "they have to prove they're covered" is shown §10.1 first, the
    insurance clause, however unsure the recogniser is of the claim alone; and it is not confirmed on it."""
    claim = "They have to show the customer they are covered."
    question = "Does the agreement require a party to maintain insurance?"
    reader, encoders = engine.kinds, engine.encoders
    assert reader is not None and encoders is not None
    assert reader.kind_of(claim, encoders.embed([recognition_text(claim)])[0], SHOWN_AT) is None
    assert _check(engine, claim).passage != "§10.1"
    point = _check(engine, claim, question)
    assert point.passage == "§10.1" and point.verdict != SUPPORTED, point.reading


def test_a_hedged_denial_of_a_clause_the_contract_lacks_is_not_flagged(engine: ClaimEngine) -> None:
    """How a model says a clause is not there: read against other contracts as a claim that one is, it was flagged
    as never made (107 false alarms among a fifth hand's 518 true denials)."""
    for claim in (
        "I couldn't find a non-compete clause in the agreement.",
        "The agreement does not appear to contain any non-compete covenant.",
    ):
        point = _check(engine, claim)
        assert point.verdict != INCORRECT, (claim, point.reading)


def test_a_denial_of_a_clause_only_likely_there_is_contradicted_and_an_assertion_not_found() -> None:
    """A flag that cites its clause asks less than "found": where the classifier reads the insurance clause as
    likely there but not surely, denying insurance is contradicted, citing it and saying how sure it is; saying
    there is insurance is not confirmed on it."""
    spec = json.loads((RESOURCES / "kinds.json").read_text())
    k = [kind["key"] for kind in spec["kinds"]].index("insurance")
    spec["thresholds"]["present"][k] = 1.01  # never surely there
    spec["thresholds"]["likely"][k] = spec["thresholds"]["absent"][k] + 1e-6
    reader, encoders = KindReader(spec), shipped_encoders()
    assert isinstance(encoders, Encoders)
    ids, texts = [pid for pid, _ in CONTRACT], [text for _, text in CONTRACT]

    def read(claim: str) -> KindReading | None:
        return reader.read(claim, encoders.embed([recognition_text(claim)])[0], ids, texts)

    denied = read("The agreement does not require either party to carry insurance.")
    assert denied is not None and denied.verdict == "contradicted" and denied.passage == "§10.1"
    assert denied.words.endswith("most likely a clause of this kind: §10.1")
    said = read("Supplier must carry insurance.")
    assert said is not None and said.verdict != "supported" and said.passage is None

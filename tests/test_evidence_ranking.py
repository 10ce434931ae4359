"""Evidence by meaning, as a lawyer meets it: the clause that decides a claim is shown first even when
the claim says it in other words; the title and the recitals never outrank the operative clause; and a
missing or altered model file is refused with one sentence naming it, after which the verifier finds
evidence by words only and says so. Real encoder and ranker (int8 ONNX, LightGBM), no doubles."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from app.ingest.datasets import import_dataset
from app.judging.verification import Verifier, verify_project
from app.project import Project
from models.checker import encoder
from models.checker.encoder import Encoders, EncoderUnavailable, shipped_encoders
from models.checker.ranking import PassageIndex, preamble
from storage import documents

NDA = [
    "MUTUAL NON-DISCLOSURE AGREEMENT",
    "WHEREAS, the parties wish to exchange Confidential Information and wish the Receiving Party not to "
    "disclose Confidential Information to any third party;",
    "NOW, THEREFORE, the parties agree as follows:",
    '1. Definitions. "Confidential Information" means all technical and business information disclosed '
    "by the Disclosing Party, whether in writing or orally.",
    "2. Obligations. The Receiving Party shall not disclose Confidential Information to any third party "
    "without the prior written consent of the Disclosing Party.",
    "3. Return of Materials. Upon termination, the Receiving Party shall promptly give back or destroy all "
    "documents, notes and copies that embody the other party's proprietary data.",
    "4. Governing Law. This Agreement shall be governed by the laws of the State of New York.",
]
IDS = [f"par_{i}" for i in range(1, len(NDA) + 1)]

# An NDA of ContractNLI's (contractnli-dev-0015, CC BY 4.0): its first sixteen passages as Assay cuts them
BRISTOL_NDA = (Path(__file__).parent / "fixtures" / "bristol_nda.txt").read_text().strip().split("\n\n")


@pytest.fixture(scope="module")
def encoders() -> Encoders:
    loaded = shipped_encoders()
    assert isinstance(loaded, Encoders), loaded
    return loaded


def test_the_clause_that_says_it_in_other_words_is_shown_first(encoders: Encoders) -> None:
    index = PassageIndex(IDS, NDA, encoders)
    claim = "When the deal ends the recipient has to hand back or shred the papers it was given."
    ranked = index.rank([claim], encoders.ranker, encoders.memory)[0]
    # "Return of Materials": few words in common, the same meaning. The ranker puts it first; the cross-encoder,
    # surer by far that the definition of Confidential Information decides it, shows that first: a miss of its,
    # which held out is outweighed (UNKNOWN_CLAIM_MARGIN)
    assert ranked.ids[:2] == ["par_4", "par_6"]
    assert sorted(ranked.ids) == sorted(IDS)


def test_a_claim_in_a_lawyers_words_is_shown_the_clause_the_cross_encoder_reads_as_deciding(encoders: Encoders) -> None:
    """No exemplar claim says what this one says, so the contract checker does not decide it; the
    cross-encoder still re-reads the ranker's first four passages and shows the clause that decides it
    first (wordings held out of every training set: the deciding clause first 0.56 -> 0.69, bench/wordings.py)."""
    ids = [f"par_{i}" for i in range(1, len(BRISTOL_NDA) + 1)]
    claim = "We may share the information with our staff who need to know it."
    ranked = PassageIndex(ids, BRISTOL_NDA, encoders).rank([claim], encoders.ranker, encoders.memory)[0]
    assert not ranked.meaning  # the exemplars do not know it: no verdict by meaning
    assert ranked.ids[0] == "par_9"  # "d) it will not disclose the information to employees other than ..."
    assert "employees" in BRISTOL_NDA[8]


def test_for_a_claim_no_exemplar_knows_the_rankers_order_stands_unless_the_cross_encoder_is_much_surer() -> None:
    index = PassageIndex(IDS, NDA)
    ranked = ["par_5", "par_6", "par_7", "par_4"]
    #                 supported, contradicted, not stated: par_6 decides it a little more likely than par_5
    slightly = np.array([[0.30, 0.0, 0.70], [0.45, 0.0, 0.55], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    assert index.reread("a claim", ranked, slightly, known=False)[0] == ranked
    assert index.reread("a claim", ranked, slightly, known=True)[0][:2] == ["par_6", "par_5"]
    surer = slightly.copy()
    surer[1] = [0.9, 0.0, 0.1]
    assert index.reread("a claim", ranked, surer, known=False)[0][:2] == ["par_6", "par_5"]


def test_the_recitals_never_outrank_the_operative_clause(encoders: Encoders) -> None:
    assert {0, 1, 2} <= preamble(NDA) and 4 not in preamble(NDA)
    claim = "The Receiving Party shall not disclose Confidential Information to any third party."
    assert PassageIndex(IDS, NDA, encoders).rank([claim], encoders.ranker, encoders.memory)[0].ids[0] == "par_5"
    assert PassageIndex(IDS, NDA).rank_by_words(claim).ids[0] == "par_5"


@pytest.fixture
def broken_encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of resources/claim_checker to damage, in place of the shipped one: its encoder folder."""
    from models.checker import manifest

    shutil.copytree(manifest.RESOURCES, tmp_path / "claim_checker")
    folder = tmp_path / "claim_checker" / "encoder"
    monkeypatch.setattr(manifest, "RESOURCES", folder.parent)
    monkeypatch.setattr(manifest, "MANIFEST", folder.parent / "manifest.json")
    monkeypatch.setattr(encoder, "FOLDER", folder)
    shipped_encoders.cache_clear()
    yield folder
    shipped_encoders.cache_clear()


def test_a_missing_model_file_is_refused_with_one_sentence_naming_it(broken_encoder: Path) -> None:
    (broken_encoder / "memory.npz").unlink()
    with pytest.raises(EncoderUnavailable) as refused:
        Encoders.load()
    sentence = str(refused.value)
    assert "memory.npz is missing" in sentence and "make install" in sentence and "\n" not in sentence


@pytest.mark.parametrize("model", ["dense", "cross"])
def test_an_altered_model_file_is_refused_by_its_hash(broken_encoder: Path, model: str) -> None:
    name = encoder.weights_file(model)  # the file this processor runs: unsigned, or its signed twin with VNNI
    path = broken_encoder / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: onnxruntime might still load it, the hash does not
    path.write_bytes(bytes(data))
    with pytest.raises(EncoderUnavailable, match=rf"{name.replace('.', '[.]')} is altered .*make install"):
        Encoders.load()


def test_the_tokenizer_comes_from_the_base_package_checked_by_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No copy of the tokenizer ships: it is read from the installed base package's zip, and a zip whose
    tokenizer.json was changed is refused, as a changed model file is."""
    import zipfile

    assert not (encoder.FOLDER / "tokenizer.json").exists()
    with zipfile.ZipFile(encoder.base_zip()) as shipped, zipfile.ZipFile(tmp_path / "model.zip", "w") as altered:
        for item in shipped.infolist():
            data = shipped.read(item)
            altered.writestr(item, data.replace(b"[UNK]", b"[UNKNOWN]") if item.filename == "tokenizer.json" else data)
    monkeypatch.setattr(encoder, "base_zip", lambda: tmp_path / "model.zip")
    with pytest.raises(EncoderUnavailable, match=r"tokenizer[.]json in .* is altered .*make install"):
        Encoders.reading()


CONTRACT = "\n\n".join(NDA) + "\n"


@pytest.fixture
def nda_project(project: Project, tmp_path: Path) -> Project:
    folder = tmp_path / "nda"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "nda.txt").write_text(CONTRACT)
    answer = "The recipient has to hand back or shred the papers when the deal ends. New York law governs."
    row = {"id": "nda-1", "document": "nda.txt", "question": "What does the NDA say?", "answer": answer}
    (folder / "qa.jsonl").write_text(json.dumps(row) + "\n")
    import_dataset(project.sessions, folder)
    return project


def test_verify_shows_the_passage_found_by_meaning(nda_project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", nda_project.url, "verify", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["answers"][0]["points"]
    with nda_project.sessions() as session:
        ids = {p.text[:9]: p.citation_id for p in documents.passages_of(session, 1)}
    assert points[0]["passage"] == ids["3. Return"]
    assert Verifier(nda_project.sessions).engine.note is None


def test_without_its_model_file_the_verifier_reads_words_only_and_says_so(
    nda_project: Project, broken_encoder: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    dense = encoder.weights_file("dense")
    (broken_encoder / dense).unlink()
    verifier = Verifier(nda_project.sessions)
    assert verifier.engine.encoders is None and verifier.engine.note is not None
    assert f"{dense} is missing" in verifier.engine.note and "by words only" in verifier.engine.note
    fallen = verify_project(nda_project.sessions, ["nda-1"], save=False, verifier=verifier)[0].points
    words_only = Verifier(nda_project.sessions, neural=False)
    expected = verify_project(nda_project.sessions, ["nda-1"], save=False, verifier=words_only)[0].points
    assert [(p.verdict, p.probability, p.passage) for p in fallen] == [
        (p.verdict, p.probability, p.passage) for p in expected
    ]
    with caplog.at_level(logging.WARNING):
        assert main(["--db", nda_project.url, "verify", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answers"]  # no traceback: the verdicts, evidence found by words
    assert any(f"{dense} is missing" in r.getMessage() for r in caplog.records)

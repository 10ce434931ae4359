"""The human-labelled real errors of ../shared/datasets/real_errors as the claim checker sees them:
every data point of every answer (segmented as Assay segments it), its document read as Assay reads
it, its features, and the label of the human spans it overlaps.

A point overlapping a `contradicted` span is contradicted, else one overlapping an `unsupported` span
is unsupported, else supported; where a folder labels supported spans (ContractNLI), a point outside
every span ("Yes.") has no label and is left out, as the scoring of ../shared/checks does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.ingest.contract_terms import as_passages, defined_terms
from app.ingest.documents import parse_document
from models.checker.features import FEATURES, Evidence, measure
from models.evidence import is_evidence
from models.segmentation import segment_answer
from models.verifier import Document, Source, verify_claim
from models.vocabulary import PassageKind

LABELS = ("supported", "unsupported", "contradicted")


@dataclass
class Points:
    """One row per labelled point of a folder."""

    folder: str
    answer_ids: list[str]
    groups: list[str]  # the source document: what must not be split between training and test
    X: np.ndarray
    y: np.ndarray  # index into LABELS
    kinds: np.ndarray  # the checker's kind of answer (models/checker/features.py KINDS)
    # the contract checker's points: X is what the encoders say (models/checker/ranking.py MEANING), every
    # point is about a contract, and the rules' flags do not stand (app/judging/verification.py)
    by_meaning: bool = False

    def subset(self, mask: np.ndarray) -> Points:
        idx = np.flatnonzero(mask)
        return Points(
            self.folder,
            [self.answer_ids[i] for i in idx],
            [self.groups[i] for i in idx],
            self.X[idx],
            self.y[idx],
            self.kinds[idx],
            self.by_meaning,
        )


def _label(start: int, end: int, spans: list[dict], labelled_support: bool) -> int | None:
    hit = {s["label"] for s in spans if s["start"] < end and start < s["end"]}
    if "contradicted" in hit:
        return 2
    if "unsupported" in hit:
        return 1
    if hit or not labelled_support:
        return 0
    return None


def load_folder(folder: Path, definitions: bool = True) -> Points:
    """Every labelled point of a folder; `definitions`: read claims with the contract's defined terms
    (False: to measure without them)."""
    rows = [json.loads(line) for line in (folder / "qa.jsonl").read_text().splitlines() if line.strip()]
    truth = {t["id"]: t["labels"] for t in map(json.loads, (folder / "truth.jsonl").read_text().splitlines())}
    labelled_support = any(s["label"] == "supported" for spans in truth.values() for s in spans)
    prepared: dict[str, tuple[Document, Evidence]] = {}
    answer_ids, groups, features, labels, kinds = [], [], [], [], []
    for row in rows:
        name = row["document"]
        if name not in prepared:
            parsed = parse_document(folder / "documents" / name)
            passages = [(p.citation_id, p.text) for p in parsed.passages]
            terms = {d.term: d.definition for d in defined_terms(as_passages(parsed))} if definitions else {}
            prepared[name] = (Document([Source(i, t) for i, t in passages]), Evidence.of(passages, terms))
        document, evidence = prepared[name]
        segments = segment_answer(row["answer"])
        for seg in segments:
            label = _label(seg.start, seg.end, truth[row["id"]], labelled_support)
            if label is None:
                continue
            rule = verify_claim(seg.text, document, document.search(seg.text, 5), []).verdict
            measured = measure(seg.text, evidence, rule)
            if measured is None:
                continue
            answer_ids.append(row["id"])
            groups.append(name)
            features.append(measured.values)
            labels.append(label)
            kinds.append(evidence.kind_of_answer(row["question"]))
    matrix = np.asarray(features, dtype=float).reshape(-1, len(FEATURES))
    return Points(folder.name, answer_ids, groups, matrix, np.asarray(labels, dtype=int), np.asarray(kinds))


@dataclass
class Claim:
    """One labelled point as the encoders see it: its text, its document and, for ContractNLI, the
    passages that hold the annotators' evidence."""

    folder: str
    answer_id: str
    document: str
    text: str
    label: int  # index into LABELS
    evidence: frozenset[str]  # citation ids of the passages overlapping an evidence span (ContractNLI)
    nli: str  # ContractNLI's label (Entailment, Contradiction, NotMentioned); "" elsewhere


@dataclass
class DocumentPassages:
    ids: list[str]
    texts: list[str]
    spans: list[tuple[int, int]]


def cross_held_out(path: Path) -> dict[tuple[str, str, str], dict[str, np.ndarray]]:
    """The cross-encoder's held-out probabilities (supported, contradicted, not stated) of every ContractNLI
    (claim, passage) pair, by (folder, answer id, claim) and passage id (packaging/training/train_cross_encoder.py)."""
    out: dict[tuple[str, str, str], dict[str, np.ndarray]] = {}
    with np.load(path) as held:
        scores = held["scores"].astype(np.float32)
        keys = zip(held["folder"], held["answer_id"], held["claim"], held["passage_id"], strict=True)
        for (folder, answer, claim, pid), row in zip(keys, scores, strict=True):
            out.setdefault((str(folder), str(answer), str(claim)), {})[str(pid)] = row
    return out


def evidence_passages(folder: Path) -> dict[str, DocumentPassages]:
    """Each document's evidence passages as Assay imports them (table-of-contents lines and page
    furniture left out), with their character offsets."""
    out = {}
    for path in sorted((folder / "documents").iterdir()):
        parsed = parse_document(path)
        kept = [p for p in parsed.passages if p.kind is not PassageKind.TOC and is_evidence(p.text)]
        out[path.name] = DocumentPassages(
            [p.citation_id for p in kept], [p.text for p in kept], [(p.char_start, p.char_end) for p in kept]
        )
    return out


def load_claims(folder: Path, documents: dict[str, DocumentPassages]) -> list[Claim]:
    """Every labelled point of a folder (points with too few words to check left out, as the checker does)."""
    from models.checker.features import enough_to_check

    rows = [json.loads(line) for line in (folder / "qa.jsonl").read_text().splitlines() if line.strip()]
    truth = {t["id"]: t["labels"] for t in map(json.loads, (folder / "truth.jsonl").read_text().splitlines())}
    meta = {m["id"]: m for m in map(json.loads, (folder / "meta.jsonl").read_text().splitlines())}
    labelled_support = any(s["label"] == "supported" for spans in truth.values() for s in spans)
    out = []
    for row in rows:
        doc = documents[row["document"]]
        m = meta.get(row["id"], {})
        marked = m.get("evidence") or []
        evidence = frozenset(
            pid
            for pid, (a, b) in zip(doc.ids, doc.spans, strict=True)
            if any(a < ev["end"] and ev["start"] < b for ev in marked)
        )
        for seg in segment_answer(row["answer"]):
            label = _label(seg.start, seg.end, truth[row["id"]], labelled_support)
            if label is None or not enough_to_check(seg.text):
                continue
            out.append(
                Claim(folder.name, row["id"], row["document"], seg.text, label, evidence, m.get("nli_label", ""))
            )
    return out

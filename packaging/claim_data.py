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
from models.segmentation import segment_answer
from models.verifier import Document, Source, verify_claim

LABELS = ("supported", "unsupported", "contradicted")
DEFINITIONS = True  # read claims with the contract's defined terms (False: to measure without)


@dataclass
class Points:
    """One row per labelled point of a folder."""

    folder: str
    answer_ids: list[str]
    groups: list[str]  # the source document: what must not be split between training and test
    X: np.ndarray
    y: np.ndarray  # index into LABELS

    def subset(self, mask: np.ndarray) -> Points:
        idx = np.flatnonzero(mask)
        return Points(
            self.folder, [self.answer_ids[i] for i in idx], [self.groups[i] for i in idx], self.X[idx], self.y[idx]
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


def load_folder(folder: Path) -> Points:
    rows = [json.loads(line) for line in (folder / "qa.jsonl").read_text().splitlines() if line.strip()]
    truth = {t["id"]: t["labels"] for t in map(json.loads, (folder / "truth.jsonl").read_text().splitlines())}
    labelled_support = any(s["label"] == "supported" for spans in truth.values() for s in spans)
    prepared: dict[str, tuple[Document, Evidence]] = {}
    answer_ids, groups, features, labels = [], [], [], []
    for row in rows:
        name = row["document"]
        if name not in prepared:
            parsed = parse_document(folder / "documents" / name)
            passages = [(p.citation_id, p.text) for p in parsed.passages]
            definitions = {d.term: d.definition for d in defined_terms(as_passages(parsed))} if DEFINITIONS else {}
            prepared[name] = (Document([Source(i, t) for i, t in passages]), Evidence.of(passages, definitions))
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
    matrix = np.asarray(features, dtype=float).reshape(-1, len(FEATURES))
    return Points(folder.name, answer_ids, groups, matrix, np.asarray(labels, dtype=int))

"""CUAD v1's expert clause labels as claims a lawyer or an LLM answer would make about commercial contracts,
in the layout of ../shared/datasets/real_errors, so that the claim checker can be measured (and later
trained) beyond NDAs, by contract and by kind of clause (issue 55):

    PYTHONPATH=packaging .venv/bin/python -m training.cuad_claims --git-dir DIR --out build/cuad-claims
        [--contracts N]

DIR is the bare git directory of github:maastrichtlawtech/law3027-advanced-legal-analytics (its commit
77c8f5a holds CUAD v1: data/CUAD_v1/master_clauses.csv and the 510 contracts' full_contract_txt/; CC BY 4.0,
The Atticus Project). For each contract and each of 15 kinds of clause (KINDS) one claim, in one of six
wordings written here (dealt out in turn; 0-2 may be learnt, 3-5 only measured):
- `supported` where the experts marked that kind of clause; its evidence is their clause text found in the
  contract (whitespace aside; a claim whose clause cannot be found is dropped);
- `unsupported` (never made) where they marked the kind absent;
- for governing law, where the experts name one jurisdiction: the supported claim naming it, and a
  `contradicted` claim naming another that the contract never mentions, marked `"synthetic": true` in
  meta.jsonl (the contradiction is ours, not the experts').
Every answer is "Yes. <claim>", the claim labelled as one span. meta.jsonl carries the kind, the wording,
the expert's answer and the evidence spans with an `nli_label` (Entailment, Contradiction, NotMentioned),
as ContractNLI's does; kinds.json the kinds, their wordings and which may be learnt; documents.jsonl
which CUAD file each document is.

Contracts that overlap the documents Assay is measured on (../shared/checks/held_out_overlap.py) are
dropped with everything built on them, and so is the second copy of a contract CUAD holds twice; the
script checks the documents it wrote once more and writes no claims while one overlapping remains.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import io
import json
import re
import shutil
import subprocess
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .cuad_kinds import GOVERNING_LAW, JURISDICTIONS, KINDS, Kind
from .paths import overlapping

COMMIT = "77c8f5a3cc2e6e5e3793b43f84a3bc097a414f9e"
CSV_PATH = "data/CUAD_v1/master_clauses.csv"
TXT_DIR = "data/CUAD_v1/full_contract_txt"
TRAIN_WORDINGS = (0, 1, 2)
TEST_WORDINGS = (3, 4, 5)
NLI = {"supported": "Entailment", "contradicted": "Contradiction", "unsupported": "NotMentioned"}
OMITTED = "<omitted>"  # CUAD's mark between the pieces of one clause


@dataclass
class Contract:
    """One row of master_clauses.csv with its contract's text."""

    row: int  # 0-based, in the file's order
    file: str  # CUAD's name of the contract (its .pdf)
    text: str
    answers: dict[str, str]  # category -> the experts' answer ("Yes", "No", a jurisdiction, ...)
    clauses: dict[str, list[str]]  # category -> the experts' clause texts

    @property
    def name(self) -> str:
        return f"cuad-{self.row:03d}.txt"


@dataclass
class Claim:
    kind: Kind
    wording: int
    sentence: str
    label: str  # supported, contradicted or unsupported
    evidence: list[tuple[int, int]]
    answer: str  # the experts' answer for the kind
    synthetic: bool = False
    extra: dict[str, str] = field(default_factory=dict)


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True).stdout


def _file_key(name: str) -> str:
    """CUAD's .pdf and .txt names differ in case and in punctuation (& and ' became _)."""
    stem = re.sub(r"\.(pdf|txt)\W*$", "", name.strip(), flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", stem).lower())


def read_cuad(git_dir: Path, commit: str = COMMIT) -> list[Contract]:
    """Every contract of master_clauses.csv with its text, in the file's order."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", "-l", commit, TXT_DIR).decode("utf-8")
    blobs: dict[str, str] = {}
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        _mode, _type, blob, size = meta.split()
        if size == "-":
            raise SystemExit(f"{path} is missing from the snapshot: fetch an older commit that holds it")
        blobs[_file_key(path.rsplit("/", 1)[1])] = blob
    table = csv.DictReader(io.StringIO(_git(git_dir, "show", f"{commit}:{CSV_PATH}").decode("utf-8")))
    contracts = []
    for row, record in enumerate(table):
        blob = blobs[_file_key(record["Filename"])]
        answers = {kind.category: record[f"{kind.category}-Answer"].strip() for kind in KINDS}
        clauses = {kind.category: list(ast.literal_eval(record[kind.category])) for kind in KINDS}
        text = _git(git_dir, "cat-file", "blob", blob).decode("utf-8")
        contracts.append(Contract(row, record["Filename"], text, answers, clauses))
    return contracts


class Finder:
    """Finds a clause in a contract whatever the whitespace: both are searched with every run of it as one space."""

    def __init__(self, text: str) -> None:
        chars: list[str] = []
        self.offsets: list[int] = []  # offset in the text of each character of the normalised text
        for word in re.finditer(r"\S+", text):
            if chars:
                chars.append(" ")
                self.offsets.append(word.start())
            chars.extend(word.group())
            self.offsets.extend(range(word.start(), word.end()))
        self.normalised = "".join(chars)

    def locate(self, clause: str) -> list[tuple[int, int]] | None:
        """The spans of the clause's pieces (CUAD joins the pieces of one clause with <omitted>), each
        found after the one before; None when one is not found."""
        spans, after = [], 0
        for piece in clause.split(OMITTED):
            words = " ".join(piece.split())
            if not words:
                continue
            at = self.normalised.find(words, after)
            if at < 0:
                at = self.normalised.find(words)  # pieces are not always in the contract's order
            if at < 0:
                return None
            end = at + len(words)
            spans.append((self.offsets[at], self.offsets[end - 1] + 1))
            after = end
        return spans or None


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _laws(place: str) -> str:
    article = "the " if re.match(r"(People's Republic|United|Netherlands|Republic)", place) else ""
    return f"the laws of {article}{place}"


def _jurisdiction(answer: str) -> str | None:
    """The one jurisdiction the experts name, as a claim names it; None for none or several."""
    parts = {re.sub(r",\s*United Kingdom$", "", p.strip()) for p in answer.split(";") if p.strip()}
    if parts == {"England", "Wales"}:
        return "England and Wales"
    return parts.pop() if len(parts) == 1 else None


def _stable(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:4], "big")


def _other_jurisdiction(contract: Contract, true: str | None) -> str | None:
    """A jurisdiction the contract never mentions (so no clause of it can be read as choosing it)."""
    lowered = contract.text.lower()
    true_words = set(re.findall(r"\w+", (true or "").lower()))
    choices = [
        place
        for place, word in JURISDICTIONS
        if word.lower() not in lowered and not true_words & set(re.findall(r"\w+", place.lower()))
    ]
    return choices[_stable(contract.name, "governing-law") % len(choices)] if choices else None


def claims_of(contract: Contract, dropped: Counter[str]) -> list[Claim]:
    """The contract's claims, one a kind (two for governing law: the true one and a synthetic wrong one);
    why any other was left out is counted in `dropped`."""
    finder = Finder(contract.text)
    out = []
    for number, kind in enumerate(KINDS):
        wording = (contract.row + number) % len(kind.wordings)
        answer, clauses = contract.answers[kind.category], contract.clauses[kind.category]
        spans: list[tuple[int, int]] = []
        for clause in clauses:
            spans.extend(finder.locate(clause) or [])
        if clauses and not spans:
            dropped[f"{kind.key}: clause not found in the text"] += 1
            continue
        evidence = _merged(spans)
        if kind is GOVERNING_LAW:
            true = _jurisdiction(answer)
            if bool(clauses) != bool(answer) or (clauses and true is None):
                dropped[f"{kind.key}: not one jurisdiction with its clause ({answer or 'blank'})"] += 1
                continue
            wrong = _other_jurisdiction(contract, true)
            if wrong is None:
                dropped[f"{kind.key}: every other jurisdiction is named in the contract"] += 1
                continue
            if true is None:
                sentence = kind.wordings[wording].format(laws=_laws(wrong))
                out.append(Claim(kind, wording, sentence, "unsupported", [], answer, extra={"claimed": wrong}))
                continue
            out.append(
                Claim(kind, wording, kind.wordings[wording].format(laws=_laws(true)), "supported", evidence, answer)
            )
            other = (wording + 3) % len(kind.wordings)  # the other half: a wrong claim is not worded as the true
            out.append(
                Claim(
                    kind,
                    other,
                    kind.wordings[other].format(laws=_laws(wrong)),
                    "contradicted",
                    evidence,
                    answer,
                    synthetic=True,
                    extra={"claimed": wrong},
                )
            )
            continue
        if (answer == "Yes") != bool(clauses):
            dropped[f"{kind.key}: answer {answer!r} disagrees with the clauses marked"] += 1
            continue
        label = "supported" if clauses else "unsupported"
        out.append(Claim(kind, wording, kind.wordings[wording], label, evidence, answer))
    return out


def _duplicates(contracts: list[Contract]) -> set[str]:
    """Later copies of a contract CUAD holds twice (the same words)."""
    seen: set[str] = set()
    out = set()
    for contract in contracts:
        digest = hashlib.sha256(" ".join(contract.text.split()).encode()).hexdigest()
        if digest in seen:
            out.add(contract.name)
        seen.add(digest)
    return out


def _write_jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@dataclass
class Counts:
    """What a build kept and left out."""

    contracts: int
    overlapping: list[str]  # CUAD files dropped as overlapping the measured documents
    duplicates: list[str]  # CUAD files dropped as a second copy
    by_kind: dict[str, Counter[str]]  # kind -> label -> claims
    dropped: Counter[str]  # why -> claims left out

    def __str__(self) -> str:
        labels: Counter[str] = sum(self.by_kind.values(), Counter())
        lines = [
            f"contracts {self.contracts} (dropped: {len(self.overlapping)} overlapping the measured documents,"
            f" {len(self.duplicates)} a second copy); claims {labels.total()}: "
            + ", ".join(f"{label} {labels[label]}" for label in NLI),
        ]
        for kind in KINDS:
            got = self.by_kind.get(kind.key, Counter())
            lines.append(f"  {kind.key}: " + ", ".join(f"{label} {got[label]}" for label in NLI if got[label]))
        lines.append(f"claims dropped: {self.dropped.total()}")
        lines.extend(f"  {why}: {n}" for why, n in sorted(self.dropped.items()))
        return "\n".join(lines)


README = """# CUAD v1 clause claims (built by packaging/training/cuad_claims.py)

Claims about commercial contracts in the layout of ../shared/datasets/real_errors: documents/, qa.jsonl,
truth.jsonl (supported / contradicted / unsupported), meta.jsonl (kind, wording, the experts' answer,
evidence spans with nli_label), kinds.json (the kinds and their wordings: 0-2 may be learnt, 3-5 only
measured), documents.jsonl (which CUAD contract each document is). Contradicted claims are synthetic
(a wrong governing law) and marked so in meta.jsonl. Do not add this folder to git.

Source: CUAD v1, The Atticus Project (Hendrycks et al., "CUAD: An Expert-Annotated NLP Dataset for Legal
Contract Review", 2021), CC BY 4.0, read from github.com/maastrichtlawtech/law3027-advanced-legal-analytics
at commit {commit}. The contracts are SEC EDGAR filings; the claims' wordings were written for Assay.
"""


def write_folder(contracts: list[Contract], out: Path, limit: int | None = None) -> Counts:
    """Write the folder from the first `limit` contracts kept (all by default): the documents first, checked
    once more against the measured ones, then the claims."""
    with tempfile.TemporaryDirectory(prefix="cuad-check-") as scratch:
        for contract in contracts:
            (Path(scratch) / contract.name).write_bytes(contract.text.encode("utf-8"))
        overlaps = overlapping(Path(scratch))
    duplicates = _duplicates(contracts)
    kept = [c for c in contracts if c.name not in overlaps | duplicates][:limit]
    documents = out / "documents"
    if documents.exists():
        shutil.rmtree(documents)
    for stale in ("qa.jsonl", "truth.jsonl", "meta.jsonl"):
        (out / stale).unlink(missing_ok=True)
    documents.mkdir(parents=True)
    for contract in kept:
        (documents / contract.name).write_bytes(contract.text.encode("utf-8"))
    remaining = overlapping(documents)
    if remaining:
        shutil.rmtree(documents)
        raise SystemExit(f"refusing to write claims: {len(remaining)} documents overlap the measured ones")

    dropped: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    qa, truth, meta = [], [], []
    for contract in kept:
        for claim in claims_of(contract, dropped):
            by_kind.setdefault(claim.kind.key, Counter())[claim.label] += 1
            answer_id = f"cuad-{contract.row:03d}-{claim.kind.key}" + ("-wrong" if claim.synthetic else "")
            answer = f"Yes. {claim.sentence}"
            qa.append(
                {
                    "id": answer_id,
                    "document": contract.name,
                    "question": claim.kind.question,
                    "answer": answer,
                    "source": "cuad",
                }
            )
            span = {"start": 5, "end": len(answer), "text": claim.sentence, "label": claim.label}
            truth.append({"id": answer_id, "labels": [span]})
            meta.append(
                {
                    "id": answer_id,
                    "document": contract.name,
                    "kind": claim.kind.key,
                    "cuad_category": claim.kind.category,
                    "wording": claim.wording,
                    "label": claim.label,
                    "nli_label": NLI[claim.label],
                    "synthetic": claim.synthetic,
                    "cuad_answer": claim.answer,
                    **claim.extra,
                    "evidence": [{"start": a, "end": b, "text": contract.text[a:b]} for a, b in claim.evidence],
                }
            )
    _write_jsonl(out / "qa.jsonl", qa)
    _write_jsonl(out / "truth.jsonl", truth)
    _write_jsonl(out / "meta.jsonl", meta)
    _write_jsonl(out / "documents.jsonl", [{"document": c.name, "cuad_file": c.file, "cuad_row": c.row} for c in kept])
    kinds = {k.key: {"cuad_category": k.category, "question": k.question, "wordings": list(k.wordings)} for k in KINDS}
    spec = {
        "about": "CUAD v1 kinds of clause as claims, each in six wordings written for Assay (not from CUAD)."
        " Wordings 0-2 may be trained or tuned on; 3-5 are kept for measuring only. Governing law's wordings"
        " take the jurisdiction as {laws}; its contradicted claims are synthetic.",
        "train_wordings": list(TRAIN_WORDINGS),
        "test_wordings": list(TEST_WORDINGS),
        "kinds": kinds,
    }
    (out / "kinds.json").write_text(json.dumps(spec, indent=1) + "\n")
    (out / "README.md").write_text(README.replace("{commit}", COMMIT))
    by_name = {c.name: c.file for c in contracts}
    return Counts(
        len(kept), sorted(by_name[n] for n in overlaps), sorted(by_name[n] for n in duplicates), by_kind, dropped
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="the bare git dir holding CUAD v1")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--contracts", type=int, help="the first N contracts kept (CUAD's file order)")
    parser.add_argument("--commit", default=COMMIT)
    args = parser.parse_args()
    print(write_folder(read_cuad(args.git_dir, args.commit), args.out, args.contracts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

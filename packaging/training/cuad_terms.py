"""CUAD v1's dates and terms as claims an LLM answer would make about a commercial contract, in the layout of
../shared/datasets/real_errors, to measure how the claim checker reads values (issue 65: "dates, renewal terms"):

    PYTHONPATH=packaging .venv/bin/python -m training.cuad_terms --git-dir DIR --out build/cuad-terms
        [--contracts N]

DIR is the bare git directory of github:maastrichtlawtech/law3027-advanced-legal-analytics (commit 77c8f5a, as
training/cuad_claims.py reads it). For each contract and each of five terms (TERMS) whose value the experts
wrote down (the agreement's date, its effective date, its expiry, the renewal term, the notice that stops a
renewal), two claims in different wordings: `supported` with the experts' value, and `contradicted` with
another value of the same kind (synthetic, marked so in meta.jsonl). A contract the experts found without a
renewal term gets one `unsupported` claim that it renews. Values are written in the styles a lawyer or a model
writes them ("June 1, 2020", "1 June 2020", "the 1st day of June, 2020"; "thirty (30) days", "30 days").
Wordings 0-2 may be tuned on, 3-5 only measured. Contracts that overlap the measured documents are dropped.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .cuad_claims import COMMIT, CSV_PATH, TXT_DIR, Finder, _file_key, _git, _merged, _stable
from .paths import overlapping


@dataclass(frozen=True)
class Term:
    key: str
    category: str  # the column of master_clauses.csv; its answer is in f"{category}{ANSWER}"
    answer_column: str
    question: str
    kind: str  # date | period
    wordings: tuple[str, str, str, str, str, str]  # each takes {value}


TERMS = (
    Term(
        "agreement-date",
        "Agreement Date",
        "Agreement Date-Answer",
        "When was the agreement made?",
        "date",
        (
            "The agreement is dated {value}.",
            "The parties entered into the agreement on {value}.",
            "The contract was made as of {value}.",
            "The agreement was signed on {value}.",
            "This contract bears the date {value}.",
            "The parties executed the agreement as of {value}.",
        ),
    ),
    Term(
        "effective-date",
        "Effective Date",
        "Effective Date-Answer",
        "When does the agreement take effect?",
        "date",
        (
            "The agreement takes effect on {value}.",
            "The effective date of the agreement is {value}.",
            "The agreement became effective on {value}.",
            "The contract is effective as of {value}.",
            "The agreement's term begins on {value}.",
            "The contract came into force on {value}.",
        ),
    ),
    Term(
        "expiration-date",
        "Expiration Date",
        "Expiration Date-Answer",
        "When does the agreement expire?",
        "date",
        (
            "The agreement expires on {value}.",
            "The initial term of the agreement ends on {value}.",
            "The contract remains in force until {value}.",
            "The agreement's term runs until {value}.",
            "The contract will expire on {value}, unless renewed or terminated earlier.",
            "The initial term ends on {value}.",
        ),
    ),
    Term(
        "renewal-term",
        "Renewal Term",
        "Renewal Term-Answer",
        "Does the agreement renew, and for how long?",
        "period",
        (
            "The agreement renews automatically for successive periods of {value}.",
            "Each renewal term lasts {value}.",
            "After the initial term, the contract is extended for {value} at a time.",
            "The agreement automatically renews for additional terms of {value}.",
            "Unless terminated, the contract renews for renewal periods of {value} each.",
            "The term is automatically extended by {value} at the end of each term.",
        ),
    ),
    Term(
        "notice-to-terminate-renewal",
        "Notice Period To Terminate Renewal",
        "Notice Period To Terminate Renewal- Answer",
        "How much notice stops the agreement renewing?",
        "period",
        (
            "A party can prevent renewal by giving {value} notice before the term ends.",
            "Notice of non-renewal must be given at least {value} before the end of the term.",
            "To stop the automatic renewal, a party must notify the other {value} before expiry.",
            "Either party may elect not to renew by written notice given {value} in advance.",
            "The renewal can be avoided with {value} prior written notice.",
            "Non-renewal requires notice at least {value} before the current term expires.",
        ),
    ),
)
TRAIN_WORDINGS = (0, 1, 2)
TEST_WORDINGS = (3, 4, 5)
NLI = {"supported": "Entailment", "contradicted": "Contradiction", "unsupported": "NotMentioned"}
_MONTH_NAMES = "January February March April May June July August September October November December"
_MONTHS = _MONTH_NAMES.split()
_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 5: "five", 6: "six", 10: "ten", 12: "twelve", 15: "fifteen"}
_NUMBER_WORDS |= {30: "thirty", 45: "forty-five", 60: "sixty", 90: "ninety", 120: "one hundred twenty"}
_NUMBER_WORDS |= {180: "one hundred eighty", 4: "four", 7: "seven", 9: "nine", 14: "fourteen", 20: "twenty"}


def _date(answer: str) -> date | None:
    """CUAD writes dates as m/d/yy (or m/d/yyyy); "[]" marks a part it could not read."""
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})", answer.strip())
    if not m:
        return None
    year = int(m.group(3))
    year += 0 if year >= 100 else 2000 if year <= 40 else 1900
    try:
        return date(year, int(m.group(1)), int(m.group(2)))
    except ValueError:
        return None


def _period(answer: str) -> tuple[int, str] | None:
    """ "successive 1 year", "90 days", "6 months" -> (1, "year"); None for several or none."""
    m = re.fullmatch(r"(?:succ?essive\s+)?\(?(\d+)\)?\s*(day|month|year|week)s?", answer.strip(), re.I)
    return (int(m.group(1)), m.group(2).lower()) if m else None


def _written_date(d: date, style: int) -> str:
    month = _MONTHS[d.month - 1]
    suffix = "th" if 11 <= d.day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
    return (
        f"{month} {d.day}, {d.year}",
        f"{d.day} {month} {d.year}",
        f"the {d.day}{suffix} day of {month}, {d.year}",
        f"{d.month:02d}/{d.day:02d}/{d.year}",
        f"{month} {d.day}{suffix}, {d.year}",
        f"{d.year}-{d.month:02d}-{d.day:02d}",
    )[style % 6]


def _written_period(n: int, unit: str, style: int) -> str:
    plural = unit + ("s" if n != 1 else "")
    if style % 3 == 1 and n in _NUMBER_WORDS:
        return f"{_NUMBER_WORDS[n]} ({n}) {plural}"
    if style % 3 == 2 and n in _NUMBER_WORDS:
        return f"{_NUMBER_WORDS[n]} {plural}"
    return f"{n} {plural}"


def _other_date(d: date, seed: int) -> date:
    """Another date a model could plausibly write: another year, or another month or day of the same year."""
    change = seed % 4
    if change == 0:
        return d.replace(year=d.year + 1 + seed % 3)
    if change == 1:
        return d.replace(year=d.year - 1 - seed % 2)
    if change == 2:
        return d.replace(month=d.month % 12 + 1, day=min(d.day, 28))
    return d.replace(day=d.day % 28 + 1 if d.day != 28 else 14)


def _other_period(n: int, unit: str, seed: int) -> tuple[int, str]:
    choices = {"day": [15, 30, 45, 60, 90, 120, 180], "month": [1, 3, 6, 12, 18, 24], "year": [1, 2, 3, 5, 10]}
    options = [c for c in choices.get(unit, [n + 1, n + 2]) if c != n]
    return options[seed % len(options)], unit


@dataclass
class Claim:
    term: Term
    wording: int
    sentence: str
    label: str
    evidence: list[tuple[int, int]]
    answer: str
    claimed: str
    synthetic: bool = False


def claims_of(row: int, text: str, record: dict[str, str], dropped: Counter[str]) -> list[Claim]:
    finder = Finder(text)
    out = []
    for number, term in enumerate(TERMS):
        answer = record[term.answer_column].strip()
        clauses = list(ast.literal_eval(record[term.category] or "[]"))
        spans = [s for clause in clauses for s in finder.locate(clause) or []]
        if clauses and not spans:
            dropped[f"{term.key}: clause not found in the text"] += 1
            continue
        seed = _stable(str(row), term.key)
        wording = (row + number) % 6
        other_wording = (wording + 3) % 6  # the wrong claim is worded from the other half
        if term.kind == "date":
            true = _date(answer)
            if true is None or not spans:
                dropped[f"{term.key}: no one date with its clause ({answer or 'blank'})"] += 1
                continue
            wrong = _other_date(true, seed)
            written = _written_date(true, seed), _written_date(wrong, seed + 1)
        else:
            period = _period(answer)
            if term.key == "renewal-term" and not clauses and not answer:
                claimed = _written_period(1, "year", seed)
                sentence = term.wordings[wording].format(value=claimed)
                out.append(Claim(term, wording, sentence, "unsupported", [], "", claimed))
                continue
            if period is None or not spans:
                dropped[f"{term.key}: no one period with its clause ({answer or 'blank'})"] += 1
                continue
            wrong_period = _other_period(*period, seed)
            written = _written_period(*period, seed), _written_period(*wrong_period, seed + 1)
        evidence = _merged(spans)
        out.append(
            Claim(
                term,
                wording,
                term.wordings[wording].format(value=written[0]),
                "supported",
                evidence,
                answer,
                written[0],
            )
        )
        sentence = term.wordings[other_wording].format(value=written[1])
        out.append(Claim(term, other_wording, sentence, "contradicted", evidence, answer, written[1], synthetic=True))
    return out


def read_rows(git_dir: Path) -> list[tuple[int, str, str, dict[str, str]]]:
    """(row, CUAD file, text, record) for every contract of master_clauses.csv."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", "-l", COMMIT, TXT_DIR).decode("utf-8")
    blobs = {}
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        blobs[_file_key(path.rsplit("/", 1)[1])] = meta.split()[2]
    csv.field_size_limit(1 << 30)
    table = csv.DictReader(io.StringIO(_git(git_dir, "show", f"{COMMIT}:{CSV_PATH}").decode("utf-8")))
    rows = []
    for row, record in enumerate(table):
        text = _git(git_dir, "cat-file", "blob", blobs[_file_key(record["Filename"])]).decode("utf-8")
        rows.append((row, record["Filename"], text, record))
    return rows


def _jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_folder(git_dir: Path, out: Path, limit: int | None) -> Counter[str]:
    rows = read_rows(git_dir)
    with tempfile.TemporaryDirectory(prefix="cuad-terms-") as scratch:
        for row, _file, text, _record in rows:
            (Path(scratch) / f"cuad-{row:03d}.txt").write_text(text, encoding="utf-8")
        overlaps = overlapping(Path(scratch))
    kept = [r for r in rows if f"cuad-{r[0]:03d}.txt" not in overlaps][:limit]
    if (out / "documents").exists():
        shutil.rmtree(out / "documents")
    (out / "documents").mkdir(parents=True)
    counts: Counter[str] = Counter()
    qa, truth, meta = [], [], []
    for row, file, text, record in kept:
        claims = claims_of(row, text, record, counts)
        if not claims:
            continue
        name = f"cuad-{row:03d}.txt"
        (out / "documents" / name).write_text(text, encoding="utf-8")
        for claim in claims:
            counts[f"{claim.term.key} {claim.label}"] += 1
            answer_id = f"cuad-{row:03d}-{claim.term.key}-{claim.label}"
            answer = claim.sentence
            qa.append(
                {"id": answer_id, "document": name, "question": claim.term.question, "answer": answer, "source": "cuad"}
            )
            span = {"start": 0, "end": len(answer), "text": answer, "label": claim.label}
            truth.append({"id": answer_id, "labels": [span]})
            meta.append(
                {
                    "id": answer_id,
                    "document": name,
                    "cuad_file": file,
                    "kind": claim.term.key,
                    "wording": claim.wording,
                    "label": claim.label,
                    "nli_label": NLI[claim.label],
                    "synthetic": claim.synthetic,
                    "cuad_answer": claim.answer,
                    "claimed": claim.claimed,
                    "evidence": [{"start": a, "end": b, "text": text[a:b]} for a, b in claim.evidence],
                }
            )
    if overlapping(out / "documents"):
        shutil.rmtree(out / "documents")
        raise SystemExit("refusing to write claims: a document overlaps the measured ones")
    _jsonl(out / "qa.jsonl", qa)
    _jsonl(out / "truth.jsonl", truth)
    _jsonl(out / "meta.jsonl", meta)
    counts["overlapping contracts dropped"] = len(overlaps)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="the bare git dir holding CUAD v1")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--contracts", type=int, help="the first N contracts kept (CUAD's file order)")
    args = parser.parse_args()
    counts = write_folder(args.git_dir, args.out, args.contracts)
    for what, n in sorted(counts.items()):
        print(f"{what}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

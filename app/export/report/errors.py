"""The report's answers with errors: each with its wrong claims, the evidence passage and the comments."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from app.export.report.content import Claim, ErrorAnswer, Redact
from app.figures.rater_names import VERIFIER, rater_name
from app.project import Project
from storage import judgements, raters, reviews

ERROR_TAGS = ("incorrect", "missing")  # what makes an answer wrong (irrelevant points only dilute it)
IMPORTED_NOTES = ("span label ", "outside every span")  # app/ingest/labels.py's notes on a span label
MOST_ERROR_ANSWERS = 200  # listed in full; the rest are in the CSV export


# ---------------------------------------------------------------- the answers with errors


def error_answers(
    project: Project, points: list[dict[str, Any]], kinds: dict[str, str], redact: Redact
) -> tuple[int, list[ErrorAnswer]]:
    """Each answer in which a person found an incorrect claim or an omission, with the claims, the
    passage that is the evidence (cited by the reviewer, else by a judge on the same claim, else the
    passage the verifier found closest to it) and the reviewers' comments."""
    by_answer: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in points:
        by_answer[p["answer_id"]].append(p)
    wrong = sorted(
        a for a, ps in by_answer.items() if any(p["tag"] in ERROR_TAGS and kinds.get(p["rater"]) == "human" for p in ps)
    )
    out = []
    titles = project.document_titles()
    quoted: dict[tuple[int, str], str] = {}  # a passage quoted once: later claims point back to it
    passages_of: dict[int, dict[str, Any]] = {}
    closest = _verifier_passages(project, wrong[:MOST_ERROR_ANSWERS])
    for answer_id in wrong[:MOST_ERROR_ANSWERS]:
        detail = project.answer(answer_id)
        if detail is None:
            continue
        if detail.document_id not in passages_of:
            passages_of[detail.document_id] = {p.citation_id: p for p in project.passages(detail.document_id)}
        passages = passages_of[detail.document_id]
        mine = by_answer[answer_id]
        claims: list[Claim] = []
        for p in mine:
            if p["tag"] not in ERROR_TAGS or kinds.get(p["rater"]) != "human":
                continue
            citing = p if p["citations"] else next((q for q in mine if q["citations"] and _same_claim(p, q)), p)
            cited = citing["citations"]
            found_by_verifier = False
            if not cited:  # no one cited a passage: the one the verifier found for the claim is the one to read
                cited = _closest(closest.get(answer_id, []), p)
                found_by_verifier = bool(cited)
            evidence = None
            if cited and cited[0] in passages:
                passage = passages[cited[0]]
                where = f"{passage.citation_id}" + (f", § {passage.section}" if passage.section else "")
                first = quoted.setdefault((detail.document_id, passage.citation_id), answer_id)
                if first == answer_id and not any(c.evidence and c.evidence.startswith(f"{where}:") for c in claims):
                    evidence = f"{where}: {redact(passage.text)}"
                else:  # the same passage in full again would repeat it word for word
                    evidence = f"{where}, quoted above" + ("" if first == answer_id else f" (answer {redact(first)})")
            comment = p["comment"] or _reason(p["rationale"])
            by = None
            if evidence:
                by = "the claim checker, as the closest passage" if found_by_verifier else rater_name(citing["rater"])
            claims.append(
                Claim(
                    redact(p["text"]), p["tag"], redact(rater_name(p["rater"])), evidence, redact(by), redact(comment)
                )
            )
        comments = _answer_comments(project, answer_id, {p["rater"] for p in mine if kinds.get(p["rater"]) == "human"})
        out.append(
            ErrorAnswer(
                redact(answer_id),
                redact(detail.question),
                redact(titles.get(detail.document, detail.document)),
                redact(detail.generator),
                redact(detail.text),
                claims,
                [redact(c) for c in comments],
            )
        )
    return len(wrong), out


def _reason(rationale: str | None) -> str | None:
    """A person's reason for a tag, as they wrote it; an imported label's own note ("span label
    unsupported: '…'", what the label file said of the span) is no one's comment."""
    if not rationale or rationale.startswith(IMPORTED_NOTES):
        return None
    return rationale


def _verifier_passages(project: Project, answer_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The verifier's stored points of these answers (span, text and the passage it found, tagged or
    not), read once: where no one cited a passage, the one it found is the clause to read."""
    with project.sessions() as session:
        rater = raters.rater_named(session, VERIFIER)
        outcomes = judgements.judge_outcomes(session, rater.id) if rater is not None else {}
    wanted = set(answer_ids)
    return {a: json.loads(o.raw_output)["points"] for a, o in outcomes.items() if a in wanted and o.raw_output}


def _closest(found: list[dict[str, Any]], p: dict[str, Any]) -> list[str]:
    """The passage the verifier found for the same claim as this point, if it read it."""
    for q in found:
        same = (q["start"], q["end"]) == (p["span_start"], p["span_end"]) or q["text"] == p["text"]
        if same and q.get("passage"):
            return [q["passage"]]
    return []


def _same_claim(p: dict[str, Any], q: dict[str, Any]) -> bool:
    """Two raters' points on one claim: the same words, or the same span of the answer."""
    same_span = p["span_start"] is not None and (p["span_start"], p["span_end"]) == (q["span_start"], q["span_end"])
    return q is not p and (q["text"] == p["text"] or same_span)


def _answer_comments(project: Project, answer_id: str, names: set[str]) -> list[str]:
    with project.sessions() as session:
        found = []
        for name in sorted(names):
            rater = raters.rater_named(session, name)
            if rater is not None and (comment := reviews.review(session, answer_id, rater.id).comment):
                found.append(f"{rater_name(name)}: {comment}")  # redacted by the caller
    return found

"""What the claim checker said of the points it left untagged. Its tags are saved as labels, one per
point it decided (`incorrect`, a confirmed `correct`); a point it read and did not decide has no label,
so nothing would tell it from a point never read. Its verdict ("quoted" with more said than quoted,
"needs_review", "unconfirmed") is in the run's raw report: read back here, as the rationale the table and
the window show ("⚠ needs review", never "—")."""

from __future__ import annotations

import json
from dataclasses import replace

from sqlalchemy.orm import Session

from app.figures.rater_names import VERIFIER
from storage import judgements, raters
from storage.reviews import ReviewPoint


def with_checker_verdicts(session: Session, answer_id: str, points: list[ReviewPoint]) -> list[ReviewPoint]:
    """`points`, each the claim checker read but left untagged given its verdict as its rationale."""
    silent = [p for p in points if p.judge == VERIFIER and p.judge_tag is None and not p.judge_rationale]
    if not silent:
        return points
    checker = raters.rater_named(session, VERIFIER)
    raw = judgements.raw_output_of(session, checker.id, answer_id) if checker is not None else None
    try:
        report = json.loads(raw) if raw else {}
    except ValueError:
        return points
    said = {(p.get("start"), p.get("end")): p for p in report.get("points", []) if isinstance(p, dict)}
    out, quiet = [], {id(p) for p in silent}
    for point in points:
        found = said.get((point.point.span_start, point.point.span_end)) if id(point) in quiet else None
        if found and found.get("verdict"):
            where = f"closest passage {found['passage']}" if found.get("passage") else "no passage close enough"
            point = replace(point, judge_rationale=f"{VERIFIER} {found['verdict']}: {where}")
        out.append(point)
    return out

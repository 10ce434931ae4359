"""Adjudication: when the reviewers of an answer disagree, an adjudicator decides each disputed data
point and the answer gets a consensus, the rater the figures then prefer (storage/adjudication.py).

A data point is one point by its identity (models/identity.py), whoever recorded it. It is disputed
when the reviewers who submitted a review of the answer did not all give it the same tag, a reviewer
who has no such point (one found a missing point the other did not, or split what the other kept
whole) counting as a different answer. An answer waits for adjudication while it has a disputed point
and no consensus. The queue puts the most disputed first: an answer's disagreement is the mean, over
its data points, of the share of reviewers who did not give the point its most common tag (having no
such point counts as a tag of its own), so 0.5 is two reviewers who disagree on every point.

Each decision is its own short transaction, audited. Once every disputed point is decided, the
consensus is written: the decided tags, and the reviewers' shared tag on every undisputed point.
Who may adjudicate is a project setting: with no adjudicators named, any reviewer may.
"""

from __future__ import annotations

import hashlib
import string
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from app.errors import AssayError
from app.project import Project
from models.vocabulary import Tag
from storage import adjudication as store
from storage import audit, reviews
from storage.adjudication import CONSENSUS, REASONS, Decision
from storage.answers import answer_detail
from storage.reviews import PointSnapshot

ADJUDICATORS = "adjudicators"  # the settings key: names of those who may adjudicate ([]: anyone)
GOLD_RATERS = "qualification.gold_raters"  # imported raters whose labels are gold: never a party to a dispute
__all__ = ["CONSENSUS", "REASONS", "Case", "CasePoint", "Opinion"]


@dataclass(frozen=True, kw_only=True)
class Opinion:
    """One reviewer's word on a data point, as the adjudicator sees it side by side."""

    reviewer: str
    alias: str  # "Reviewer A": names are hidden unless the adjudicator chooses to see them
    tag: Tag | None  # None: this reviewer has no such data point
    comment: str | None
    citations: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CasePoint:
    number: int  # 1-based, in the answer's order: what `assay adjudicate ANSWER --point N` names
    key: str
    text: str
    missing: bool  # a point the answer leaves out (no span in it)
    opinions: tuple[Opinion, ...]
    decision: Decision | None = None
    record: PointSnapshot | None = field(default=None, repr=False, compare=False)  # a reviewer's, to copy

    @property
    def disputed(self) -> bool:
        return len({o.tag for o in self.opinions}) > 1

    @property
    def agreed(self) -> Tag | None:
        """The reviewers' shared tag on an undisputed point."""
        return None if self.disputed else self.opinions[0].tag

    @property
    def disagreement(self) -> float:
        """The share of reviewers who did not give the point its most common tag."""
        votes = Counter(o.tag for o in self.opinions)
        return 1 - max(votes.values()) / len(self.opinions)

    @property
    def may_leave_out(self) -> bool:
        """A point some reviewer does not have may be left out of the consensus altogether."""
        return any(o.tag is None for o in self.opinions)


@dataclass(frozen=True, kw_only=True)
class Case:
    """An answer its reviewers disagree on: every data point with each reviewer's word on it."""

    answer_id: str
    question: str
    document: str
    reviewers: tuple[str, ...]
    points: tuple[CasePoint, ...]
    settled: bool  # the consensus is written
    disagreement: float = field(init=False)

    def __post_init__(self) -> None:
        shares = [p.disagreement for p in self.points]
        object.__setattr__(self, "disagreement", sum(shares) / len(shares) if shares else 0.0)

    @property
    def disputed(self) -> list[CasePoint]:
        return [p for p in self.points if p.disputed]

    @property
    def undecided(self) -> list[CasePoint]:
        return [p for p in self.disputed if p.decision is None]

    def point(self, number: int) -> CasePoint:
        if not 1 <= number <= len(self.points):
            raise AssayError(f"answer {self.answer_id} has data points 1 to {len(self.points)}, not {number}")
        return self.points[number - 1]

    def as_dict(self, names: bool = True) -> dict[str, Any]:
        def opinion(o: Opinion) -> dict[str, Any]:
            return {
                "reviewer": o.reviewer if names else o.alias,
                "tag": o.tag.value if o.tag else None,
                "comment": o.comment,
                "citations": list(o.citations),
            }

        return {
            "answer_id": self.answer_id,
            "question": self.question,
            "document": self.document,
            "reviewers": list(self.reviewers) if names else [o.alias for o in self.points[0].opinions],
            "disagreement": round(self.disagreement, 4),
            "settled": self.settled,
            "disputed_points": [
                {
                    "point": p.number,
                    "text": p.text,
                    "missing": p.missing,
                    "disagreement": round(p.disagreement, 4),
                    "opinions": [opinion(o) for o in p.opinions],
                    "decision": None
                    if p.decision is None
                    else {
                        "tag": p.decision.tag.value if p.decision.tag else None,
                        "reason": p.decision.reason,
                        "adjudicator": p.decision.adjudicator,
                    },
                }
                for p in self.disputed
            ],
        }


# ---------------------------------------------------------------- who may adjudicate


def adjudicators(project: Project) -> list[str]:
    with project.sessions() as session:
        return list(reviews.setting(session, ADJUDICATORS, []) or [])


def set_adjudicators(project: Project, names: list[str], actor: str) -> list[str]:
    """Name who may adjudicate (an empty list: anyone), audited."""
    names = sorted({n.strip() for n in names if n.strip()})
    with project.sessions.begin() as session:
        reviews.set_setting(session, ADJUDICATORS, names)
        audit.append_audit(session, actor, "project.adjudicators", "project", "-", {"adjudicators": names})
    return names


def check_adjudicator(session: Session, name: str) -> None:
    allowed = list(reviews.setting(session, ADJUDICATORS, []) or [])
    if not name.strip():
        raise AssayError("an adjudicator needs a name")
    if allowed and name not in allowed:
        raise AssayError(
            f"{name} is not an adjudicator of this project (the adjudicators are {', '.join(allowed)}): "
            "the project lead names them with `assay adjudicators --set`"
        )


def is_consensus(name: str) -> bool:
    """The name of the adjudicated consensus, however it is spaced or capitalised: no reviewer, import
    or bundle may write under it; only adjudication does."""
    return name.strip().casefold() == CONSENSUS


def refuse_consensus(name: str, what: str) -> None:
    """Refuse `what` done under the consensus's name: it is written by adjudication alone."""
    if is_consensus(name):
        raise AssayError(
            f"{name.strip()!r} is the adjudicated consensus: it is written only by adjudication "
            f"(assay adjudicate), so {what} under its name is refused"
        )


def consensus_signed(session: Session, answer_id: str) -> bool:
    """Whether a sign-off of the consensus on this answer stands (one made before sign-offs of the
    consensus were refused): adjudication then leaves the consensus as signed."""
    from storage import signoffs

    consensus = store.consensus_id(session)
    return consensus is not None and signoffs.standing_signoff(session, answer_id, consensus) is not None


def check_not_a_party(adjudicator: str, reviewers: tuple[str, ...] | list[str], answer_id: str) -> None:
    """A reviewer whose review is in the dispute does not decide it: another adjudicator must."""
    if adjudicator.strip() in {r.strip() for r in reviewers}:
        raise AssayError(
            f"{adjudicator.strip()} reviewed answer {answer_id} and is a party to its dispute: "
            "another adjudicator must decide it"
        )


def check_parties(session: Session, item: dict[str, Any]) -> None:
    """A bundle's decision names the reviewers who disagree on the point, as `decide` records them:
    two or more, who did not all say the same, each (once the answer's reviews are here) a reviewer
    who submitted a review of it. AssayError when it does not."""
    said, answer_id = item.get("reviewers"), item.get("answer_id")
    if not isinstance(said, dict) or len(said) < 2 or len(set(map(str, said.values()))) < 2:
        raise AssayError(f"a decision on answer {answer_id!r} names no dispute between two reviewers")
    left_out = set(gold_raters(session))
    here = [name for _, name in store.submitted_reviewers(session, [str(answer_id)]).get(str(answer_id), [])]
    parties = [name for name in here if name not in left_out]
    if len(parties) >= 2 and not set(said) <= set(parties):
        invented = ", ".join(sorted(set(map(str, said)) - set(parties)))
        raise AssayError(
            f"a decision on answer {answer_id} names {invented}, who did not review it here (its reviewers are "
            f"{', '.join(parties)})"
        )


def may_adjudicate(project: Project, name: str) -> bool:
    with project.sessions() as session:
        try:
            check_adjudicator(session, name)
        except AssayError:
            return False
    return True


# ---------------------------------------------------------------- cases


def gold_raters(session: Session) -> list[str]:
    return list(reviews.setting(session, GOLD_RATERS, []) or [])


def _aliases(count: int) -> list[str]:
    return [f"Reviewer {string.ascii_uppercase[n % 26]}{'' if n < 26 else n // 26}" for n in range(count)]


def _case(session: Session, answer_id: str, settled: set[str] | None = None) -> Case | None:
    """The answer's case, or None when fewer than two reviewers can disagree on it (`settled`: the
    answers with a consensus, when the caller has them)."""
    detail = answer_detail(session, answer_id)
    if detail is None:
        raise AssayError(f"no answer with id {answer_id!r}")
    submitted = store.submitted_reviewers(session, [answer_id]).get(answer_id, [])
    here = {name for _, name in submitted}
    # A decision counts once every reviewer it names has submitted here (one brought before the reviews
    # it settles waits for them); one naming reviewers who are not here never hides a dispute.
    decided = {
        d.point_key: d for d in store.decisions(session, answer_id) if len(d.reviewers) > 1 and set(d.reviewers) <= here
    }
    if decided:  # the reviewers the decisions were made between, not who reviewed it since
        named = {name for d in decided.values() for name in d.reviewers}
        parties = [(rid, name) for rid, name in submitted if name in named]
    else:
        left_out = set(gold_raters(session))
        parties = [(rid, name) for rid, name in submitted if name not in left_out]
    if len(parties) < 2:
        return None
    by_key: dict[str, dict[str, PointSnapshot]] = {}
    first: dict[str, PointSnapshot] = {}
    name_of = dict(parties)
    for rid, p in store.labelled_points(session, answer_id, name_of):
        if p.key is not None:
            by_key.setdefault(p.key, {}).setdefault(name_of[rid], p)
            first.setdefault(p.key, p)
    citation_of = store.citation_ids(
        session, {i for mine in by_key.values() for p in mine.values() for i in p.passage_ids}
    )
    seen = {key: n for n, key in enumerate(first)}
    order = sorted(first, key=lambda k: (first[k].span_start is None, first[k].span_start or 0, seen[k]))
    aliases = dict(zip([name for _, name in parties], _aliases(len(parties)), strict=True))
    points = []
    for number, key in enumerate(order, start=1):
        mine = by_key[key]
        opinions = tuple(
            Opinion(
                reviewer=name,
                alias=aliases[name],
                tag=mine[name].tag if name in mine else None,
                comment=mine[name].comment if name in mine else None,
                citations=tuple(citation_of[i] for i in mine[name].passage_ids if i in citation_of)
                if name in mine
                else (),
            )
            for _, name in parties
        )
        p = first[key]
        points.append(
            CasePoint(
                number=number,
                key=key,
                text=p.text,
                missing=p.span_start is None,
                opinions=opinions,
                decision=decided.get(key),
                record=p,
            )
        )
    done = answer_id in (store.consensus_answers(session) if settled is None else settled)
    return Case(
        answer_id=answer_id,
        question=detail.question,
        document=detail.document,
        reviewers=tuple(name for _, name in parties),
        points=tuple(points),
        settled=done,
    )


def case(project: Project, answer_id: str) -> Case:
    with project.sessions() as session:
        found = _case(session, answer_id)
    if found is None:
        raise AssayError(f"answer {answer_id} has fewer than two submitted reviews: there is nothing to adjudicate")
    return found


def waiting(project: Project) -> list[Case]:
    """The answers waiting for adjudication, most disputed first (then the most disputed points)."""
    with project.sessions() as session:
        settled = store.consensus_answers(session)
        candidates = store.answers_reviewed_twice(session, gold_raters(session))
        cases = [
            c for a in candidates if a not in settled and (c := _case(session, a, settled)) is not None and c.disputed
        ]
    return sorted(cases, key=lambda c: (-c.disagreement, -len(c.disputed), c.answer_id))


# ---------------------------------------------------------------- deciding


def _guideline_version(project: Project) -> str | None:
    """The version of the review guidelines in force, where the project keeps guidelines."""
    guidelines = getattr(project, "guidelines", None)
    found = guidelines() if callable(guidelines) else None
    version = getattr(found, "version", None)
    return None if version is None else str(version)


def decide(
    project: Project, answer_id: str, number: int, tag: Tag | None, reason: str | None, adjudicator: str
) -> Case:
    """Decide data point `number` of the answer (None: leave it out of the consensus) and, once every
    disputed point is decided, write the consensus. One transaction, audited."""
    if reason is not None and reason not in REASONS:
        raise AssayError(f"a reason is one of: {', '.join(REASONS)}; not {reason!r}")
    version = _guideline_version(project)
    with project.sessions.begin() as session:
        check_adjudicator(session, adjudicator)
        found = _case(session, answer_id)
        if found is None:
            raise AssayError(f"answer {answer_id} has fewer than two submitted reviews: there is nothing to adjudicate")
        check_not_a_party(adjudicator, found.reviewers, answer_id)
        if consensus_signed(session, answer_id):
            raise AssayError(f"the consensus of answer {answer_id} is signed off: it is not changed by adjudication")
        point = found.point(number)
        if not point.disputed:
            shared = point.agreed.value if point.agreed else "nothing"
            raise AssayError(f"point {number} is not disputed: every reviewer tagged it {shared}")
        if tag is None and not point.may_leave_out:
            raise AssayError(f"every reviewer has point {number}: choose its tag, it cannot be left out")
        said = {o.reviewer: (o.tag.value if o.tag else None) for o in point.opinions}
        store.record_decision(
            session,
            Decision(
                answer_id=answer_id,
                point_key=point.key,
                tag=tag,
                reason=reason,
                adjudicator=adjudicator,
                reviewers=said,
                guideline_version=version,
                decided_at=datetime.now(UTC),
            ),
        )
        found = _case(session, answer_id)
        assert found is not None
        if not found.undecided:
            store.write_consensus(session, answer_id, _consensus_points(found), adjudicator)
    return case(project, answer_id)


def _consensus_points(found: Case) -> list[tuple[PointSnapshot, str, str]]:
    """The consensus of a case whose disputes are all decided: (point, identity key, rationale)."""
    out: list[tuple[PointSnapshot, str, str]] = []
    for p in found.points:
        if p.decision is not None:
            tag = p.decision.tag
            why = f"adjudicated by {p.decision.adjudicator}" + (f": {p.decision.reason}" if p.decision.reason else "")
        else:
            tag, why = p.agreed, f"agreed by all {len(p.opinions)} reviewers"
        if tag is None:
            continue
        assert p.record is not None
        copy = replace(p.record, id=0, ordinal=len(out), source_id=None, comment=None, tag=tag, replaces=(), key=None)
        out.append((copy, p.key, why))
    return out


def unclear_guidelines(project: Project) -> list[dict[str, Any]]:
    """The decisions whose reason was "guideline unclear": what the guideline's next version must settle."""
    with project.sessions() as session:
        found = [d for d in store.decisions(session) if d.reason == "guideline unclear"]
        texts: dict[tuple[str, str], tuple[str, str]] = {}
        for answer_id in {d.answer_id for d in found}:
            detail = answer_detail(session, answer_id)
            one = _case(session, answer_id)
            for p in one.points if one else ():
                texts[(answer_id, p.key)] = (p.text, detail.question if detail else "")
    return [
        {
            "answer_id": d.answer_id,
            "question": texts.get((d.answer_id, d.point_key), ("", ""))[1],
            "point": texts.get((d.answer_id, d.point_key), ("", ""))[0],
            "reviewers": d.reviewers,
            "decided": d.tag.value if d.tag else None,
            "adjudicator": d.adjudicator,
            "guideline_version": d.guideline_version,
            "decided_at": d.decided_at.isoformat(),
        }
        for d in found
    ]


# ---------------------------------------------------------------- team bundles


def bundle_decisions(session: Session, adjudicator: str) -> list[dict[str, Any]]:
    """The decisions an adjudicator made, as a bundle carries them (the answer named by its text's hash)."""
    out = []
    for d in store.decisions(session):
        if d.adjudicator != adjudicator:
            continue
        detail = answer_detail(session, d.answer_id)
        assert detail is not None
        out.append(
            {
                "answer_id": d.answer_id,
                "answer_sha256": hashlib.sha256(detail.text.encode()).hexdigest(),
                "point_key": d.point_key,
                "tag": d.tag.value if d.tag else None,
                "reason": d.reason,
                "adjudicator": d.adjudicator,
                "reviewers": d.reviewers,
                "guideline_version": d.guideline_version,
                "decided_at": d.decided_at.isoformat(),
            }
        )
    return out


def merge_decisions(session: Session, items: list[Any], actor: str) -> set[str]:
    """A bundle's decisions, saved as made (a later one on the same point replaces it); returns the
    answers they are about. Malformed items raise TypeError or ValueError, which the bundle import
    turns into one sentence, before anything is written."""
    decisions = []
    for item in items:
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("answer_id", "point_key")):
            raise TypeError("an adjudication needs an answer_id and a point_key")
        tag = item.get("tag")
        if tag is not None and tag not in {t.value for t in Tag}:
            raise ValueError(f"an adjudication's tag is {tag!r}")
        if item.get("reason") is not None and item["reason"] not in REASONS:
            raise ValueError(f"an adjudication's reason is {item['reason']!r}")
        said = item.get("reviewers")
        if not isinstance(said, dict) or not isinstance(item.get("adjudicator"), str):
            raise TypeError("an adjudication names its adjudicator and what each reviewer said")
        if item["adjudicator"].strip() in {str(name).strip() for name in said}:
            raise ValueError(
                f"{item['adjudicator']} decided a dispute of answer {item['answer_id']!r} they were party to"
            )
        if consensus_signed(session, item["answer_id"]):
            raise ValueError(f"the consensus of answer {item['answer_id']!r} is signed off here")
        detail = answer_detail(session, item["answer_id"])
        if detail is None or hashlib.sha256(detail.text.encode()).hexdigest() != item.get("answer_sha256"):
            raise ValueError(f"answer {item['answer_id']!r} is not the same in this project")
        version = item.get("guideline_version")
        decisions.append(
            Decision(
                answer_id=item["answer_id"],
                point_key=item["point_key"],
                tag=Tag(tag) if tag else None,
                reason=item.get("reason"),
                adjudicator=item["adjudicator"],
                reviewers=said,
                guideline_version=None if version is None else str(version),
                decided_at=datetime.fromisoformat(item["decided_at"]),
            )
        )
    for decision in decisions:
        store.record_decision(session, decision)
    return {d.answer_id for d in decisions}


def settle(session: Session, answer_ids: set[str], actor: str) -> None:
    """Write the consensus of each of these answers whose disputed points are all decided (after a
    bundle brought the last reviews or decisions it waited for)."""
    decided = {d.answer_id for d in store.decisions(session)}
    for answer_id in sorted(answer_ids & decided):
        found = _case(session, answer_id)
        if found is not None and found.disputed and not found.undecided and not consensus_signed(session, answer_id):
            store.write_consensus(session, answer_id, _consensus_points(found), actor)

"""Teams without a server: a reviewer's work travels as a bundle with content hashes and merges into a
lead's project; double review is assigned evenly; the audit chain is verified.

A bundle's seal is a SHA-256 that anyone can recompute: it tells a damaged file, not a forged one.
What a bundle claims as signed rests on the reviewer's own key instead (storage/signoff_bundles.py says
which keys a bundle may bring, and storage/reviewer_keys.py how a reviewer's later key is vouched
for by a rotation their earlier key signed): a sign-off their key did not make, or one that would
reopen a sign-off in force here, refuses the whole bundle."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app import limits
from app.destinations import refuse_protected
from app.errors import AssayError, InvalidInput
from app.project import Project
from app.raters import NotAReviewer, human_named
from app.review import adjudication, bundle_signatures
from models.vocabulary import ReviewStatus, Tag
from storage import documents, guidelines, preferences, reviewer_keys, reviews, signoff_bundles, signoffs
from storage.answers import answer_detail
from storage.audit import append_audit, audit_entries, audit_has
from storage.points import data_point_id, data_point_ref
from storage.reviews import PointSnapshot

BUNDLE_FORMAT = "assay-bundle/1"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def export_bundle(project: Project, reviewer: str, out: Path) -> int:
    """Write one reviewer's points, labels, reviews and audit entries, sealed with a hash."""
    refuse_protected(out, project.url)  # never over the project, its logs or backups
    items = []
    with project.sessions() as session:
        rater = human_named(session, reviewer)
        passages_by_id: dict[int, str] = {}
        for answer in project.answers():
            points = reviews.snapshot(session, answer.id, rater.id)
            review = reviews.review(session, answer.id, rater.id)
            if not points and review.status is ReviewStatus.UNREVIEWED:
                continue
            detail = answer_detail(session, answer.id)
            assert detail is not None
            if detail.document_id not in passages_by_id:
                passages_by_id |= {p.id: p.citation_id for p in documents.passages_of(session, detail.document_id)}
            items.append(
                {
                    "answer_id": answer.id,
                    "answer_sha256": hashlib.sha256(detail.text.encode()).hexdigest(),
                    "points": [
                        {
                            "text": p.text,
                            "span": [p.span_start, p.span_end] if p.span_start is not None else None,
                            "context": [p.context_start, p.context_end] if p.context_start is not None else None,
                            "tag": p.tag.value if p.tag else None,
                            "comment": p.comment,
                            "citations": [passages_by_id[i] for i in p.passage_ids if i in passages_by_id],
                            "source": _source_ref(session, p.source_id),
                        }
                        for p in points
                    ],
                    "review": {
                        "status": review.status.value,
                        "active_seconds": review.active_seconds,
                        "holistic_correctness": review.holistic_correctness,
                        "holistic_relevance": review.holistic_relevance,
                        "comment": review.comment,
                        "guideline_version": review.guideline_version,
                    },
                }
            )
        audit = [entry.as_dict(portable=True) for entry in audit_entries(session, actor=reviewer)]
        # The reviewer's sign-offs travel with their reviews, and the guideline versions they name.
        signed = signoff_bundles.signoff_records(session, rater.id) if items else []
        vouched = reviewer_keys.bundle_keys(session, reviewer) if signed else []  # and the rotations between keys
        versions = [
            {"version": g.version, "text": g.text, "author": g.author} for g in guidelines.guideline_versions(session)
        ]
        decided = adjudication.bundle_decisions(session, reviewer)  # as an adjudicator
        chosen = [p.portable() for p in preferences.preferences(session, reviewer)]  # pairwise preferences
    bundle_signatures.sign_bundle_parts(project, reviewer, decided, versions if items else [])  # their key's word
    body = {"format": BUNDLE_FORMAT, "reviewer": reviewer, "items": items, "audit": audit}
    if items:
        body |= {"signoffs": signed, "guidelines": versions}
    if vouched:
        body["keys"] = vouched
    if chosen:
        body["preferences"] = chosen
    if decided:
        body |= {"adjudications": decided}
    out.write_text(json.dumps({**body, "sha256": _digest(body)}, ensure_ascii=False, indent=1), encoding="utf-8")
    return len(items)


def _source_ref(session, source_id: int | None) -> dict[str, Any] | None:
    """A copied judge point, named portably: the judge run and the point's position."""
    if source_id is None:
        return None
    found = data_point_ref(session, source_id)
    return None if found is None else {"rater": found[0], "ordinal": found[1]}


@dataclass(kw_only=True)
class BundleSummary:
    reviewer: str
    answers: int
    already_imported: bool


def import_bundle(project: Project, path: Path, actor: str = "bundle-import") -> BundleSummary:
    """Merge a reviewer's bundle: their labels are theirs alone, so the merge never conflicts; the
    same bundle twice changes nothing; a bundle whose content does not match its hash is refused."""
    data = limits.read_bounded(path, limits.BUNDLE, "a bundle file")
    try:
        bundle = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(str(path), f"not a readable bundle ({exc})") from exc
    except RecursionError as exc:
        raise InvalidInput(str(path), "not a readable bundle (its JSON is nested too deeply)") from exc
    if not isinstance(bundle, dict) or bundle.get("format") != BUNDLE_FORMAT:
        raise InvalidInput(str(path), f"not an Assay bundle (format {BUNDLE_FORMAT} expected)")
    seal = bundle.pop("sha256", None)
    if seal != _digest(bundle):
        raise InvalidInput(str(path), "the bundle was changed after it was written (its hash does not match)")
    try:  # sealed is not well-formed: a tool that wrote its own bundle may have left a field out
        return _merge_bundle(project, path, bundle, seal, actor)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        problem = f"the field {exc.args[0]!r} is missing" if isinstance(exc, KeyError) else f"a field is wrong ({exc})"
        raise InvalidInput(str(path), f"not a valid bundle, nothing was merged: {problem}") from exc


def _merge_bundle(project: Project, path: Path, bundle: dict[str, Any], seal: str, actor: str) -> BundleSummary:
    _check_shapes(bundle)
    reviewer = bundle["reviewer"]
    if adjudication.is_consensus(reviewer):
        raise InvalidInput(str(path), f"{reviewer!r} is the adjudicated consensus, written only by adjudication")
    travelled = {k["fingerprint"]: k for k in bundle.get("keys", [])}  # the reviewer's keys, with their rotations
    with project.sessions.begin() as session:
        if audit_has(session, "bundle.imported", seal):
            return BundleSummary(reviewer=reviewer, answers=len(bundle["items"]), already_imported=True)
        try:
            rater = human_named(session, reviewer, create_by=actor)
        except NotAReviewer as exc:
            raise InvalidInput(str(path), str(exc)) from None
        # A bundle brings a reviewer's first key only where the project knows nothing of them yet.
        first_key = not signoff_bundles.knows_reviewer(session, rater.id, reviewer)
        for withdrawn in (s for s in bundle.get("signoffs", []) if s.get("reopened_at")):  # never one in force here
            standing = signoffs.standing_signoff(session, withdrawn["answer_id"], rater.id)
            if standing is not None and standing.digest == withdrawn["digest"]:
                raise InvalidInput(
                    str(path), f"{signoff_bundles.reopen_refusal(reviewer, standing.answer_id)}; nothing was merged"
                )
        bundle_signatures.merge_guidelines(session, path, bundle.get("guidelines", []))
        for item in bundle["items"]:
            detail = answer_detail(session, item["answer_id"])
            if detail is None or hashlib.sha256(detail.text.encode()).hexdigest() != item["answer_sha256"]:
                raise InvalidInput(str(path), f"answer {item['answer_id']!r} is not the same in this project")
            passages = {p.citation_id: p.id for p in documents.passages_of(session, detail.document_id)}
            points = []
            for i, p in enumerate(item["points"]):
                span_start, span_end = p["span"] or (None, None)
                context_start, context_end = p.get("context") or (None, None)
                source = p.get("source")
                points.append(
                    PointSnapshot(
                        id=0,
                        ordinal=i,
                        text=p["text"],
                        span_start=span_start,
                        span_end=span_end,
                        source_id=data_point_id(session, detail.id, source["rater"], source["ordinal"])
                        if source
                        else None,
                        comment=p.get("comment"),
                        tag=Tag(p["tag"]) if p.get("tag") else None,
                        passage_ids=tuple(sorted(passages[c] for c in p.get("citations", ()) if c in passages)),
                        context_start=context_start,
                        context_end=context_end,
                    )
                )
            _check_offsets(points, len(detail.text))
            review = item["review"]
            _check_review(review)
            signed = signoffs.standing_signoff(session, detail.id, rater.id)
            locked = signed is not None
            before = signoffs.live_content(session, detail.id, rater.id) if locked else None
            reviews.restore(session, detail.id, rater.id, points)
            reviews.update_review(
                session,
                detail.id,
                rater.id,
                status=ReviewStatus(review["status"]),
                active_seconds=review["active_seconds"],
                holistic_correctness=review["holistic_correctness"],
                holistic_relevance=review["holistic_relevance"],
                comment=review["comment"],
                guideline_version=review.get("guideline_version"),
            )
            if locked and signoffs.live_content(session, detail.id, rater.id) != before:
                assert signed is not None
                raise InvalidInput(
                    str(path),
                    f"{reviewer} signed off answer {detail.id} here on {signed.signed_at:%Y-%m-%d %H:%M} UTC and "
                    "the bundle would change that review: reopen it first (assay reopen); nothing was merged",
                )
        for signed in bundle.get("signoffs", []):
            try:
                signoff_bundles.merge_signoff(session, rater.id, signed, actor, travelled, first_key=first_key)
            except signoff_bundles.SignOffRefused as exc:
                raise InvalidInput(str(path), f"{exc}; nothing was merged") from None
        for value in bundle.get("preferences", []):
            _merge_preference(session, path, rater.id, value, actor)
        decided = bundle_signatures.merge_decisions(
            session, path, reviewer, bundle.get("adjudications", []), actor, travelled, first_key=first_key
        )
        adjudication.settle(session, decided | {item["answer_id"] for item in bundle["items"]}, actor)
        append_audit(
            session,
            actor,
            "bundle.imported",
            "rater",
            reviewer,
            {"sha256": seal, "answers": len(bundle["items"]), "audit": bundle["audit"]},
        )
    return BundleSummary(reviewer=reviewer, answers=len(bundle["items"]), already_imported=False)


def _merge_preference(session, path: Path, rater_id: int, value: Any, actor: str) -> None:
    """A preference of the bundle's reviewer between two answers this project holds for one question."""
    if problem := preferences.preference_problem(value):
        raise InvalidInput(str(path), f"not a valid bundle, nothing was merged: a preference: {problem}")
    first, second = value["answers"]
    if not preferences.same_question(session, first, second):
        raise InvalidInput(str(path), f"answers {first!r} and {second!r} are not two answers to one question here")
    preferences.record_preference(session, rater_id, actor, value)


_JSON_NAMES = {str: "text", int: "a whole number", list: "a list", dict: "an object", type(None): "null"}


def _expect(value: object, kinds: tuple[type, ...], what: str) -> None:
    if type(value) not in kinds:
        wanted = " or ".join(_JSON_NAMES.get(k, k.__name__) for k in kinds)
        raise TypeError(f"{what} is {json.dumps(value)[:60]}, not {wanted}")


def _check_shapes(bundle: dict[str, Any]) -> None:
    """Every field the merge writes has the type the project stores, checked before anything is
    written: a resealed bundle is not a trusted one."""
    text, maybe_text, pair = (str,), (str, type(None)), (list, type(None))
    _expect(bundle["reviewer"], text, "reviewer")
    _expect(bundle["items"], (list,), "items")
    for g in bundle.get("guidelines", []):
        _expect(g, (dict,), "a guideline version")
        _expect(g["version"], (int,), "a guideline version's number")
        _expect(g["text"], text, "a guideline version's text")
        _expect(g["author"], text, "a guideline version's author")
    for signed in bundle.get("signoffs", []):
        _expect(signed, (dict,), "a sign-off")
        _expect(signed["answer_id"], text, "a sign-off's answer_id")
        _expect(signed["digest"], text, "a sign-off's digest")
        _expect(signed["record"], (dict,), "a sign-off's record")
        for field in ("key_fingerprint", "signature", "public_key", "reopened_at"):
            _expect(signed.get(field), maybe_text, f"a sign-off's {field}")
    for key in bundle.get("keys", []):
        _expect(key, (dict,), "a key")
        _expect(key["fingerprint"], text, "a key's fingerprint")
        _expect(key.get("public_key"), maybe_text, "a key's public_key")
        _expect(key.get("rotated_from"), maybe_text, "a key's rotated_from")
        _expect(key.get("rotation_signature"), maybe_text, "a key's rotation_signature")
    for item in bundle["items"]:
        _expect(item, (dict,), "an item")
        _expect(item["answer_id"], text, "answer_id")
        _expect(item["answer_sha256"], text, "answer_sha256")
        _expect(item["points"], (list,), "points")
        _expect(item["review"], (dict,), "review")
        _expect(item["review"]["comment"], maybe_text, "the review's comment")
        for n, p in enumerate(item["points"], start=1):
            _expect(p, (dict,), f"point {n}")
            _expect(p["text"], text, f"point {n}'s text")
            _expect(p.get("comment"), maybe_text, f"point {n}'s comment")
            _expect(p.get("tag"), maybe_text, f"point {n}'s tag")
            for field in ("span", "context"):
                _expect(p.get(field), pair, f"point {n}'s {field}")
                for offset in p.get(field) or ():
                    _expect(offset, (int,), f"point {n}'s {field}")
            _expect(p.get("citations", []), (list,), f"point {n}'s citations")
            for citation in p.get("citations", []):
                _expect(citation, text, f"point {n}'s citation")
            if p.get("source"):
                _expect(p["source"], (dict,), f"point {n}'s source")
                _expect(p["source"]["rater"], text, f"point {n}'s source rater")
                _expect(p["source"]["ordinal"], (int,), f"point {n}'s source ordinal")


def _check_offsets(points: list[PointSnapshot], length: int) -> None:
    """Spans and lead-ins must lie inside the answer (a resealed bundle is not a trusted one)."""
    for p in points:
        for start, end in ((p.span_start, p.span_end), (p.context_start, p.context_end)):
            if start is None and end is None:
                continue
            if start is None or end is None or not 0 <= start <= end <= length:
                raise ValueError(f"point {p.ordinal + 1} has offsets {start}, {end} outside the answer")


def _check_review(review: dict[str, Any]) -> None:
    """The review's figures within the ranges the project holds, checked before anything is written."""
    for field in ("holistic_correctness", "holistic_relevance"):
        value = review[field]
        if value is not None and (type(value) is not int or not 1 <= value <= 5):
            raise ValueError(f"{field} is {value!r}, not a rating from 1 to 5")
    version = review.get("guideline_version")
    if version is not None and type(version) is not int:
        raise ValueError(f"guideline_version is {version!r}, not a version number")
    seconds = review["active_seconds"]
    if type(seconds) not in (int, float) or not 0 <= seconds < 10**9:
        raise ValueError(f"active_seconds is {seconds!r}, not a number of seconds")


def assign(project: Project, reviewers: list[str], per_answer: int) -> dict[str, list[str]]:
    """Spread double (or k-fold) review evenly: every answer gets `per_answer` different reviewers and
    each reviewer gets the same number of answers, give or take one."""
    reviewers = [r.strip() for r in reviewers if r.strip()]
    if per_answer < 1 or per_answer > len(reviewers):
        raise AssayError(f"--per-answer must be between 1 and the number of reviewers ({len(reviewers)})")
    answers = [a.id for a in project.answers()]
    plan = {
        a: [reviewers[(i * per_answer + k) % len(reviewers)] for k in range(per_answer)] for i, a in enumerate(answers)
    }
    with project.sessions.begin() as session:
        reviews.set_setting(session, "assignments", plan)
        append_audit(
            session, "assign", "project.assigned", "project", "-", {"reviewers": reviewers, "per_answer": per_answer}
        )
    return plan

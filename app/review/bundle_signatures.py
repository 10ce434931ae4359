"""What a bundle carries beside sign-offs, signed by its author's key: an adjudicator's decisions and
the guideline versions its reviewer wrote.

A bundle's seal is a plain SHA-256, so a decision or a guideline version in it is taken only when its
author's key signed it, and only as `assay decide` and `assay guidelines --set` would have taken it.
A decision travels in its adjudicator's own bundle, signed with their key when the bundle is written
(the key the project has for them, or their first, made then as a first sign-off makes one); the
project it is merged into admits that key by the rules of storage/signoff_bundles.py, checks that the
adjudicator may adjudicate there and was no party, and, once the answer's reviews are there, that the
decision names the reviewers who disagree on a disputed point (`adjudication.check_parties`). A
guideline version the project lacks is added only when signed by its author's key registered here
and in force, as the next version, within the size `guidelines --set` reads; a version the project
has must have the same text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from app import keys, limits
from app.errors import AssayError, InvalidInput
from app.project import Project
from app.review import adjudication
from models.names import reviewer_key
from storage import guidelines, signoff_bundles
from storage.reviewer_keys import b64, registered_key, registered_keys, signature_valid

DECISION_FORMAT = "assay-decision/1"
GUIDELINES_FORMAT = "assay-guidelines/1"
SIGNATURE_FIELDS = ("key_fingerprint", "public_key", "signature")


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def decision_message(item: dict[str, Any]) -> bytes:
    """What a decision's signature covers: every field it travels with but the signature's own."""
    return _canonical({"format": DECISION_FORMAT, **{k: v for k, v in item.items() if k not in SIGNATURE_FIELDS}})


def guideline_message(version: int, text: str, author: str) -> bytes:
    return _canonical({"format": GUIDELINES_FORMAT, "version": version, "text": text, "author": author})


def sign_bundle_parts(
    project: Project, reviewer: str, decided: list[dict[str, Any]], versions: list[dict[str, Any]]
) -> None:
    """Sign the reviewer's decisions (making their first key when the project has none, as a first
    sign-off does) and the guideline versions they wrote, where this computer holds their key."""
    mine = [v for v in versions if v["author"] == reviewer]
    if not decided and not mine:
        return
    with project.sessions.begin() as session:
        signer = keys.signing_key(session, reviewer)[0] if decided else keys.held_signer(session, reviewer)
        if signer is None:
            return
        key = registered_key(session, signer.fingerprint)
        assert key is not None
        for item in decided:
            signature = b64(signer.sign(decision_message(item)))
            item |= {"key_fingerprint": key.fingerprint, "public_key": key.public_key, "signature": signature}
        for item in mine:
            signature = b64(signer.sign(guideline_message(item["version"], item["text"], item["author"])))
            item |= {"key_fingerprint": key.fingerprint, "public_key": key.public_key, "signature": signature}


def merge_decisions(
    session: Session,
    path: Path,
    reviewer: str,
    items: list[Any],
    actor: str,
    travelled: dict[str, dict[str, Any]],
    *,
    first_key: bool,
) -> set[str]:
    """The bundle's decisions, each its reviewer's and signed with their key, checked as `decide`
    checks them; then saved (adjudication.merge_decisions). InvalidInput names the first refused."""
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("adjudicator"), str):
            raise TypeError("an adjudication names its adjudicator and what each reviewer said")
        answer = item.get("answer_id")
        what = f"{reviewer}'s decision on answer {answer}"
        if item["adjudicator"] != reviewer:
            raise InvalidInput(
                str(path),
                f"the bundle of {reviewer} carries a decision by {item['adjudicator']!r}: a decision travels only "
                "in its adjudicator's own bundle, signed with their key; nothing was merged",
            )
        signed = signoff_bundles.Signed(
            item.get("key_fingerprint"), item.get("public_key"), decision_message(item), item.get("signature")
        )
        try:
            signoff_bundles.admit_key(session, reviewer, signed, what, actor, travelled, first_key=first_key)
            adjudication.check_adjudicator(session, reviewer)
            said = item.get("reviewers")
            if isinstance(said, dict) and reviewer_key(reviewer) in {reviewer_key(str(n)) for n in said}:
                raise AssayError(f"{reviewer} decided a dispute of answer {answer!r} they were party to")
            adjudication.check_parties(session, item)
        except (signoff_bundles.SignOffRefused, AssayError) as exc:
            raise InvalidInput(str(path), f"{exc}; nothing was merged") from None
    return adjudication.merge_decisions(session, items, actor)


def merge_guidelines(session: Session, path: Path, versions: list[dict[str, Any]]) -> None:
    """The guideline versions a bundle names: one this project has must have the same text; one it
    lacks is added only as `guidelines --set` would add it (the next number, within its size) and
    signed by its author's key registered here."""
    for item in sorted(versions, key=lambda v: v["version"]):
        number, text, author = item["version"], item["text"], item["author"]
        here = guidelines.guideline_version(session, number)
        if here is not None:
            if here.sha256 != guidelines.text_sha256(text):
                raise InvalidInput(
                    str(path), f"its guideline version {number} is not this project's: nothing was merged"
                )
            continue
        problem = _guideline_problem(session, number, text, author, item)
        if problem:
            raise InvalidInput(str(path), f"its guideline version {number} by {author!r} {problem}; nothing was merged")
        guidelines.set_guidelines(session, text, author, version=number)


def _guideline_problem(session: Session, number: int, text: str, author: str, item: dict[str, Any]) -> str | None:
    current = guidelines.current_guidelines(session)
    following = (current.version if current else 0) + 1
    if number != following:
        return f"is not the next version here ({following})"
    if len(text.encode("utf-8", "surrogatepass")) > limits.GUIDELINES:
        return f"is over {limits.GUIDELINES // limits.MB} MB, which `assay guidelines --set` reads"
    fingerprint, signature = item.get("key_fingerprint"), item.get("signature")
    key = registered_key(session, fingerprint) if isinstance(fingerprint, str) else None
    if key is None or key.reviewer != author or key.retired_at is not None:
        held = [k.fingerprint[:16] for k in registered_keys(session, author) if k.retired_at is None]
        whose = f"their key {held[-1]}" if held else "a key of theirs registered here"
        return f"is not signed with {whose} (a bundle's hash proves nothing: anyone can recompute it)"
    if not signature_valid(key.public_key, guideline_message(number, text, author), signature):
        return f"does not verify with {author}'s key {key.fingerprint[:16]}"
    return None

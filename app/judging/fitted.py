"""Which claim checker speaks for a document: the one fitted to its matter's (or the project's) reviews where
one was adopted (app/judging/learning.py), pinned by the SHA-256 its adoption's audit entry records and
refused when altered; else the shipped one. app/judging/verification.Verifier asks for every document."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.errors import AssayError
from models.checker.engine import ClaimEngine
from models.checker.learning import CheckerHead, sha256_of, speaking
from storage import learned_checker as store

SHIPPED = "shipped"


class CheckerAltered(AssayError):
    """The fitted checker kept in the project is not the one its adoption pinned."""


def pinned(session: Session, matter_id: int | None) -> CheckerHead | None:
    """The scope's adopted model, refused when its text is not what its adoption pinned."""
    fitted = store.stored(session, matter_id)
    if fitted is None:
        return None
    model = str(fitted.get("model", ""))
    pinned = store.pinned_sha256(session, matter_id)
    where = "the project" if matter_id is None else f"matter {matter_id}"
    if sha256_of(model) != fitted.get("sha256") or pinned != fitted.get("sha256"):
        raise CheckerAltered(
            f"the claim checker fitted to {where}'s reviews is altered (its SHA-256 is not the one its adoption "
            "recorded in the audit log): `assay checker reset` and fit it again"
        )
    try:
        return CheckerHead.from_json(model)
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckerAltered(f"the claim checker fitted to {where}'s reviews cannot be read ({exc})") from exc


def speaker(
    engine: ClaimEngine, speakers: dict[int | None, tuple[ClaimEngine, str]], session: Session, document_id: int
) -> tuple[ClaimEngine, str]:
    """The engine that speaks for a document, and its name ("shipped", or "fitted <SHA-256>"): the one fitted
    to its matter's (or, unassigned, the project's) reviews where one was adopted, else the shipped one;
    `speakers` keeps each scope's once found."""
    matter_id = store.document_matter(session, document_id)
    if matter_id not in speakers:
        head = pinned(session, matter_id)
        neural = engine.encoders is not None and engine.whole_cascade
        if head is None or bool(head.card_.get("neural")) != neural:  # fitted on what this engine cannot compute
            speakers[matter_id] = (engine, SHIPPED)
        else:
            fitted = store.stored(session, matter_id) or {}
            speakers[matter_id] = (speaking(engine, head)[0], f"fitted {fitted.get('sha256')}")
    return speakers[matter_id]

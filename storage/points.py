"""One data point, every rater's tag: identity keys for new records, and the tags that every rater
(judge runs, jury, reviewers, imports, a verifier) put on the points of an answer, and a point named
portably (its rater and position) for a bundle that travels to another project."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from models.identity import PointContent, key_for
from models.vocabulary import RaterKind, Tag
from storage.schema import CitationRow, DataPointRow, LabelRow, PassageRow, RaterRow


def key_points(session: Session, answer_id: str, point_ids: Iterable[int]) -> None:
    """Give new records of an answer their identity key: the key of the point another rater already
    recorded that says the same thing, else their own. A rater's own points never merge."""
    wanted = set(point_ids)
    if not wanted:
        return
    session.flush()
    rows = list(
        session.scalars(select(DataPointRow).where(DataPointRow.answer_id == answer_id).order_by(DataPointRow.id))
    )
    cited: dict[int, list[str]] = {}
    for point_id, citation in session.execute(
        select(CitationRow.data_point_id, PassageRow.citation_id)
        .join(PassageRow, PassageRow.id == CitationRow.passage_id)
        .where(CitationRow.data_point_id.in_([r.id for r in rows]))
    ):
        cited.setdefault(point_id, []).append(citation)

    def content(row: DataPointRow) -> PointContent:
        return PointContent(row.text, row.span_start, row.span_end, tuple(sorted(cited.get(row.id, ()))))

    keyed = [(r.point_key, content(r), r.rater_id) for r in rows if r.id not in wanted and r.point_key]
    for row in rows:
        if row.id in wanted:
            mine = content(row)
            row.point_key = key_for(mine, [(k, c) for k, c, rater in keyed if rater != row.rater_id])
            keyed.append((row.point_key, mine, row.rater_id))
    session.flush()


@dataclass(frozen=True, kw_only=True)
class RaterTag:
    """One rater's tag on a data point. `earlier` marks a tag on a point this one replaced (the
    reviewer split, merged or edited it): shown for context, never counted as a tag of this point."""

    rater: str
    kind: RaterKind
    tag: Tag
    confidence: float | None = None
    rationale: str | None = None
    earlier: bool = False


def tags_by_key(session: Session, answer_id: str) -> dict[str, list[RaterTag]]:
    """Every rater's tag on each data point of the answer, by identity key, raters in name order."""
    rows = session.execute(
        select(
            DataPointRow.point_key, RaterRow.name, RaterRow.kind, LabelRow.tag, LabelRow.confidence, LabelRow.rationale
        )
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .join(RaterRow, RaterRow.id == LabelRow.rater_id)
        .where(DataPointRow.answer_id == answer_id, DataPointRow.point_key.is_not(None))
        .order_by(RaterRow.name, DataPointRow.id)
    )
    found: dict[str, dict[str, RaterTag]] = {}
    for key, name, kind, tag, confidence, rationale in rows:
        assert key is not None  # the query leaves out points without a key
        found.setdefault(key, {}).setdefault(
            name, RaterTag(rater=name, kind=RaterKind(kind), tag=Tag(tag), confidence=confidence, rationale=rationale)
        )
    return {key: list(by_rater.values()) for key, by_rater in found.items()}


def tags_of_point(
    by_key: dict[str, list[RaterTag]], key: str | None, replaces: Iterable[str], exclude: str
) -> list[RaterTag]:
    """The other raters' tags on one point; for a rater who did not tag it, their tag on the point it
    replaced, marked `earlier`."""
    own = [t for t in by_key.get(key or "", []) if t.rater != exclude]
    seen = {t.rater for t in own}
    earlier = []
    for old in replaces:
        for t in by_key.get(old, []):
            if t.rater != exclude and t.rater not in seen:
                seen.add(t.rater)
                earlier.append(
                    RaterTag(
                        rater=t.rater,
                        kind=t.kind,
                        tag=t.tag,
                        confidence=t.confidence,
                        rationale=t.rationale,
                        earlier=True,
                    )
                )
    return own + earlier


def data_point_ref(session: Session, point_id: int) -> tuple[str, int] | None:
    row = session.execute(
        select(RaterRow.name, DataPointRow.ordinal)
        .join(RaterRow, RaterRow.id == DataPointRow.rater_id)
        .where(DataPointRow.id == point_id)
    ).first()
    return None if row is None else (row[0], row[1])


def data_point_id(session: Session, answer_id: str, rater: str, ordinal: int) -> int | None:
    return session.scalar(
        select(DataPointRow.id)
        .join(RaterRow, RaterRow.id == DataPointRow.rater_id)
        .where(DataPointRow.answer_id == answer_id, RaterRow.name == rater, DataPointRow.ordinal == ordinal)
    )

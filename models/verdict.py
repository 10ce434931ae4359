"""A judge's verdict on one answer, and the checks that make a model's output safe to store.

Nothing the model returns is trusted: the JSON must match the schema, each asserted data point must
be found in the answer (fuzzy matching gives its span), duplicates are dropped, answer text that no
point covers becomes an untagged point for the reviewer, and cited ids the document lacks are kept
apart as unverified. A point that echoes the judge's prompt, or cites no passage of the document, is
refused and counted, never stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from models.errors import JudgeOutputInvalid
from models.evidence import CitationResolver, Cited, echoes_prompt
from models.segmentation import Segment
from models.vocabulary import Tag

MIN_ALIGNMENT = 80.0  # rapidfuzz partial ratio (0-100) for a data point to count as quoted from the answer


@dataclass(frozen=True)
class JudgedPoint:
    text: str
    start: int | None  # span in the answer; None for a missing point
    end: int | None
    tag: Tag | None  # None: answer text the judge did not tag, left for the reviewer
    confidence: float | None = None
    rationale: str | None = None
    citations: tuple[str, ...] = ()  # the evidence: ids of passages the tag relies on, most relevant first
    unverified_citations: tuple[str, ...] = ()  # ids the judge cited that the document lacks
    # Where the evidence comes from: "cited" (the judge's citations, validated), "section" (a clause
    # the document does not split out: its section's passages), "shown" (the passages the prompt
    # showed, ranked by relevance to the point).
    basis: str | None = None
    context_start: int | None = None  # the lead-in the point is read with (see models.segmentation)
    context_end: int | None = None
    context: str = ""  # that lead-in's text; "" when none


@dataclass(kw_only=True)
class JudgeWork:
    """How judging one answer went, whatever the rubric: failure, raw output, attempts, cost."""

    failed: bool = False
    error: str | None = None
    raw_output: str | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    evaluated_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    rejected: dict[str, int] = field(default_factory=dict)  # judge points refused by validation, by reason

    def reject(self, reason: str) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + 1


@dataclass
class Verdict(JudgeWork):
    answer_id: str
    points: list[JudgedPoint] = field(default_factory=list)


def load_json(raw: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Parse and validate a model's JSON output; JudgeOutputInvalid keeps the raw text."""
    import jsonschema

    try:
        value: dict[str, Any] = json.loads(raw)  # an object: the schema says so, and is checked next
    except json.JSONDecodeError as exc:
        raise JudgeOutputInvalid(f"the judge's output is not JSON ({exc.msg} at character {exc.pos})", raw) from exc
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        raise JudgeOutputInvalid(f"the judge's output does not match the schema ({exc.message[:200]})", raw) from exc
    return value


def split_citations(cited: Iterable[str], known: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    ids = list(dict.fromkeys(c.strip().strip("[]") for c in cited if c.strip()))
    return tuple(c for c in ids if c in known), tuple(c for c in ids if c not in known)


REJECT_ECHO = "prompt echo"  # the point's words come from the judge's prompt
REJECT_UNCITED = "cites no passage"  # no citation names an existing passage of the document
REJECT_UNALIGNED = "not in the answer"  # an asserted point whose words the answer does not have


def validated_citations(
    cited: Sequence[str], text: str, known: frozenset[str], resolve: CitationResolver | None
) -> Cited:
    """What a point's citations name: through the document's resolver, else by exact id."""
    if resolve is not None:
        return resolve(cited, text)
    verified, unverified = split_citations(cited, known)
    return Cited(verified, unverified)


def align(text: str, answer: str) -> tuple[int, int, float] | None:
    """Where in the answer a data point's words are: (start, end, score), or None below MIN_ALIGNMENT."""
    from rapidfuzz import fuzz

    needle = " ".join(text.split())
    if not needle:
        return None
    exact = answer.find(text)
    if exact >= 0:
        return exact, exact + len(text), 100.0
    found = fuzz.partial_ratio_alignment(needle, answer, score_cutoff=MIN_ALIGNMENT)
    if found is None:
        return None
    return found.dest_start, found.dest_end, found.score


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def asserted_points(
    items: list[dict[str, Any]],
    answer: str,
    known: frozenset[str],
    work: JudgeWork,
    resolve: CitationResolver | None = None,
) -> list[JudgedPoint]:
    """Align each asserted point to its span of the answer; refuse echoes of the prompt, points that
    are not the answer's text and points that cite no passage (counted in `work`); drop duplicates."""
    points: list[JudgedPoint] = []
    for item in items:
        if echoes_prompt(item["text"], answer):
            work.reject(REJECT_ECHO)
            continue
        found = align(item["text"], answer)
        if found is None:
            work.reject(REJECT_UNALIGNED)
            continue
        start, end, _score = found
        if any(_overlap((start, end), (p.start or 0, p.end or 0)) > 0.8 * (end - start) for p in points):
            continue  # the same words, tagged twice
        cited = validated_citations(item.get("citations", ()), answer[start:end], known, resolve)
        if not cited.passages:
            work.reject(REJECT_UNCITED)
            continue
        points.append(
            JudgedPoint(
                text=answer[start:end],
                start=start,
                end=end,
                tag=Tag(item["tag"]),
                confidence=item.get("confidence"),
                rationale=item.get("rationale") or None,
                citations=cited.passages,
                unverified_citations=cited.unverified,
                basis="section" if cited.fallback else "cited",
            )
        )
    return points


def missing_points(
    items: list[dict[str, Any]],
    answer: str,
    known: frozenset[str],
    work: JudgeWork,
    resolve: CitationResolver | None = None,
) -> list[JudgedPoint]:
    """Omissions the judge added: not already in the answer, not repeated, not an echo of the prompt,
    and supported by a passage of the document."""
    from rapidfuzz import fuzz

    points: list[JudgedPoint] = []
    for item in items:
        text = " ".join(item["text"].split())
        if not text or fuzz.partial_ratio(text, answer) >= 95:
            continue  # the answer says it: not missing
        if echoes_prompt(text):
            work.reject(REJECT_ECHO)
            continue
        if any(fuzz.ratio(text, p.text) >= 90 for p in points):
            continue
        cited = validated_citations(item.get("citations", ()), text, known, resolve)
        if not cited.passages:
            work.reject(REJECT_UNCITED)
            continue
        points.append(
            JudgedPoint(
                text,
                None,
                None,
                Tag.MISSING,
                None,
                item.get("rationale") or None,
                cited.passages,
                cited.unverified,
                "section" if cited.fallback else "cited",
            )
        )
    return points


def _with_context(point: JudgedPoint, segments: list[Segment]) -> JudgedPoint:
    if point.start is None or point.end is None or point.context_start is not None:
        return point
    span = (point.start, point.end)
    best = max(segments, key=lambda s: _overlap((s.start, s.end), span), default=None)
    if best is None or _overlap((best.start, best.end), span) == 0 or best.context_end is None:
        return point
    if best.context_end > point.start:  # the point reaches back into the lead-in itself
        return point
    return replace(point, context_start=best.context_start, context_end=best.context_end, context=best.context)


def cover_the_rest(points: list[JudgedPoint], segments: list[Segment]) -> list[JudgedPoint]:
    """Answer sentences that no asserted point covers become untagged points, in answer order; an
    asserted point is read with the lead-in of the sentence it is mostly made of."""
    points = [_with_context(p, segments) for p in points]
    spans = [(p.start, p.end) for p in points if p.start is not None and p.end is not None]
    extra = [
        JudgedPoint(
            s.text, s.start, s.end, None, context_start=s.context_start, context_end=s.context_end, context=s.context
        )
        for s in segments
        if sum(_overlap((s.start, s.end), span) for span in spans) < 0.5 * (s.end - s.start)
    ]
    asserted = sorted([p for p in points if p.start is not None] + extra, key=lambda p: p.start or 0)
    return asserted + [p for p in points if p.start is None]

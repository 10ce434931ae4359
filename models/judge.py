"""The LeMAJ judge: one-pass (decompose, tag and add missing points in one prompt) or two-stage
(segment once, tag each point from the label tokens' log-probabilities, then ask for omissions)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, TypeVar

from models.backends.base import Generation, JudgeBackend
from models.errors import JudgeOutputInvalid, JudgeUnavailable
from models.evidence import CitationResolver, rank_passages
from models.prompts import (
    LABELS,
    PROMPT_VERSION,
    EvidencePassage,
    Prompt,
    Strictness,
    missing_prompt,
    missing_schema,
    one_pass_prompt,
    one_pass_schema,
    point_text,
    tag_all_prompt,
    tag_prompt,
)
from models.segmentation import Segment, segment_answer
from models.verdict import (
    REJECT_UNALIGNED,
    JudgedPoint,
    JudgeWork,
    Verdict,
    asserted_points,
    cover_the_rest,
    load_json,
    missing_points,
)
from models.vocabulary import Tag

T = TypeVar("T")  # what a judge's output parses to


class Mode(StrEnum):
    ONE_PASS = "one-pass"
    TWO_STAGE = "two-stage"


class Tagging(StrEnum):
    """How two-stage tags the points: all in one evaluation (label slots), or one prompt per point."""

    ONE_PASS = "one-pass"
    PER_POINT = "per-point"


class Cancelled(Exception):
    """The user stopped the run; the answer in flight is not saved."""


@dataclass(frozen=True)
class JudgeCase:
    answer_id: str
    question: str
    answer: str
    evidence: list[EvidencePassage]  # what the judge is shown, within the context budget
    document_ids: frozenset[str]  # every citation id of the document, to verify what it cites
    # Resolves what the judge cites (ids, "Section 7.3(i)") to evidence passages of the document.
    resolve: CitationResolver | None = None
    whole_document: bool = False  # the evidence is the whole document, shared by every answer about it
    # The answer's points as stored with it (app/judging/cases.py reads them: segmented once per segmenter
    # version); None for a text no answer holds (a planted error), which is segmented here.
    points: tuple[Segment, ...] | None = None

    def segments(self) -> list[Segment]:
        """The answer's data points as the segmenter cuts them."""
        return list(self.points) if self.points is not None else segment_answer(self.answer)


TAG_SCHEMA = {
    "type": "object",
    "properties": {"tag": {"type": "string", "enum": list(LABELS)}},
    "required": ["tag"],
}


class LemajJudge:
    def __init__(
        self,
        backend: JudgeBackend,
        mode: Mode = Mode.TWO_STAGE,
        strictness: Strictness = Strictness.STANDARD,
        *,
        max_attempts: int = 3,
        seed: int = 0,
        temperature: float = 0.0,
        find_missing: bool = True,  # two-stage: also ask for omissions (a generation step)
        tagging: Tagging = Tagging.ONE_PASS,
    ) -> None:
        self.backend = backend
        self.mode = mode
        self.strictness = strictness
        self.max_attempts = max_attempts
        self.seed = seed
        self.temperature = temperature
        self.find_missing = find_missing
        # One-pass tagging needs logits at several positions of one prompt: local models only.
        self.tagging = tagging if hasattr(backend, "slot_label_scores") else Tagging.PER_POINT

    def describe(self) -> dict[str, Any]:
        return {
            **self.backend.describe(),
            "rubric": "lemaj",
            "mode": self.mode.value,
            "strictness": self.strictness.value,
            "prompt_version": PROMPT_VERSION,
            "max_attempts": self.max_attempts,
            "temperature": self.temperature,
            "find_missing": self.find_missing,
            **({"tagging": self.tagging.value} if self.mode is Mode.TWO_STAGE else {}),
        }

    def evaluate(self, case: JudgeCase, cancel: threading.Event | None = None) -> Verdict:
        """A verdict, or a failed one with the reason and raw output; raises only Cancelled and
        JudgeUnavailable (the model or server is gone, which no retry of this answer can mend)."""
        cancel = cancel or threading.Event()
        verdict = Verdict(case.answer_id)
        started = time.perf_counter()
        try:
            if self.mode is Mode.ONE_PASS:
                self._one_pass(case, verdict, cancel)
            else:
                self._two_stage(case, verdict, cancel)
        except JudgeOutputInvalid as exc:
            verdict.failed, verdict.error, verdict.raw_output = True, str(exc), exc.raw
            verdict.points = []
        verdict.seconds = time.perf_counter() - started
        return verdict

    # ------------------------------------------------------------------ one pass

    def _one_pass(self, case: JudgeCase, verdict: Verdict, cancel: threading.Event) -> None:
        segments = case.segments()
        schema = one_pass_schema(max_points=min(24, 2 * len(segments) + 4))
        prompt = one_pass_prompt(case.evidence, case.question, case.answer, self.strictness, case.whole_document)
        max_tokens = 2 * self.backend.count_tokens(case.answer) + 400

        def parse(raw: str) -> list[JudgedPoint]:
            items = load_json(raw, schema)["data_points"]
            work = JudgeWork()  # this attempt's refusals: only the accepted attempt's are reported
            said = [i for i in items if i["tag"] != "missing"]
            asserted = asserted_points(said, case.answer, case.document_ids, work, case.resolve)
            omitted = [i for i in items if i["tag"] == "missing"]
            missing = missing_points(omitted, case.answer, case.document_ids, work, case.resolve)
            if said and work.rejected.get(REJECT_UNALIGNED, 0) == len(said):
                raise JudgeOutputInvalid("none of the judge's data points is text of the answer", raw)
            verdict.rejected = work.rejected
            return [_with_evidence(p, case) for p in cover_the_rest(asserted + missing, segments)]

        verdict.points = self._generate_valid(prompt, schema, max_tokens, parse, verdict, cancel)

    # ------------------------------------------------------------------ two stage

    def _two_stage(self, case: JudgeCase, verdict: Verdict, cancel: threading.Event) -> None:
        segments = case.segments()
        if cancel.is_set():
            raise Cancelled
        tags = self.tag_points(case, segments, verdict, cancel)
        points = [
            _with_evidence(
                JudgedPoint(
                    segment.text,
                    segment.start,
                    segment.end,
                    tag,
                    confidence,
                    context_start=segment.context_start,
                    context_end=segment.context_end,
                    context=segment.context,
                ),
                case,
            )
            for segment, (tag, confidence) in zip(segments, tags, strict=True)
        ]
        if not points:  # an answer with no sentence to tag: the reviewer still sees all of it
            points.append(_with_evidence(JudgedPoint(case.answer, 0, len(case.answer), None), case))
        verdict.points = points
        if not self.find_missing:
            return

        schema = missing_schema()
        prompt = missing_prompt(case.evidence, case.question, case.answer, self.strictness, case.whole_document)

        def parse(raw: str) -> list[JudgedPoint]:
            work = JudgeWork()
            items = load_json(raw, schema)["missing"]
            found = missing_points(items, case.answer, case.document_ids, work, case.resolve)
            for reason, count in work.rejected.items():
                verdict.rejected[reason] = verdict.rejected.get(reason, 0) + count
            return found

        try:
            verdict.points = points + self._generate_valid(prompt, schema, 400, parse, verdict, cancel)
        except JudgeOutputInvalid as exc:
            # The tags stand; only the search for omissions failed, and the outcome says so.
            verdict.error, verdict.raw_output = f"missing-point step: {exc}", exc.raw

    def tag_points(
        self, case: JudgeCase, segments: list[Any], verdict: Verdict, cancel: threading.Event
    ) -> list[tuple[Tag, float | None]]:
        """The tag (and confidence) of each point of the answer, the way this judge tags: all in one
        evaluation, or one prompt per point."""
        if self.tagging is Tagging.ONE_PASS and segments:
            return self._tag_all(case, segments, verdict)
        tags = []
        for segment in segments:
            if cancel.is_set():
                raise Cancelled
            tags.append(self._tag(case, _as_read(segment), verdict, cancel))
        return tags

    def _tag_all(self, case: JudgeCase, segments: list[Any], verdict: Verdict) -> list[tuple[Tag, float | None]]:
        points = [(_lead_in(s), s.text) for s in segments]
        prompt = tag_all_prompt(case.evidence, case.question, points, self.strictness, case.whole_document)
        scores = self.backend.slot_label_scores(prompt, LABELS)  # type: ignore[attr-defined]
        verdict.prompt_tokens += scores.prompt_tokens
        verdict.evaluated_tokens += scores.evaluated_tokens
        return [_best(logprobs) for logprobs in scores.logprobs]

    def _tag(self, case: JudgeCase, point: str, verdict: Verdict, cancel: threading.Event) -> tuple[Tag, float | None]:
        prompt = tag_prompt(case.evidence, case.question, case.answer, point, self.strictness, case.whole_document)
        scores = self.backend.label_scores(prompt, LABELS)
        if scores is not None:
            verdict.prompt_tokens += scores.prompt_tokens
            verdict.evaluated_tokens += scores.evaluated_tokens
            return _best(scores.logprobs)
        # No log-probabilities (Anthropic): ask for the tag itself; no confidence then.
        value = self._generate_valid(prompt, TAG_SCHEMA, 20, lambda raw: load_json(raw, TAG_SCHEMA), verdict, cancel)
        return Tag(value["tag"]), None

    def _generate_valid(
        self,
        prompt: Prompt,
        schema: dict[str, Any],
        max_tokens: int,
        parse: Callable[[str], T],
        verdict: Verdict,
        cancel: threading.Event,
    ) -> T:
        return generate_valid(
            self.backend,
            prompt,
            schema,
            max_tokens,
            parse,
            verdict,
            cancel,
            attempts=self.max_attempts,
            seed=self.seed,
            temperature=self.temperature,
        )


def generate_valid(
    backend: JudgeBackend,
    prompt: Prompt,
    schema: dict[str, Any],
    max_tokens: int,
    parse: Callable[[str], T],
    counter: JudgeWork,
    cancel: threading.Event,
    *,
    attempts: int = 3,
    seed: int = 0,
    temperature: float = 0.0,
) -> T:
    """Generate and parse; on invalid output try again with a new seed (and some temperature, or a
    deterministic model would say the same again), up to `attempts` times. `counter` (a Verdict or
    rubric result) accumulates attempts and tokens."""
    last: JudgeOutputInvalid | None = None
    for attempt in range(attempts):
        if cancel.is_set():
            raise Cancelled
        counter.attempts += 1
        generation = backend.generate(
            prompt,
            schema=schema,
            max_tokens=max_tokens,
            temperature=temperature if attempt == 0 else max(temperature, 0.7),
            seed=seed + attempt,
        )
        _count(counter, generation)
        try:
            return parse(generation.text)
        except JudgeOutputInvalid as exc:
            last = exc
    assert last is not None
    raise JudgeOutputInvalid(f"{last} (after {attempts} attempts)", last.raw)


def _as_read(segment: Any) -> str:
    """The point as the judge reads it alone: a list item after its lead-in."""
    return point_text(_lead_in(segment), segment.text)


def _lead_in(segment: Any) -> str:
    """The words that introduce a list item (segmentation's `context`), or ''."""
    return getattr(segment, "context", "") or ""


def _with_evidence(point: JudgedPoint, case: JudgeCase) -> JudgedPoint:
    """A point without validated citations gets the passages its prompt showed, ranked by relevance."""
    if point.citations:
        return point
    return replace(point, citations=tuple(rank_passages(point.text, case.evidence)), basis="shown")


def _best(logprobs: dict[str, float]) -> tuple[Tag, float]:
    best = max(logprobs, key=lambda label: logprobs[label])
    return Tag(best), math.exp(logprobs[best])


def _count(verdict: JudgeWork, generation: Generation) -> None:
    verdict.prompt_tokens += generation.prompt_tokens
    verdict.evaluated_tokens += generation.evaluated_tokens
    verdict.completion_tokens += generation.completion_tokens


__all__ = ["Cancelled", "JudgeCase", "JudgeUnavailable", "LemajJudge", "Mode", "Tagging"]

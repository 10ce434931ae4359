"""The other papers' rubrics, judged per answer: DeCE (criteria and elements against a gold answer),
the pointwise 0–4 baseline (DeCE C.1–C.3), LCLF-QA coverage, the two-dimensional framework
(truthfulness × reasoning soundness) and SCORE (readability, context utilisation)."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from models.backends.base import JudgeBackend
from models.errors import JudgeOutputInvalid
from models.judge import Cancelled, generate_valid
from models.prompts import PROMPT_VERSION, EvidencePassage, Message, Part, Prompt, evidence_text, fenced, read_prompt
from models.verdict import JudgeWork, load_json


class Rubric(StrEnum):
    LEMAJ = "lemaj"
    DECE = "dece"
    POINTWISE = "pointwise"
    COVERAGE = "coverage"
    TWO_DIMENSIONAL = "two-dimensional"
    SCORE = "score"


POINTWISE_GRADES = ("Irrelevant", "Poor", "Fair", "Good", "Excellent")
POINTWISE_ISSUES = (
    "Incorrect",
    "Misattribution",
    "Missing information",
    "Citation needed",
    "Irrelevant",
    "Wrong jurisdiction",
    "Repetitive",
)
COVERAGE_POINTS = {"COMPLETE": 2, "PARTIAL": 1, "INCORRECT": 0}
TRUTHFULNESS = ("Correct", "Partial", "Wrong", "True Negative", "Missing Answer")
SOUNDNESS = ("Sound", "Inference", "Hallucination", "Incoherent")


@dataclass(frozen=True)
class RubricCase:
    answer_id: str
    question: str
    answer: str
    evidence: list[EvidencePassage]
    gold_answer: str | None = None
    gold_required: str | None = None
    gold_helpful: str | None = None
    generator: str | None = None


@dataclass
class RubricResult(JudgeWork):
    answer_id: str
    rubric: Rubric
    label: str | None = None
    score: float | None = None
    payload: dict[str, Any] = field(default_factory=dict)


def _strings(max_items: int, max_length: int = 400) -> dict[str, Any]:
    return {"type": "array", "maxItems": max_items, "items": {"type": "string", "maxLength": max_length}}


def _binary(max_items: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "scores": {"type": "array", "maxItems": max_items, "items": {"type": "integer", "enum": [0, 1]}},
            "reasoning": _strings(max_items, 300),
        },
        "required": ["scores", "reasoning"],
    }


SCHEMAS: dict[str, dict[str, Any]] = {
    "pointwise": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "maxLength": 600},
            "score": {"type": "integer", "enum": [0, 1, 2, 3, 4]},
            "issues": {"type": "array", "maxItems": 7, "items": {"type": "string", "enum": list(POINTWISE_ISSUES)}},
            "justification": {"type": "string", "maxLength": 400},
        },
        "required": ["reasoning", "score", "issues", "justification"],
    },
    "coverage": {
        "type": "object",
        "properties": {
            "necessary_claims": _strings(8, 300),
            "thought_process": {"type": "string", "maxLength": 600},
            "decision": {"type": "string", "enum": list(COVERAGE_POINTS)},
        },
        "required": ["necessary_claims", "thought_process", "decision"],
    },
    "two-dimensional": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "maxLength": 600},
            "truthfulness": {"type": "string", "enum": list(TRUTHFULNESS)},
            "reasoning_soundness": {"type": "string", "enum": list(SOUNDNESS)},
        },
        "required": ["reasoning", "truthfulness", "reasoning_soundness"],
    },
    "dece_criteria": {"type": "object", "properties": {"gold_criterion": _strings(12)}, "required": ["gold_criterion"]},
    "dece_elements": {"type": "object", "properties": {"model_elements": _strings(16)}, "required": ["model_elements"]},
}


def f_beta(precision: float | None, recall: float | None, beta: float) -> float | None:
    if precision is None or recall is None:
        return None
    if precision == 0 and recall == 0:
        return 0.0
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


def coverage_score(decisions: list[str]) -> float | None:
    """LCLF-QA: (2·Complete + Partial) / (2·N)."""
    if not decisions:
        return None
    return sum(COVERAGE_POINTS[d] for d in decisions) / (2 * len(decisions))


def readability(text: str) -> dict[str, float]:
    """Flesch Reading Ease and Flesch–Kincaid grade (SCORE appendix B.3), syllables from pyphen's
    hyphenation dictionary (textstat would download a pronouncing dictionary at run time)."""
    import re

    import pyphen

    words = re.findall(r"[A-Za-z]+(?:['’][A-Za-z]+)?", text)
    sentences = max(1, len(re.findall(r"[.!?]+(?:\s|$)", text)))
    if not words:
        return {"flesch_reading_ease": 0.0, "flesch_kincaid_grade": 0.0, "words": 0.0}
    dictionary = pyphen.Pyphen(lang="en_US")
    syllables = sum(max(1, len(dictionary.positions(w)) + 1) for w in words)
    asl, asw = len(words) / sentences, syllables / len(words)
    return {
        "flesch_reading_ease": 206.835 - 1.015 * asl - 84.6 * asw,
        "flesch_kincaid_grade": 0.39 * asl + 11.8 * asw - 15.59,
        "words": float(len(words)),
    }


def _strip_number(item: str) -> str:
    head, sep, rest = item.partition(":")
    return rest.strip() if sep and head.strip().isdigit() else item.strip()


class RubricJudge:
    """Judges answers under one answer-level rubric with any backend."""

    def __init__(
        self, backend: JudgeBackend, rubric: Rubric, *, seed: int = 0, max_attempts: int = 3, disputatio: bool = False
    ) -> None:
        if rubric is Rubric.LEMAJ:
            raise ValueError("LeMAJ data points are judged by models.judge.LemajJudge")
        self.backend = backend
        self.rubric = rubric
        self.seed = seed
        self.max_attempts = max_attempts
        self.disputatio = disputatio

    def describe(self) -> dict[str, Any]:
        return {
            **self.backend.describe(),
            "rubric": self.rubric.value,
            "prompt_version": PROMPT_VERSION,
            "seed": self.seed,
            "max_attempts": self.max_attempts,
            "disputatio": self.disputatio,
        }

    def evaluate(self, case: RubricCase, cancel: threading.Event | None = None) -> RubricResult:
        cancel = cancel or threading.Event()
        result = RubricResult(case.answer_id, self.rubric)
        started = time.perf_counter()
        try:
            getattr(self, "_" + self.rubric.value.replace("-", "_"))(case, result, cancel)
        except JudgeOutputInvalid as exc:
            result.failed, result.error, result.raw_output = True, str(exc), exc.raw
        result.seconds = time.perf_counter() - started
        return result

    # ------------------------------------------------------------------ prompts

    def _prompt(self, system: str, case: RubricCase, *, gold: str | None, with_document: bool = True) -> Prompt:
        parts: list[Part] = []
        if with_document:
            parts += [
                Part("The source document, one passage a line:\n"),
                *fenced("DOCUMENT", evidence_text(case.evidence)),
            ]
        parts += [*fenced("QUESTION", case.question)]
        if gold:
            parts += [*fenced("GOLD_ANSWER", gold)]
        parts += [*fenced("ANSWER", case.answer)]
        return Prompt((Message("system", (Part(system),)), Message("user", tuple(parts))))

    def _ask(
        self,
        prompt: Prompt,
        schema: dict[str, Any],
        result: RubricResult,
        cancel: threading.Event,
        *,
        temperature: float = 0.0,
        max_tokens: int = 450,
    ) -> dict[str, Any]:
        return generate_valid(
            self.backend,
            prompt,
            schema,
            max_tokens,
            lambda raw: load_json(raw, schema),
            result,
            cancel,
            attempts=self.max_attempts,
            seed=self.seed,
            temperature=temperature,
        )

    @staticmethod
    def _gold(case: RubricCase) -> str | None:
        parts = []
        if case.gold_required:
            parts.append(f"Required Information:\n{case.gold_required}")
        if case.gold_helpful:
            parts.append(f"Helpful Information:\n{case.gold_helpful}")
        if not parts and case.gold_answer:
            parts.append(case.gold_answer)
        return "\n\n".join(parts) or None

    # ------------------------------------------------------------------ rubrics

    def _pointwise(self, case: RubricCase, result: RubricResult, cancel: threading.Event) -> None:
        value = self._ask(
            self._prompt(read_prompt("pointwise.txt"), case, gold=self._gold(case)),
            SCHEMAS["pointwise"],
            result,
            cancel,
        )
        result.score = float(value["score"])
        result.label = POINTWISE_GRADES[value["score"]]
        result.payload = {
            "issues": sorted(set(value["issues"])),
            "reasoning": value["reasoning"],
            "justification": value["justification"],
        }

    def _coverage(self, case: RubricCase, result: RubricResult, cancel: threading.Event) -> None:
        value = self._ask(
            self._prompt(read_prompt("coverage.txt"), case, gold=self._gold(case)), SCHEMAS["coverage"], result, cancel
        )
        result.label = value["decision"]
        result.score = COVERAGE_POINTS[value["decision"]] / 2
        result.payload = {"necessary_claims": value["necessary_claims"], "thought_process": value["thought_process"]}

    def _two_dimensional(self, case: RubricCase, result: RubricResult, cancel: threading.Event) -> None:
        system = read_prompt("two_dimensional.txt")
        if self.disputatio:
            system += "\n" + read_prompt("two_dimensional_disputatio.txt")
        value = self._ask(self._prompt(system, case, gold=self._gold(case)), SCHEMAS["two-dimensional"], result, cancel)
        result.label = f"{value['truthfulness']} / {value['reasoning_soundness']}"
        result.payload = {
            "truthfulness": value["truthfulness"],
            "reasoning_soundness": value["reasoning_soundness"],
            "reasoning": value["reasoning"],
        }
        model = str(self.backend.describe().get("model", "")).lower()
        if case.generator and case.generator.lower() in model:
            # The paper's self-enhancement control: the judge must not grade its own answers.
            result.payload["bias_warning"] = f"the judge ({model}) is the model that wrote the answer"

    def _dece(self, case: RubricCase, result: RubricResult, cancel: threading.Event) -> None:
        gold = case.gold_required or case.gold_answer
        if not gold:
            raise JudgeOutputInvalid("DeCE needs a gold answer (gold_required or gold_answer); this answer has none")
        no_doc = {"with_document": False}
        # Step 1 (temperature 0.3, DeCE C.5.2): criteria from the Required Information.
        criteria_case = RubricCase(case.answer_id, case.question, "", [], gold_required=gold)
        extracted = self._ask(
            self._prompt(read_prompt("dece_criteria.txt"), criteria_case, gold=gold, **no_doc),
            SCHEMAS["dece_criteria"],
            result,
            cancel,
            temperature=0.3,
        )
        criteria = [_strip_number(c) for c in extracted["gold_criterion"] if _strip_number(c)]
        # Step 3 (temperature 0.3): elements of the answer.
        elements_value = self._ask(
            self._prompt(read_prompt("dece_elements.txt"), case, gold=None, **no_doc),
            SCHEMAS["dece_elements"],
            result,
            cancel,
            temperature=0.3,
        )
        elements = [_strip_number(e) for e in elements_value["model_elements"] if _strip_number(e)]
        satisfied = self._binary_step(
            "dece_evaluate.txt", "CRITERIA", criteria, case.answer, "ANSWER", case, result, cancel
        )
        supported = self._binary_step(
            "dece_verify.txt", "ELEMENTS", elements, gold, "GOLD_ANSWER", case, result, cancel
        )
        recall = sum(satisfied) / len(criteria) if criteria else None
        precision = sum(supported) / len(elements) if elements else None
        result.score = f_beta(precision, recall, 2.0)
        result.payload = {
            "criteria": [
                {"text": c, "satisfied": bool(s), "status": "proposed"}
                for c, s in zip(criteria, satisfied, strict=True)
            ],
            "elements": [{"text": e, "supported": bool(s)} for e, s in zip(elements, supported, strict=True)],
            "recall": recall,
            "precision": precision,
            "f2": result.score,
        }

    def _binary_step(
        self,
        prompt_file: str,
        list_name: str,
        items: list[str],
        against: str,
        against_name: str,
        case: RubricCase,
        result: RubricResult,
        cancel: threading.Event,
    ) -> list[int]:
        """Steps 2 and 4 (temperature 0): one 0/1 per numbered item; a wrong count is invalid output."""
        if not items:
            return []
        numbered = "\n".join(f"{i}: {item}" for i, item in enumerate(items, start=1))
        prompt = Prompt(
            (
                Message("system", (Part(read_prompt(prompt_file)),)),
                Message(
                    "user",
                    (*fenced("QUESTION", case.question), *fenced(list_name, numbered), *fenced(against_name, against)),
                ),
            )
        )
        schema = _binary(len(items))

        def parse(raw: str) -> list[int]:
            value = load_json(raw, schema)
            if len(value["scores"]) != len(items):
                raise JudgeOutputInvalid(f"{len(value['scores'])} scores for {len(items)} items", raw)
            scores: list[int] = value["scores"]
            return scores

        return generate_valid(
            self.backend,
            prompt,
            schema,
            60 + 80 * len(items),
            parse,
            result,
            cancel,
            attempts=self.max_attempts,
            seed=self.seed,
        )

    def _score(self, case: RubricCase, result: RubricResult, cancel: threading.Event) -> None:
        result.payload = readability(case.answer)
        result.label = f"FRE {result.payload['flesch_reading_ease']:.0f}"
        if not case.evidence:
            return

        # Context utilisation (SCORE §3.4): the drop in the answer's length-normalised confidence
        # when each passage is left out, by teacher forcing on the judge's model.
        def confidence(passages: list[EvidencePassage]) -> float | None:
            if cancel.is_set():
                raise Cancelled
            prompt = Prompt(
                (
                    Message(
                        "user",
                        (
                            *fenced("CONTEXT", evidence_text(passages)),
                            *fenced("QUESTION", case.question),
                            Part("Answer the question from the context.\n"),
                        ),
                    ),
                )
            )
            value = self.backend.continuation_logprob(prompt, case.answer)
            return None if value is None else math.exp(value)

        full = confidence(case.evidence)
        if full is None:
            return
        contributions: list[dict[str, Any]] = []
        for passage in case.evidence:
            rest = [p for p in case.evidence if p is not passage]
            without = confidence(rest)
            assert without is not None
            contributions.append(
                {"citation_id": passage.citation_id, "delta": full - without, "relative": (full - without) / full}
            )
        result.score = sum(c["delta"] for c in contributions) / len(contributions)
        measured: dict[str, Any] = {
            "answer_confidence": full,
            "context_utilisation": result.score,
            "relative_context_utilisation": sum(c["relative"] for c in contributions) / len(contributions),
            "passages": sorted(contributions, key=lambda c: -c["delta"]),
        }
        result.payload |= measured

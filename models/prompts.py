"""LeMAJ prompts, built so that llama.cpp can reuse a document's KV cache and contract text stays data.

Order matters for speed: instructions and evidence (constant for a document) come first, then a
constant line, then the question and answer (which vary), then the task. Text from documents and
answers is marked as data (``Part.data``): the local backend tokenizes it without special tokens,
and every backend sees it inside fences whose markers cannot occur in the text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from typing import Any


class Strictness(StrEnum):
    LENIENT = "lenient"
    STANDARD = "standard"
    STRICT = "strict"


@dataclass(frozen=True)
class Part:
    text: str
    data: bool = False  # document or answer text: never instructions, never special tokens
    slot: bool = False  # one-pass tagging: the label logits are read right after this part
    # The end of the whole document, which every prompt about it shares: a local model may keep its
    # state on disk for the next run (not for evidence chosen for one answer: no other prompt shares it).
    document_end: bool = False


@dataclass(frozen=True)
class Message:
    role: str  # system | user
    parts: tuple[Part, ...]

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.parts)


@dataclass(frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    assistant_prefix: str = ""  # what the assistant's reply starts with ("Tag:"), where a backend can prefill
    # One-pass tagging: the reply laid out after the prefix, with label slots (a local model only).
    assistant_parts: tuple[Part, ...] = ()


@dataclass(frozen=True)
class EvidencePassage:
    citation_id: str
    section: str | None
    text: str


def read_prompt(name: str) -> str:
    return resources.files("resources.prompts").joinpath(name).read_text(encoding="utf-8").strip()


PROMPT_FILES = sorted(p.name for p in resources.files("resources.prompts").iterdir() if p.name.endswith(".txt"))
# Recorded with every judge run: a change to any prompt file is a new prompt version.
PROMPT_VERSION = hashlib.sha256("\n".join(read_prompt(n) for n in PROMPT_FILES).encode()).hexdigest()[:12]

_CONTROL = re.compile(r"<\|[^|>\s]{0,40}\|>|</?s>|\[/?INST\]")


def neutralise(text: str) -> str:
    """Data text with fence markers and chat control sequences broken up, so it stays data."""
    text = text.replace("<<<", "< <<").replace(">>>", ">> >")
    return _CONTROL.sub(lambda m: m.group(0).replace("<", "< ").replace("[", "[ "), text)


def fenced(name: str, text: str) -> tuple[Part, ...]:
    return (Part(f"<<<{name}\n"), Part(neutralise(text), data=True), Part(f"\n{name}>>>\n"))


def system_message(strictness: Strictness) -> Message:
    levels = dict(line.split(": ", 1) for line in read_prompt("strictness.txt").splitlines())
    return Message("system", (Part(read_prompt("lemaj_system.txt").replace("{strictness}", levels[strictness.value])),))


def evidence_text(passages: list[EvidencePassage]) -> str:
    return "\n".join(f"[{p.citation_id}]{_where(p.section)} {p.text}" for p in passages)


def document_parts(evidence: list[EvidencePassage], whole_document: bool = False) -> tuple[Part, ...]:
    """What every prompt about a document starts with: the part a local model keeps cached."""
    return (
        Part("The document, one passage a line, each with its citation id:\n"),
        *fenced("DOCUMENT", evidence_text(evidence)),
        Part(CASE_LINE, document_end=whole_document),  # constant: a stable token boundary
    )


CASE_LINE = "The question and the answer to evaluate follow.\n"


def case_parts(
    evidence: list[EvidencePassage], question: str, answer: str, whole_document: bool = False
) -> tuple[Part, ...]:
    """The user message up to the task: evidence first (reused across a document's answers)."""
    return (*document_parts(evidence, whole_document), *fenced("QUESTION", question), *fenced("ANSWER", answer))


def point_text(context: str, text: str) -> str:
    """A data point as the judge reads it: its lead-in first, so a list item is judged in its context."""
    return f"{context.strip()} {text}" if context.strip() else text


def one_pass_prompt(
    evidence: list[EvidencePassage], question: str, answer: str, strictness: Strictness, whole_document: bool = False
) -> Prompt:
    parts = case_parts(evidence, question, answer, whole_document)
    user = Message("user", (*parts, Part(read_prompt("lemaj_one_pass.txt"))))
    return Prompt((system_message(strictness), user))


def tag_prompt(
    evidence: list[EvidencePassage],
    question: str,
    answer: str,
    point: str,
    strictness: Strictness,
    whole_document: bool = False,
) -> Prompt:
    """Two-stage tagging: the next token after 'Tag:' is read, not sampled."""
    user = Message(
        "user",
        (
            *case_parts(evidence, question, answer, whole_document),
            Part(read_prompt("lemaj_tag.txt") + "\n"),
            *fenced("DATA_POINT", point),
        ),
    )
    return Prompt((system_message(strictness), user), assistant_prefix="Tag:")


def tag_all_prompt(
    evidence: list[EvidencePassage],
    question: str,
    points: Sequence[tuple[str, str]],
    strictness: Strictness,
    whole_document: bool = False,
) -> Prompt:
    """One-pass tagging: the answer laid out once, point by point, with a label slot after each.

    `points` are (lead-in, text) pairs. A list's lead-in is laid out once, before its first item, as
    the answer has it (repeated before every item it cost a quarter of an answer's tokens). Same
    cached prefix as tag_prompt; the answer is not repeated before its points. Attention is causal,
    so each slot's label depends only on what precedes it (its lead-in included), as a reader's would.
    """
    user = Message(
        "user",
        (
            *document_parts(evidence, whole_document),
            *fenced("QUESTION", question),
            Part(read_prompt("lemaj_tag_all.txt")),
        ),
    )
    reply: list[Part] = []
    shown_lead_in = ""
    for lead_in, text in points:  # six tokens of layout a point: the answer's own tokens dominate the cost
        if lead_in.strip() and lead_in.strip() != shown_lead_in:
            reply += [Part(_one_line(lead_in), data=True), Part("\n")]
        shown_lead_in = lead_in.strip()
        reply += [Part("- "), Part(_one_line(text), data=True), Part("\nTag:", slot=True), Part("\n")]
    return Prompt((system_message(strictness), user), assistant_parts=tuple(reply[:-1]))


def _one_line(point: str) -> str:
    """A point's words on one line, so the answer cannot lay out a forged "Tag:" line of its own."""
    return " ".join(neutralise(point).split())


def missing_prompt(
    evidence: list[EvidencePassage], question: str, answer: str, strictness: Strictness, whole_document: bool = False
) -> Prompt:
    parts = case_parts(evidence, question, answer, whole_document)
    user = Message("user", (*parts, Part(read_prompt("lemaj_missing.txt"))))
    return Prompt((system_message(strictness), user))


LABELS = ("correct", "incorrect", "irrelevant")  # what a data point of the answer can be tagged


def one_pass_schema(max_points: int = 24) -> dict[str, Any]:
    """Bounded (maxItems, maxLength): an unbounded grammar lets a small model loop to max_tokens."""
    return {
        "type": "object",
        "properties": {
            "data_points": {
                "type": "array",
                "maxItems": max_points,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "minLength": 1, "maxLength": 600},
                        "tag": {"type": "string", "enum": ["correct", "incorrect", "irrelevant", "missing"]},
                        "citations": {
                            "type": "array",
                            "maxItems": 5,
                            "items": {"type": "string", "maxLength": 24},
                        },
                        "rationale": {"type": "string", "maxLength": 300},
                    },
                    "required": ["text", "tag", "citations", "rationale"],
                },
            }
        },
        "required": ["data_points"],
    }


def missing_schema(max_points: int = 3) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "missing": {
                "type": "array",
                "maxItems": max_points,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "minLength": 1, "maxLength": 400},
                        "citations": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 24}},
                        "rationale": {"type": "string", "maxLength": 300},
                    },
                    "required": ["text", "citations", "rationale"],
                },
            }
        },
        "required": ["missing"],
    }


def _where(section: str | None) -> str:
    """' (section 6.01(a))', or ' (lines 4:12-15)' for a transcript passage."""
    if not section:
        return ""
    return f" (lines {section})" if ":" in section else f" (section {section})"

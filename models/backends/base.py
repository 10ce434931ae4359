"""What every judge backend offers: constrained generation, and label log-probabilities where it can."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from models.prompts import Prompt


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    evaluated_tokens: int  # prompt tokens actually computed: the rest came from the KV cache
    completion_tokens: int


@dataclass(frozen=True)
class LabelScores:
    logprobs: dict[str, float]  # label -> log-probability, normalised over the labels
    prompt_tokens: int
    evaluated_tokens: int


@dataclass(frozen=True)
class SlotScores:
    """One-pass tagging: the labels' log-probabilities at each slot of a prompt, in order."""

    logprobs: list[dict[str, float]]
    prompt_tokens: int
    evaluated_tokens: int


class JudgeBackend(Protocol):
    """A model the judge can ask. Implementations raise only models.errors types.

    A backend that can read logits at several positions of one prompt (the local one) also offers
    `slot_label_scores(prompt, labels) -> SlotScores`; API servers return logits for the reply only.
    """

    context_tokens: int

    def describe(self) -> dict[str, Any]:
        """The configuration a run records (backend, model, file hash, parameters)."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def generate(
        self, prompt: Prompt, *, schema: dict[str, Any], max_tokens: int, temperature: float, seed: int
    ) -> Generation:
        """A reply constrained to the JSON schema where the backend can, validated by the caller anyway."""
        ...

    def label_scores(self, prompt: Prompt, labels: Sequence[str]) -> LabelScores | None:
        """Log-probabilities of each label as the reply's next token; None when the backend has none."""
        ...

    def continuation_logprob(self, prompt: Prompt, continuation: str) -> float | None:
        """Mean log-probability of a given text after the prompt (teacher forcing); None where the
        backend cannot score text."""
        ...

    def reset_cache(self) -> None:
        """Forget any reused prompt prefix (benchmarks compare with and without reuse)."""
        ...

    def close(self) -> None:
        """Release the connection or the model; the backend is not used afterwards."""
        ...

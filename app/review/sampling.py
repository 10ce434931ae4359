"""Review a random sample: answers drawn uniformly at random, seeded and recorded, so that the reviews of
them give unbiased figures (triage bounds, prediction-powered estimates).

Each draw takes from the answers no earlier draw took, so all draws together remain one uniform
sample without replacement. The seed, the size and who drew are kept with the draw and in the audit
log: anyone can redraw the same answers from the same project.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import numpy as np

from app.errors import AssayError
from app.project import Project
from storage import audit, statistics


@dataclass(frozen=True, kw_only=True)
class Draw:
    number: int
    seed: int
    population: int  # answers it drew from
    answer_ids: list[str]


def draw_sample(project: Project, size: int, seed: int | None = None, actor: str = "assay") -> Draw:
    """Draw `size` answers uniformly at random from those not drawn before, and record the draw."""
    if size < 1:
        raise AssayError("a random sample needs at least one answer")
    seed = secrets.randbelow(2**31) if seed is None else seed
    with project.sessions.begin() as session:
        taken = statistics.sampled_answers(session)
        remaining = [a for a in statistics.answer_ids(session) if a not in taken]
        if not remaining:
            raise AssayError("every answer of the project is already in the random sample")
        size = min(size, len(remaining))
        chosen = sorted(np.random.default_rng(seed).choice(remaining, size=size, replace=False).tolist())
        number = statistics.add_sampled(session, chosen, seed, len(remaining), actor)
        audit.append_audit(
            session,
            actor,
            "sample.drawn",
            "sample",
            str(number),
            {"seed": seed, "size": size, "population": len(remaining), "answers": chosen},
        )
    return Draw(number=number, seed=seed, population=len(remaining), answer_ids=chosen)


def sampled_answers(project: Project) -> dict[str, int]:
    """Answers in the random sample, with their draw's number."""
    with project.sessions() as session:
        return statistics.sampled_answers(session)

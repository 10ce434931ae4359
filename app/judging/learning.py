"""Learning from a project's reviews: the claim checker's fast parts refitted on its people's tags, adopted
only where they beat the shipped checker held out (models/checker/learning.py says what, and the test).

`fit_checker` reads the people's tags of a scope (one matter, or the unassigned answers: never across a
wall), runs the shipped engine once over the answers they tag, noting what it computed of each point, fits
the head held out by document beside the shipped checker, and adopts the refit only where it is better.
Every fit, adoption and reset is an audit entry; the adopted model is kept in the project (its matter's
setting, storage/learned_checker.py) and pinned by its SHA-256, refused when altered (app/judging/fitted.py,
which app/judging/verification.Verifier asks which checker speaks for each document).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from app.errors import InvalidInput
from app.judging.fitted import SHIPPED, pinned
from app.judging.verification import Verifier
from app.project import Project
from models.checker.adoption import Standing, standing
from models.checker.learning import CheckerHead, Observation, sha256_of, speaking
from models.checker.report import finding_at
from models.vocabulary import Tag
from storage import learned_checker as store
from storage.matters import Matter


@dataclass(frozen=True)
class FitResult:
    scope: str  # "the project" or the matter's label
    points: int
    answers: int
    standing: Standing | None  # None: too few tags to try
    sha256: str | None  # the adopted model's, when adopted
    seconds: float
    card: dict[str, Any]

    @property
    def adopted(self) -> bool:
        return self.standing is not None and self.standing.adopted


def _scope(matter: Matter | None) -> tuple[int | None, str]:
    return (None, "the project") if matter is None else (matter.id, f"matter {matter.label}")


def labelled(session: Session, matter_id: int | None) -> dict[str, list[tuple[int, int, bool, str, int]]]:
    """Per answer, its points the people tagged right or wrong: (start, end, wrong, document, document id); a
    point the people disagree on evenly is left out."""
    votes: dict[tuple[str, int, int], Counter[str]] = {}
    where: dict[str, tuple[str, int]] = {}
    for t in store.human_tags(session, matter_id):
        if t.tag in (Tag.CORRECT.value, Tag.INCORRECT.value):
            votes.setdefault((t.answer_id, t.start, t.end), Counter())[t.tag] += 1
            where[t.answer_id] = (t.document, t.document_id)
    out: dict[str, list[tuple[int, int, bool, str, int]]] = {}
    for (answer_id, start, end), count in votes.items():
        if count[Tag.CORRECT.value] != count[Tag.INCORRECT.value]:
            wrong = count[Tag.INCORRECT.value] > count[Tag.CORRECT.value]
            out.setdefault(answer_id, []).append((start, end, wrong, *where[answer_id]))
    return out


def observe(
    verifier: Verifier,
    tagged: dict[str, list[tuple[int, int, bool, str, int]]],
    *,
    on_progress: Callable[[int, int], None] = lambda _d, _t: None,
    cancel: threading.Event | None = None,
) -> tuple[list[Observation], list[bool], list[str]]:
    """The shipped engine run over the tagged answers: what it computed of each tagged point, its tag, and
    its answer."""
    spoken, notes = speaking(verifier.engine)
    shipped_engine, verifier.engine = verifier.engine, spoken
    points: list[Observation] = []
    labels: list[bool] = []
    answers: list[str] = []
    try:
        for done, (answer_id, spans) in enumerate(sorted(tagged.items()), start=1):
            if cancel is not None and cancel.is_set():
                break
            notes.clear()
            with verifier.sessions() as session:
                report = verifier.verify_answer(session, answer_id)
            for start, end, wrong, document, _ in spans:
                point = finding_at(report, start, end)
                seen = notes.by_claim.get(point.text) if point is not None else None
                if point is None or seen is None:
                    continue  # too few words to check ("Yes."): the checker never speaks of it
                points.append(replace(seen, document=document, shipped=point.verdict))
                labels.append(wrong)
                answers.append(answer_id)
            on_progress(done, len(tagged))
    finally:
        verifier.engine = shipped_engine
    return points, labels, answers


def fit_checker(
    project: Project,
    matter: Matter | None,
    actor: str,
    *,
    on_progress: Callable[[int, int], None] = lambda _d, _t: None,
    cancel: threading.Event | None = None,
    seed: int = 0,
    neural: bool = True,
) -> FitResult:
    """Fit the checker to the scope's tags, measure it held out beside the shipped one, adopt it if better
    (`neural=False`: over the engine that finds evidence by words only, which it then speaks for alone)."""
    started = time.perf_counter()
    matter_id, scope = _scope(matter)
    with project.sessions() as session:
        tagged = labelled(session, matter_id)
    if not tagged:
        raise InvalidInput(
            "checker fit", f"no person has tagged a point of {scope} (review answers, or assay import-labels)"
        )
    verifier = Verifier(project.sessions, learned=False, neural=neural)
    total = len(tagged) + 1
    points, labels, _ = observe(verifier, tagged, on_progress=lambda d, _t: on_progress(d, total), cancel=cancel)
    if cancel is not None and cancel.is_set():
        raise InvalidInput("checker fit", "cancelled: nothing was fitted or changed")
    result = standing(points, labels, seed=seed)
    head = CheckerHead(seed=seed).fit(points, labels) if result.adopted else None
    neural = verifier.engine.encoders is not None and verifier.engine.whole_cascade
    card: dict[str, Any] = {
        "scope": scope,
        "points": len(points),
        "wrong": int(sum(labels)),
        "answers": len(tagged),
        "documents": len({o.document for o in points}),
        "neural": neural,
        "held_out": result.as_dict(),
    }
    model = sha = None
    if head is not None:
        head.card_ = head.card_ | card
        model = head.to_json()
        sha = sha256_of(model)
    seconds = time.perf_counter() - started
    summary = card | {"seconds": round(seconds, 1), "adopted": head is not None, "sha256": sha}
    with project.sessions.begin() as session:
        store.record_fit(session, matter_id, actor, summary)
        if model is not None and sha is not None:
            store.adopt(session, matter_id, actor, model, sha, {"held_out": result.as_dict(), "points": len(points)})
    on_progress(total, total)
    return FitResult(scope, len(points), len(tagged), result, sha, seconds, card)


def show_checker(project: Project, matter: Matter | None) -> dict[str, Any]:
    """Which checker speaks for the scope, and the last fit's standing beside the shipped checker's."""
    matter_id, scope = _scope(matter)
    with project.sessions() as session:
        fitted = store.stored(session, matter_id)
        fit = store.last_fit(session, matter_id)
        head = pinned(session, matter_id)
    return {
        "scope": scope,
        "speaks": SHIPPED if fitted is None else f"fitted {fitted['sha256'][:12]}",
        "sha256": None if fitted is None else fitted["sha256"],
        "card": None if head is None else head.card_,
        "last_fit": fit,
    }


def reset_checker(project: Project, matter: Matter | None, actor: str) -> str | None:
    """The shipped checker speaks for the scope again (audited); the SHA-256 of the model set aside."""
    matter_id, _ = _scope(matter)
    with project.sessions.begin() as session:
        return store.reset(session, matter_id, actor)

"""Reviewer qualification: answers whose truth is known (gold) mixed, unannounced, into a reviewer's
queue at a set share, each reviewer's agreement with gold for the project lead, and an optional
training mode that shows the gold tag and its reason once an answer is submitted.

Gold is the consensus of an adjudicated answer (app/review/adjudication.py) or, elsewhere, the
labels of a rater the lead names as gold (imported labels, e.g. a firm's reference annotations).
A reviewer is never measured on gold they helped make (a dispute they were a party to).

Agreement with gold is over the gold data points of the answers the reviewer submitted: Cohen's
kappa (scikit-learn's cohen_kappa_score) on the points both tagged, with a 95 % percentile bootstrap
interval that resamples answers (points of one answer are not independent; 2,000 resamples, seed
0); and per gold tag, recall (the share of gold points of that tag the reviewer gave that tag, a
gold point they have no record of counting as missed) with its 95 % Wilson interval, and n.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from app.errors import AssayError
from app.project import Project
from app.raters import NotAReviewer, human_named
from app.review.adjudication import GOLD_RATERS, gold_raters
from models.vocabulary import ReviewStatus, Tag
from storage import adjudication as store
from storage import audit, raters, reviews
from storage.reviews import QueueRow

GOLD_SHARE = "qualification.gold_share"  # None: no gold is mixed in (the queue is every answer)
TRAINING = "qualification.training"
SEED = "qualification.seed"
BOOTSTRAP = 2000
TAGS = [t.value for t in Tag]


@dataclass(frozen=True, kw_only=True)
class QualificationSettings:
    gold_share: float | None
    training: bool
    gold_raters: list[str]
    seed: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "gold_share": self.gold_share,
            "training": self.training,
            "gold_raters": self.gold_raters,
            "seed": self.seed,
        }


@dataclass(frozen=True, kw_only=True)
class GoldTag:
    tag: Tag
    reason: str | None  # the consensus's rationale (who decided, why) or the gold rater's
    text: str


def qualification_settings(project: Project) -> QualificationSettings:
    with project.sessions() as session:
        return _settings(session)


def _settings(session: Session) -> QualificationSettings:
    share = reviews.setting(session, GOLD_SHARE)
    return QualificationSettings(
        gold_share=None if share is None else float(share),
        training=bool(reviews.setting(session, TRAINING, False)),
        gold_raters=gold_raters(session),
        seed=int(reviews.setting(session, SEED, 0)),
    )


def configure(
    project: Project,
    actor: str,
    *,
    gold_share: float | str | None = "keep",
    training: bool | None = None,
    gold: list[str] | None = None,
    seed: int | None = None,
) -> QualificationSettings:
    """Change the qualification settings given (gold_share None: mix no gold in), audited."""
    if isinstance(gold_share, float | int) and not 0 <= gold_share < 1:
        raise AssayError(f"the gold share is a number from 0 up to (not including) 1, not {gold_share}")
    with project.sessions.begin() as session:
        if gold is not None:
            gold = sorted({g.strip() for g in gold if g.strip()})
            for name in gold:
                refusal = f"no human rater named {name!r} to take as gold (see `assay info` and `show`)"
                try:
                    human_named(session, name)
                except NotAReviewer:
                    raise AssayError(refusal) from None
                if name == store.CONSENSUS:  # a human rater in storage, but written only by adjudication
                    raise AssayError(refusal)
            reviews.set_setting(session, GOLD_RATERS, gold)
        if gold_share != "keep":
            reviews.set_setting(session, GOLD_SHARE, gold_share)
        if training is not None:
            reviews.set_setting(session, TRAINING, training)
        if seed is not None:
            reviews.set_setting(session, SEED, seed)
        changed = _settings(session)
        audit.append_audit(session, actor, "project.qualification", "project", "-", changed.as_dict())
    return changed


# ---------------------------------------------------------------- gold


def _gold(session: Session) -> tuple[dict[str, dict[str, GoldTag]], dict[str, set[str]]]:
    """Per gold answer, its gold tag by data point (identity key); and who made each answer's gold
    (the reviewers adjudicated between, or the gold rater)."""
    settled = store.consensus_answers(session)
    named = gold_raters(session)
    ids = {r.name: r.id for r in raters.raters(session) if r.name in named or r.name == store.CONSENSUS}
    consensus = ids.get(store.CONSENSUS)
    gold_ids = {ids[n]: n for n in named if n in ids}
    makers: dict[str, set[str]] = {}
    for decision in store.decisions(session):
        makers.setdefault(decision.answer_id, set()).update(decision.reviewers)
    gold: dict[str, dict[str, GoldTag]] = {}
    wanted = list(ids.values())
    if not wanted:
        return gold, makers
    answers = settled | store.answers_labelled_by(session, gold_ids)
    rows = store.labels_by_key(session, answers, wanted)
    for answer, rater_id, key, tag, rationale, comment, text in rows:
        from_consensus = rater_id == consensus
        if key is None or (answer in settled) != from_consensus:
            continue  # where a consensus exists it is the gold, else the gold rater's labels
        gold.setdefault(answer, {}).setdefault(key, GoldTag(tag=Tag(tag), reason=rationale or comment, text=text))
        if not from_consensus:
            makers.setdefault(answer, set()).add(gold_ids[rater_id])
    return gold, makers


def _stable(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def mixed_queue(project: Project, reviewer: str, rows: list[QueueRow]) -> list[QueueRow]:
    """A reviewer's queue with gold answers mixed in at the set share, unannounced: their own work
    (the answers assigned to them, or every answer without gold) with as many gold answers they had
    no part in making as make `share` of the whole, at places drawn at random. Draws are seeded by the
    project's seed and the reviewer's name: the same queue each time it is read. Without a share
    set, the rows are returned as they are."""
    with project.sessions() as session:
        config = _settings(session)
        if config.gold_share is None:
            return rows
        gold, makers = _gold(session)
        plan = reviews.setting(session, "assignments", {}) or {}
        rows = _unannounced_rows(session, rows, set(gold), makers)
    assigned = {answer for answer, names in plan.items() if reviewer in names}
    mine = {a for a, names in makers.items() if reviewer in names}  # their own reviewed work stays theirs
    work = [r for r in rows if (r.id not in gold or r.id in mine) and (not assigned or r.id in assigned)]
    pool = [r for r in rows if r.id in gold and r.id not in mine]
    share = config.gold_share
    count = min(len(pool), round(share / (1 - share) * len(work)))
    rng = np.random.default_rng([config.seed, _stable(reviewer)])
    chosen = [pool[i] for i in sorted(rng.choice(len(pool), size=count, replace=False).tolist())]
    places = set(rng.choice(len(work) + count, size=count, replace=False).tolist())
    mixed, gold_rows, work_rows = [], iter(chosen), iter(work)
    for place in range(len(work) + count):
        mixed.append(next(gold_rows) if place in places else next(work_rows))
    return mixed


def _unannounced_rows(
    session: Session, rows: list[QueueRow], gold: set[str], makers: dict[str, set[str]]
) -> list[QueueRow]:
    """The rows with a gold answer's review count leaving out the reviews that made its gold (else
    "3 reviews submitted" would announce it)."""
    counted = store.submitted_reviewers(session, [r.id for r in rows if r.id in gold])
    return [
        replace(row, reviewers_done=sum(name not in makers.get(row.id, ()) for _, name in counted.get(row.id, [])))
        if row.id in gold
        else row
        for row in rows
    ]


def queue_row(project: Project, row: QueueRow) -> QueueRow:
    """One row of a reviewer's queue as `mixed_queue` shows it."""
    with project.sessions() as session:
        if reviews.setting(session, GOLD_SHARE) is None:
            return row
        gold, makers = _gold(session)
        return _unannounced_rows(session, [row], set(gold), makers)[0]


def unannounced(session: Session, answer_id: str) -> bool:
    """Whether, in this project, the answer is a gold item of a qualification queue: then the other
    humans' tags (the gold among them) stay hidden from a reviewer until they submit."""
    if reviews.setting(session, GOLD_SHARE) is None:
        return False
    if answer_id in store.consensus_answers(session):
        return True
    named = gold_raters(session)
    ids = [r.id for r in raters.raters(session) if r.name in named]
    return bool(ids) and answer_id in store.answers_labelled_by(session, ids)


def training_feedback(project: Project, reviewer: str, answer_id: str) -> list[dict[str, Any]] | None:
    """In training mode, once the reviewer submitted a gold answer: each gold point with its tag and
    reason beside the reviewer's tag. None when training is off, the answer is no gold for them, or
    their review is not submitted."""
    with project.sessions() as session:
        if not reviews.setting(session, TRAINING, False):
            return None
        rater = raters.rater_named(session, reviewer)
        if rater is None or reviews.review(session, answer_id, rater.id).status is not ReviewStatus.SUBMITTED:
            return None
        gold, makers = _gold(session)
        if answer_id not in gold or reviewer in makers.get(answer_id, set()):
            return None
        theirs = {key: tag for _, _, key, tag, *_ in store.labels_by_key(session, [answer_id], [rater.id])}
    return [
        {
            "text": g.text,
            "gold": g.tag.value,
            "reason": g.reason,
            "yours": theirs.get(key),
        }
        for key, g in gold[answer_id].items()
    ]


# ---------------------------------------------------------------- agreement with gold


def _kappa(gold: np.ndarray, theirs: np.ndarray) -> float | None:
    """Cohen's kappa of two label-code arrays, as scikit-learn's cohen_kappa_score computes it (None
    where it is undefined: both raters used one and the same tag throughout)."""
    q = len(TAGS)
    confusion = np.bincount(gold * q + theirs, minlength=q * q).reshape(q, q).astype(float)
    n = confusion.sum()
    if n == 0:
        return None
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / n
    disagree = 1 - np.eye(q)
    denominator = (disagree * expected).sum()
    return None if denominator == 0 else float(1 - (disagree * confusion).sum() / denominator)


def sklearn_kappa(gold: list[str], theirs: list[str]) -> float | None:
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(cohen_kappa_score(gold, theirs, labels=TAGS))
    return None if np.isnan(value) else value


def _wilson(k: int, n: int) -> list[float] | None:
    if n == 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return [float(low), float(high)]


def reviewer_pairs(project: Project) -> dict[str, list[tuple[str, str, str | None]]]:
    """Per reviewer, (answer, gold tag, their tag or None) for every gold point of every gold answer
    they submitted a review of and had no part in making."""
    with project.sessions() as session:
        gold, makers = _gold(session)
        left_out = {store.CONSENSUS, *gold_raters(session)}
        reviewed = store.submitted_reviewers(session, list(gold))
        people = {rid: name for pairs in reviewed.values() for rid, name in pairs if name not in left_out}
        theirs = {
            (answer, rater_id, key): tag
            for answer, rater_id, key, tag, *_ in store.labels_by_key(session, list(gold), list(people))
        }
    out: dict[str, list[tuple[str, str, str | None]]] = {}
    for answer, pairs in sorted(reviewed.items()):
        for rater_id, name in pairs:
            if rater_id not in people or name in makers.get(answer, set()):
                continue
            out.setdefault(name, []).extend(
                (answer, g.tag.value, theirs.get((answer, rater_id, key))) for key, g in gold[answer].items()
            )
    return out


def agreement_with_gold(project: Project) -> list[dict[str, Any]]:
    """Each reviewer's agreement with gold: kappa with its bootstrap interval and n, and per gold tag
    the recall with its Wilson interval and n (the module's docstring says how)."""
    results = []
    for reviewer, rows in sorted(reviewer_pairs(project).items()):
        paired = [(a, g, t) for a, g, t in rows if t is not None]
        kappa = sklearn_kappa([g for _, g, _ in paired], [t for _, _, t in paired]) if paired else None
        recall = {}
        for tag in TAGS:
            of_tag = [t for _, g, t in rows if g == tag]
            if of_tag:
                hits = sum(t == tag for t in of_tag)
                recall[tag] = {"recall": hits / len(of_tag), "ci": _wilson(hits, len(of_tag)), "n": len(of_tag)}
        results.append(
            {
                "reviewer": reviewer,
                "answers": len({a for a, _, _ in rows}),
                "gold_points": len(rows),
                "n": len(paired),
                "kappa": kappa,
                "kappa_ci": _bootstrap_kappa(paired) if kappa is not None else None,
                "recall": recall,
            }
        )
    return results


def _bootstrap_kappa(paired: list[tuple[str, str, str]]) -> list[float] | None:
    """95 % percentile interval of kappa over answers resampled with replacement (seed 0)."""
    index = {t: n for n, t in enumerate(TAGS)}
    answers = sorted({a for a, _, _ in paired})
    if len(answers) < 2:
        return None
    by_answer: dict[str, tuple[list[int], list[int]]] = {a: ([], []) for a in answers}
    for a, g, t in paired:
        by_answer[a][0].append(index[g])
        by_answer[a][1].append(index[t])
    gold = [np.array(by_answer[a][0]) for a in answers]
    theirs = [np.array(by_answer[a][1]) for a in answers]
    rng = np.random.default_rng(0)
    values = []
    for draw in rng.integers(0, len(answers), size=(BOOTSTRAP, len(answers))):
        value = _kappa(np.concatenate([gold[i] for i in draw]), np.concatenate([theirs[i] for i in draw]))
        if value is not None:
            values.append(value)
    if not values:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return [float(low), float(high)]

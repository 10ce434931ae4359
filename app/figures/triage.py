"""LeMAJ triage with a miss rate a firm can sign: which answers the judge clears, and an exact upper
bound on how many bad answers that lets through. "The judge" is the project's default rater
(app/raters.py), named in the result (`rater`); an answer with a point it left undecided (the verifier
where it neither confirms nor refutes) is never cleared.

The miss rate of a rule is P(a reviewer finds an incorrect or missing point | the rule clears the
answer). Only reviews of answers drawn at random (`assay sample`, or imported with "sampled": true)
measure it: reviews of answers someone picked are left out, and the result says how many.

Recommending a rule for a target uses fixed-sequence testing (Learn then Test): the rules of the
sweep are ordered by how many answers they clear — computed from the judge alone, before any review
is looked at — and tested strictest first with the one-sided 95 % Clopper–Pearson bound; testing
stops at the first rule whose bound exceeds the target. Every rule that passed is safe with 95 %
confidence jointly, so picking the loosest of them keeps the guarantee. We chose this over a
calibration/test split because it uses every random review for the bound; a split is used only when
the rule also asks for a confidence floor, since the confidences are calibrated on reviews and must
not be tested on the same ones (the test half is fixed by a hash of the answer id).

The bound over answers is exact because the sample is drawn uniformly from this project's answers.
Answers about one contract are correlated, so a Korn–Graubard bound with the document as the
sampling unit is reported beside it: it is the one to read when the figure is carried over to
contracts not yet in the project. It is approximate (with strongly clustered misses it held for new
contracts in 93 % of simulated projects, the bound over answers in 87 %: tests/test_statistics.py).
The recommendation uses the bound over answers.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from app.figures import calibration, columnar
from app.figures.guarantees import (
    DELTA,
    clustered_upper,
    cp_upper,
    fixed_sequence,
    loosest_passing,
    more_reviews_needed,
)
from app.project import Project
from app.raters import default_rater
from storage import adjudication, analytics, collector, columns, scoring, statistics

SWEEP = [(c, r / 20) for c in (1.0, 0.75, 0.5) for r in range(20, 9, -1)]


def test_half(answer_id: str) -> bool:
    """A fixed half of the answers, independent of any label: where a calibrated rule is tested."""
    return hashlib.sha256(answer_id.encode()).digest()[0] % 2 == 0


@collector.held_off()  # rows by the hundred thousand (storage/collector.py)
def triage(
    project: Project,
    min_correctness: float = 1.0,
    min_relevance: float = 0.8,
    *,
    min_confidence: float | None = None,
    target_miss_rate: float | None = None,
    minutes_per_answer: float | None = None,
) -> dict[str, Any]:
    """Cleared and flagged answers under LeMAJ's rule (judge correctness and relevance at least the
    thresholds and, if asked, every judge tag's calibrated confidence at least `min_confidence`),
    each rule's miss rate with its bounds, and the rule recommended for a target miss rate."""
    with project.sessions() as session:
        table = scoring.score_table(session)
        rater = default_rater(session, table)  # the judge that speaks for the project (app/raters.py)
        judges = statistics.judged_by(session, rater.name) if rater else {}
        undecided: dict[str, int] = {}  # its points left untagged, from the label columns (a query: 1 s at 1 M)
        if rater is not None:
            undecided = columnar.untagged(columns.labels(session, [rater.rater_id], creators=True), rater.rater_id)
        settled = adjudication.consensus_answers(session)  # adjudicated: its consensus is the review
        reviews = adjudication.prefer_consensus(
            analytics.submitted_by_humans(session), lambda r: r[0], lambda r: r[1], settled
        )
        sampled = statistics.sampled_answers(session)
        document_of = scoring.answer_keys(session, "document")
    all_answers = sorted(document_of)
    calibrated_test = min_confidence is not None
    tested = {a for a in sampled if test_half(a)} if calibrated_test else set(sampled)
    certainty = calibration.calibrate(project, exclude=tested)[1] if calibrated_test else {}

    # Each (answer, rater) pair's row of the table, found by numbers in a grid of answers by raters (-1:
    # none): 600,000 look-ups of (answer, name) tuples in a dict took 0.2 s at 100,000 answers.
    answer_index = {a: n for n, a in enumerate(table.answers)}
    rater_code = {name: n for n, name in enumerate(dict.fromkeys(table.raters))}
    pair_at = np.full((len(table.answers) + 1, len(rater_code) + 1), -1, dtype=np.int64)
    pair_at[table.answer, np.array([rater_code[r] for r in table.raters], dtype=np.int64)] = np.arange(len(table))

    judged = sorted(judges)
    judged_index = np.array([answer_index.get(a, -1) for a in judged], dtype=np.int64)
    judge_pairs = pair_at[judged_index, rater_code.get(rater.name, -1) if rater else -1]  # the one rater's answers
    correctness, relevance = (np.append(figure, np.nan)[judge_pairs] for figure in (table.correctness, table.f1))
    if certainty:
        confident = np.array([c if (c := certainty.get(a)) is not None else -1.0 for a in judged])
    else:
        confident = np.full(len(judged), -1.0)
    # no point left unconfirmed (`untagged` lists only answers with one)
    decided = (
        np.array([not undecided.get(a, 0) for a in judged], dtype=bool) if undecided else np.ones(len(judged), bool)
    )

    # A reviewed answer: a human submitted a review of it and tagged in it; missed: one found an
    # incorrect or missing point there.
    human_pair = np.zeros(len(table), dtype=bool)
    at = pair_at[
        np.array([answer_index.get(a, -1) for a, _, _ in reviews], dtype=np.int64),
        np.array([rater_code.get(r, -1) for _, r, _ in reviews], dtype=np.int64),
    ]
    human_pair[at[at >= 0]] = True
    errors = (table.counts[:, 1] + table.counts[:, 3]) > 0
    reviewed_index = np.bincount(table.answer[human_pair], minlength=len(table.answers)) > 0
    missed_index = np.bincount(table.answer[human_pair & errors], minlength=len(table.answers)) > 0
    reviewed = np.append(reviewed_index, False)[judged_index]
    missed = np.append(missed_index, False)[judged_index]
    reviewed_count = int(reviewed_index.sum())
    used = sorted(a for a in tested if (n := answer_index.get(a)) is not None and reviewed_index[n])
    tested_mark = np.zeros(len(table.answers) + 1, dtype=bool)
    tested_mark[np.array([answer_index.get(a, -1) for a in tested], dtype=np.int64)] = True
    tested_mark[-1] = False  # the place of answers with no label
    is_used = reviewed & tested_mark[judged_index]
    documents = np.array([document_of[a] for a in judged], dtype=object)
    seconds = [s for _, _, s in reviews if s]
    hours = (
        minutes_per_answer / 60 if minutes_per_answer is not None else (np.mean(seconds) / 3600 if seconds else None)
    )

    def cleared_mask(min_c: float, min_r: float) -> np.ndarray:
        mask = (correctness >= min_c) & (relevance >= min_r) & decided
        return mask & (confident >= min_confidence) if calibrated_test else mask

    def measure(min_c: float, min_r: float) -> dict[str, Any]:
        cleared = cleared_mask(min_c, min_r)
        checked = cleared & is_used
        n, k = int(checked.sum()), int((checked & missed).sum())
        figures: dict[str, Any] = {
            "min_correctness": min_c,
            "min_relevance": min_r,
            "cleared_count": int(cleared.sum()),
            "cleared_share": float(cleared.mean()) if len(judged) else None,
            "hours_saved": float(cleared.sum() * hours) if hours is not None else None,
            "reviewed_cleared": n,
            "missed": k,
            "miss_rate": k / n if n else None,
            "miss_rate_upper_95": cp_upper(k, n, DELTA),
            "miss_rate_upper_95_by_document": clustered_upper(missed[checked], documents[checked], DELTA),
            "documents_reviewed": len(set(documents[checked])),
        }
        # The reviewers' scores of the answers checked, pair by pair in answer order, as the rows were.
        of_checked = human_pair & np.isin(table.answer, judged_index[checked])
        figures["human_correctness"] = _mean(table.correctness[of_checked])
        figures["human_relevance"] = _mean(table.f1[of_checked])
        figures["review_hours_saved"] = figures["hours_saved"]  # the name exports have always used
        return figures

    cleared_ids = [judged[n] for n in np.flatnonzero(cleared_mask(min_correctness, min_relevance)).tolist()]
    cleared_set = set(cleared_ids)
    result: dict[str, Any] = {
        "rater": rater.name if rater else None,
        "rater_standing": rater.words if rater else "no automatic rater has judged an answer",
        "rule": {"min_correctness": min_correctness, "min_relevance": min_relevance, "min_confidence": min_confidence},
        "cleared": cleared_ids,
        "flagged": [a for a in all_answers if a not in cleared_set],  # all_answers: sorted, each once
        "judged": len(judged),
        **{k: v for k, v in measure(min_correctness, min_relevance).items() if not k.startswith("min_")},
        "hours_saved_basis": _hours_basis(minutes_per_answer, seconds),
        "reviews_used": len(used),
        "reviews_left_out": reviewed_count - len(used),
        "reviews_basis": _basis(len(used), reviewed_count - len(used), calibrated_test, len(sampled)),
        "reviewed_answers_used": used,
    }
    sweep = [measure(c, r) for c, r in SWEEP]
    result["sweep"] = sweep
    if target_miss_rate is not None:
        result |= recommend(sweep, target_miss_rate, len(used), len(judged))
        if result["recommended"].get("min_correctness") is not None:  # the same fields as the rule asked for
            result["recommended"] = {**result["recommended"], "reviews_used": len(used)}
    return result


def recommend(sweep: list[dict[str, Any]], target: float, reviews: int, judged: int) -> dict[str, Any]:
    """Fixed-sequence testing over the sweep, strictest (fewest cleared) first; rules whose reviews
    could not pass even with no miss are left out of the sequence (that depends on no label)."""
    order = sorted(
        range(len(sweep)),
        key=lambda i: (sweep[i]["cleared_count"], -sweep[i]["min_correctness"], -sweep[i]["min_relevance"]),
    )
    missed, reviewed = [sweep[i]["missed"] for i in order], [sweep[i]["reviewed_cleared"] for i in order]
    passed = fixed_sequence(missed, reviewed, target)
    hopeless = cp_upper(0, np.array(reviewed, dtype=float)) > target
    for position, i in enumerate(order):
        sweep[i]["passed"] = bool(passed[position])
        sweep[i]["skipped_too_few_reviews"] = bool(hopeless[position])
    method = (
        f"fixed-sequence testing of the {len(order)} rules, strictest first (rules with too few random reviews "
        "to pass are skipped), one-sided 95 % Clopper–Pearson bound over answers drawn at random"
    )
    chosen = int(loosest_passing(passed))
    if chosen >= 0:
        best = sweep[order[chosen]]
        return {"recommended": {**best, "bound_used": "miss_rate_upper_95"}, "method": method, "reviews_needed": None}
    # Nothing passed: how many more random reviews it would take, running the same procedure on
    # counts projected forward (each rule getting its share of the new reviews).
    shares = [sweep[i]["cleared_count"] / judged if judged else 0.0 for i in order]
    at_least, rule_at_least = more_reviews_needed(missed, reviewed, shares, target, rate_holds=False)
    if_holds, rule_if_holds = more_reviews_needed(missed, reviewed, shares, target, rate_holds=True)
    if at_least is None or rule_at_least is None:  # the number and its rule come together
        reason = f"the judge clears too few answers for any rule to reach {target:.1%}"
        return {"recommended": {"reviews_needed": None, "reason": reason}, "method": method, "reviews_needed": None}
    first = sweep[order[rule_at_least]]

    def named(s: dict[str, Any]) -> str:
        return f"correctness ≥ {s['min_correctness']}, relevance ≥ {s['min_relevance']}"

    if if_holds is None or rule_if_holds is None:
        tail = "; at the miss rates seen so far no number of reviews would do: tighten the rule or improve the judge."
    else:
        tail = f"; about {if_holds} if the miss rates seen so far hold (then {named(sweep[order[rule_if_holds]])})."
    reason = (
        f"no rule's 95 % upper bound reaches {target:.1%} with {reviews} random reviews. At least {at_least} more "
        f"random reviews are needed, if none of them finds a miss (then {named(first)} would qualify){tail}"
    )
    needed = {
        "reviews_needed": at_least,
        "reviews_needed_if_rate_holds": if_holds,
        "rule": {"min_correctness": first["min_correctness"], "min_relevance": first["min_relevance"]},
        "reason": reason,
    }
    return {"recommended": needed, "method": method, "reviews_needed": at_least}


def _hours_basis(minutes_per_answer: float | None, seconds: list[float]) -> str:
    if minutes_per_answer is not None:
        return f"{minutes_per_answer:g} minutes per answer, as given"
    if seconds:
        return f"the mean active review time of {len(seconds)} submitted reviews ({np.mean(seconds) / 60:.1f} minutes)"
    return "no review time recorded yet: give --minutes-per-answer"


def _basis(used: int, left_out: int, split: bool, sampled: int) -> str:
    text = f"{used} reviews of answers drawn at random"
    if split:
        text += " (the test half; the other half calibrates the judge's confidences)"
    if left_out:
        text += f"; {left_out} reviews of answers picked by a reviewer or outside the test half are left out"
    if not sampled:
        text += "; no random sample drawn yet: run `assay sample` (or Project ▸ Review a random sample) and review it"
    return text


def _mean(values: np.ndarray) -> float | None:
    """The mean of the defined values, added one by one as Python does (the figures stay bit for bit)."""
    present = values[~np.isnan(values)].tolist()
    return sum(present) / len(present) if present else None

"""Two generators compared question by question: which answer is better (win, tie or loss), the paired
difference of each LeMAJ score, and the questions where B, the candidate, is worse than A, the baseline.

`comparison(project, a, b)` returns it all as plain data (the CLI, the dashboard and the report read it).

- **Whose tags.** On each question both answers are read through one rater's tags: a human reviewer
  who submitted a review of both (the first by name), else the judge that speaks for the project
  (its default rater, app/raters.py, as the estimates take it). A question
  where neither has tags counts in no figure but `questions`.
- **Win, tie, loss** (B against A). Where reviewers recorded a pairwise preference, their majority
  decides (one reviewer: theirs); else the tags do: the higher Correctness wins, then the higher F1,
  else a tie. `decided_by` counts both kinds.
- **Win rate** = wins / (wins + losses): ties count neither way (the sign test's convention), with a
  95 % Wilson score interval (statsmodels' `proportion_confint(method="wilson")`), which keeps its
  coverage at the few dozen questions a comparison has, where the normal interval does not.
- **Scores**: B minus A of each LeMAJ score, the existing paired PPI comparison (estimates.compare):
  prediction-powered where both generators have randomly sampled reviews, else the judge's alone.
- **Regressions**: questions where a point correct in A is incorrect in B, or B makes no such point
  (or a `missing` one), or B's Correctness or F1 is lower. Aligned points are the identity rule's
  (models/point_alignment.py). Most severe first: more points B got wrong, then more points B left
  out, then the larger drop in Correctness, then in F1.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.errors import AssayError, InvalidInput
from app.figures import estimates
from app.figures.scores import Scores
from app.project import Project
from app.raters import judge_per_answer
from models.point_alignment import align, content
from models.vocabulary import RaterKind, ReviewStatus, Tag
from storage import analytics, raters
from storage import comparison as stored
from storage.comparison import SharedQuestion, TaggedPoint
from storage.preferences import Preference, preferences

SCORE_NAMES = ("correctness", "precision", "recall", "f1")


def generator_pairs(project: Project) -> list[tuple[str, str]]:
    """Every pair of generators that answered a question in common, in name order."""
    with project.sessions() as session:
        shared = stored.shared_questions(session)
    pairs = {tuple(sorted((x, y))) for q in shared for x in q.answers for y in q.answers if x < y}
    return sorted(pairs)  # type: ignore[arg-type]


def comparison(project: Project, a: str, b: str, alpha: float = 0.05) -> dict[str, Any]:
    """B (the candidate) against A (the baseline), as plain data; see the module docstring."""
    with project.sessions() as session:
        known = stored.generators(session)
        for name in (a, b):
            if name not in known:
                raise InvalidInput(repr(name), f"no answers of this generator; the project has {', '.join(known)}")
        if a == b:
            raise InvalidInput(repr(a), "compare two different generators")
        shared = stored.shared_questions(session, [a, b])
        shared = [q for q in shared if a in q.answers and b in q.answers]
        if not shared:
            raise AssayError(f"no question was answered by both {a!r} and {b!r}")
        ids = [q.answers[g] for q in shared for g in (a, b)]
        prefs = preferences(session, answer_ids=ids)
        bases = _Bases(session)
        rows = [_question(session, q, a, b, bases, prefs) for q in shared]
    wins, ties, losses = (sum(r["outcome"] == o for r in rows) for o in ("win", "tie", "loss"))
    regressions = sorted((r for r in rows if r["regression"]), key=_severity)
    return {
        "a": a,
        "b": b,
        "questions": len(rows),
        "compared": wins + ties + losses,
        "wins": wins,
        "ties": ties,
        "losses": losses,
        "decided_by": {kind: sum(r["decided_by"] == kind for r in rows) for kind in ("preferences", "scores")},
        "win_rate": win_rate(wins, losses, alpha),
        "scores": _score_differences(project, a, b, alpha),
        "per_question": rows,
        "regressions": [_regression(r) for r in regressions],
    }


def win_rate(wins: int, losses: int, alpha: float = 0.05) -> dict[str, Any]:
    """B's share of the decided questions (ties left out) with its Wilson score interval."""
    from statsmodels.stats.proportion import proportion_confint

    decided = wins + losses
    if decided == 0:
        return {"estimate": None, "interval": None, "method": "wilson", "ties": "left out", "decided": 0}
    low, high = proportion_confint(wins, decided, alpha=alpha, method="wilson")
    return {
        "estimate": wins / decided,
        "interval": [float(low), float(high)],
        "method": "wilson",
        "ties": "left out",
        "decided": decided,
    }


# ---------------------------------------------------------------- one question


class _Bases:
    """Who each answer's tags come from: the reviewers who submitted it, and its latest judge run."""

    def __init__(self, session) -> None:
        kinds = analytics.rater_kinds(session)
        self.ids = {r.name: r.id for r in raters.raters(session)}
        self.names = {v: k for k, v in self.ids.items()}
        self.submitted: dict[str, set[str]] = {}
        for r in analytics.reviews(session):
            if r.status == ReviewStatus.SUBMITTED.value and kinds.get(r.reviewer) == RaterKind.HUMAN.value:
                self.submitted.setdefault(r.answer_id, set()).add(r.reviewer)
        self.judges = judge_per_answer(session)


def _basis(session, bases: _Bases, first: str, second: str) -> tuple[str, list[TaggedPoint], list[TaggedPoint]] | None:
    """Whose tags a pair of answers is read through, and each answer's tagged points; None when
    neither a reviewer of both nor a judge of both has tagged them."""
    both = sorted(bases.submitted.get(first, set()) & bases.submitted.get(second, set()))
    if both:
        rater = bases.ids[both[0]]
        return (
            f"reviewer {both[0]}",
            stored.tagged_points(session, first, rater),
            stored.tagged_points(session, second, rater),
        )
    judge_a, judge_b = bases.judges.get(first), bases.judges.get(second)
    if judge_a is None or judge_b is None:
        return None
    names = sorted({bases.names[judge_a], bases.names[judge_b]})
    return (
        f"judge {' / '.join(names)}",
        stored.tagged_points(session, first, judge_a),
        stored.tagged_points(session, second, judge_b),
    )


def _question(session, q: SharedQuestion, a: str, b: str, bases: _Bases, prefs: Sequence[Preference]) -> dict[str, Any]:
    answer_a, answer_b = q.answers[a], q.answers[b]
    row: dict[str, Any] = {
        "question_id": q.question_id,
        "question": q.question,
        "document": q.document,
        "answer_a": answer_a,
        "answer_b": answer_b,
        "basis": None,
        "scores": None,
        "change": {},
        "aligned": 0,
        "only_a": 0,
        "only_b": 0,
        "lost": [],
    }
    found = _basis(session, bases, answer_a, answer_b)
    if found is not None:
        row["basis"], points_a, points_b = found
        row |= _points_change(points_a, points_b)
        sa, sb = (_scores(p) for p in (points_a, points_b))
        row["scores"] = {"a": sa, "b": sb}
        row["change"] = {m: _difference(sa[m], sb[m]) for m in SCORE_NAMES}
    votes = [_vote(p, answer_a, answer_b) for p in prefs if {p.first, p.second} == {answer_a, answer_b}]
    row["preferences"] = len(votes)
    if votes:
        total = sum(votes)
        row["outcome"], row["decided_by"] = ("win" if total > 0 else "loss" if total < 0 else "tie"), "preferences"
    else:
        row["outcome"] = _by_scores(row["scores"])
        row["decided_by"] = "scores" if row["outcome"] else None
    lost_incorrect = sum(1 for lost in row["lost"] if lost["b_tag"] == Tag.INCORRECT.value)
    row["lost_incorrect"], row["lost_dropped"] = lost_incorrect, len(row["lost"]) - lost_incorrect
    lower = any((row["change"].get(m) or 0) < 0 for m in ("correctness", "f1"))
    row["regression"] = bool(row["lost"]) or lower
    return row


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def _vote(p: Preference, answer_a: str, answer_b: str) -> int:
    """+1: the reviewer preferred B; -1: A; 0: a tie."""
    return 0 if p.preferred is None else 1 if p.preferred == answer_b else -1


def _scores(points: list[TaggedPoint]) -> dict[str, float | None]:
    scores = Scores.of(Tag(p.tag) if p.tag else None for p in points)
    return {
        "correctness": scores.correctness,
        "precision": scores.precision,
        "recall": scores.recall,
        "f1": scores.f_beta(1.0),
    }


def _by_scores(scores: dict[str, dict[str, float | None]] | None) -> str | None:
    if scores is None:
        return None
    for metric in ("correctness", "f1"):
        x, y = scores["a"][metric], scores["b"][metric]
        if x is not None and y is not None and x != y:
            return "win" if y > x else "loss"
    defined = any(scores[side][m] is not None for side in ("a", "b") for m in ("correctness", "f1"))
    return "tie" if defined else None


def _points_change(points_a: list[TaggedPoint], points_b: list[TaggedPoint]) -> dict[str, Any]:
    """The aligned points, and A's correct points that B got wrong, left out or marked missing."""
    rows = align([content(p.text, p.passages) for p in points_a], [content(p.text, p.passages) for p in points_b])
    lost = []
    for row in rows:
        if row.left is None or points_a[row.left].tag != Tag.CORRECT.value:
            continue
        b_point = points_b[row.right] if row.aligned and row.right is not None else None
        if b_point is None or b_point.tag in (Tag.INCORRECT.value, Tag.MISSING.value):
            lost.append(
                {
                    "a_text": points_a[row.left].text,
                    "b_text": b_point.text if b_point else None,
                    "b_tag": b_point.tag if b_point else None,
                }
            )
    return {
        "aligned": sum(r.aligned for r in rows),
        "only_a": sum(r.left is not None and not r.aligned for r in rows),
        "only_b": sum(r.right is not None and not r.aligned for r in rows),
        "lost": lost,
    }


def _severity(row: dict[str, Any]) -> tuple[Any, ...]:
    drop = {m: -(row["change"].get(m) or 0.0) for m in ("correctness", "f1")}
    return (-row["lost_incorrect"], -row["lost_dropped"], -drop["correctness"], -drop["f1"], row["answer_a"])


def _regression(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "question_id": row["question_id"],
        "question": row["question"],
        "document": row["document"],
        "answer_a": row["answer_a"],
        "answer_b": row["answer_b"],
        "basis": row["basis"],
        "wrong_in_b": row["lost_incorrect"],
        "left_out_in_b": row["lost_dropped"],
        "correctness_change": row["change"].get("correctness"),
        "f1_change": row["change"].get("f1"),
        "lost": row["lost"],
    }


def _score_differences(project: Project, a: str, b: str, alpha: float) -> dict[str, Any]:
    """B minus A of each score from the paired PPI comparison: PPI where it can be, else judge only."""
    try:
        paired = estimates.compare(project, b, a, alpha)
    except AssayError:
        return {}
    out = {}
    for metric, figures in paired["metrics"].items():
        chosen, kind = (figures["ppi"], "ppi") if figures["ppi"] else (figures["judge_only"], "judge only")
        out[metric] = {
            "difference": chosen["estimate"] if chosen else None,
            # a difference of two scores or shares lies in [-1, 1]: a normal interval past that says no more
            "interval": [max(chosen["ci"][0], -1.0), min(chosen["ci"][1], 1.0)] if chosen else None,
            "from": kind if chosen else None,
            "questions": figures["questions"],
            "reviewed": figures["reviewed"],
            "ppi": figures["ppi"],
            "judge_only": figures["judge_only"],
            "human_only": figures["human_only"],
        }
    return out


# ---------------------------------------------------------------- the regression list as a file


def regression_columns(result: dict[str, Any]) -> list[str]:
    """The columns of the regression list: written even when it has no row."""
    return [
        "rank",
        "question",
        "document",
        f"answer ({result['a']})",
        f"answer ({result['b']})",
        "wrong in B",
        "left out in B",
        "correctness change",
        "F1 change",
        "points lost",
        "tags from",
    ]


def regression_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per regression, most severe first: what a spreadsheet of them holds."""
    columns = regression_columns(result)
    return [
        dict(
            zip(
                columns,
                (
                    n,
                    r["question"],
                    r["document"],
                    r["answer_a"],
                    r["answer_b"],
                    r["wrong_in_b"],
                    r["left_out_in_b"],
                    r["correctness_change"],
                    r["f1_change"],
                    " | ".join(lost["a_text"] for lost in r["lost"]),
                    r["basis"],
                ),
                strict=True,
            )
        )
        for n, r in enumerate(result["regressions"], start=1)
    ]


def export_regressions(result: dict[str, Any], out: Path) -> Path:
    """The regression list as CSV or XLSX (by the file's suffix)."""
    import pandas as pd

    suffix = out.suffix.lower()
    if suffix not in (".csv", ".xlsx"):
        raise InvalidInput(str(out), "the regression list is written as .csv or .xlsx")
    from app.destinations import refuse_protected
    from app.spreadsheets import texts_as_text, write_csv

    refuse_protected(out, None)  # the window's export too: never over a project, its logs, a device
    frame = pd.DataFrame(regression_table(result), columns=regression_columns(result))
    if suffix == ".csv":
        write_csv(frame, out)  # an answer's text is never a spreadsheet formula
    else:
        with pd.ExcelWriter(out, engine="openpyxl") as writer:
            frame.to_excel(writer, index=False, sheet_name="regressions")
            texts_as_text(writer.book)
    return out

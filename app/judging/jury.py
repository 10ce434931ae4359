"""The LLM jury (LeMAJ E.4): several judges tag the same data points; their tags are combined by
majority, by rule (a priority order, `incorrect` first), or both (any `incorrect` wins, else the
majority). Each juror is a rater of its own, and the verdict is a rater too."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from rapidfuzz import fuzz
from sqlalchemy.orm import Session, sessionmaker

from app.errors import AssayError
from app.judging.runs import Progress, RunSummary, open_run, run_judge
from models.judge import LemajJudge
from models.vocabulary import OutcomeStatus, Tag
from storage import answers, documents, judgements, raters

DEFAULT_PRIORITY = (Tag.INCORRECT, Tag.MISSING, Tag.IRRELEVANT, Tag.CORRECT)  # red, grey, orange, green
COMBINATIONS = ("majority", "rule", "both")


def combine_tags(tags: list[Tag], how: str, priority: tuple[Tag, ...] = DEFAULT_PRIORITY) -> Tag:
    """One tag from the jurors' tags; ties in a majority go to the higher priority."""
    if not tags:
        raise ValueError("no tags to combine")
    rank = {tag: i for i, tag in enumerate(priority)}
    if how == "rule":
        return min(tags, key=lambda t: rank[t])
    if how == "both" and priority[0] in tags:
        return priority[0]
    counts = Counter(tags)
    return min(counts, key=lambda t: (-counts[t], rank[t]))


@dataclass
class JurySummary:
    jury: str
    jurors: list[RunSummary] = field(default_factory=list)
    combined: int = 0


def run_jury(
    sessions: sessionmaker[Session],
    jurors: list[tuple[str, LemajJudge | None]],
    name: str,
    how: str = "both",
    priority: tuple[Tag, ...] = DEFAULT_PRIORITY,
    *,
    answer_ids: list[str] | None = None,
    limit: int | None = None,
    more: int | None = None,
    on_progress: Callable[[Progress], None] = lambda _p: None,
    cancel: threading.Event | None = None,
) -> JurySummary:
    if how not in COMBINATIONS:
        raise AssayError(f"combine the jury by {', '.join(COMBINATIONS)}")
    if len(jurors) < 2:
        raise AssayError("a jury needs at least two judges")
    summary = JurySummary(name)
    for juror_name, judge in jurors:
        if judge is None:
            continue  # the verifier: checked below, on the answers the models judged
        summary.jurors.append(
            run_judge(
                sessions,
                judge,
                juror_name,
                answer_ids=answer_ids,
                limit=limit,
                more=more,
                on_progress=on_progress,
                cancel=cancel,
            )
        )
    if any(judge is None for _, judge in jurors):
        summary.jurors.append(_verify_juror(sessions, [n for n, j in jurors if j is not None], answer_ids))
    summary.combined = combine_jury(sessions, [n for n, _ in jurors], name, how, priority, answer_ids)
    return summary


def combine_jury(
    sessions: sessionmaker[Session],
    juror_names: list[str],
    name: str,
    how: str,
    priority: tuple[Tag, ...] = DEFAULT_PRIORITY,
    answer_ids: list[str] | None = None,
) -> int:
    """Write the jury's verdict for every answer all jurors judged: points with the same span are the
    same point; a missing point counts when a majority (or, by rule, any juror) proposed it."""
    config = {"backend": "jury", "jurors": juror_names, "combine": how, "priority": [t.value for t in priority]}
    rater_id = open_run(sessions, name, config, "jury")
    with sessions() as session:
        found = {n: raters.rater_named(session, n) for n in juror_names}
        if missing_jurors := [n for n, r in found.items() if r is None]:
            raise AssayError(f"no judge run named {', '.join(missing_jurors)}")
        juror_ids = {n: r.id for n, r in found.items() if r is not None}
        outcomes = {n: judgements.judge_outcomes(session, rater) for n, rater in juror_ids.items()}
    common = set.intersection(
        *({a for a, o in out.items() if o.status is OutcomeStatus.JUDGED} for out in outcomes.values())
    )
    if answer_ids is not None:
        common &= set(answer_ids)
    for answer_id in sorted(common):
        with sessions.begin() as session:
            passages = {p.citation_id: p.id for p in documents.passages_of(session, _document(session, answer_id))}
            by_juror = {n: judgements.data_points_of(session, answer_id, rater) for n, rater in juror_ids.items()}
            points = _combined_points(by_juror, how, priority, passages)
            outcome = judgements.JudgeOutcome(OutcomeStatus.JUDGED, 0, None, None, (), 0, 0, 0.0)
            judgements.save_judgement(session, rater_id, answer_id, points, outcome, "jury")
    return len(common)


def _verify_juror(sessions: sessionmaker[Session], models: list[str], answer_ids: list[str] | None) -> RunSummary:
    """The model-free verifier as a juror (it flags or abstains): run on what the model jurors judged."""
    from app.judging.verification import VERIFIER, verify_project

    with sessions() as session:
        judged = [
            {a for a, o in judgements.judge_outcomes(session, r.id).items() if o.status is OutcomeStatus.JUDGED}
            for r in (raters.rater_named(session, n) for n in models)
            if r is not None
        ]
    ids = sorted(set.intersection(*judged)) if judged else []
    if answer_ids is not None:
        ids = [a for a in ids if a in answer_ids] if judged else list(answer_ids)
    reports = verify_project(sessions, ids)
    return RunSummary(VERIFIER, judged=len(reports), failed=0)


def _document(session: Session, answer_id: str) -> int:
    answer = answers.answer_detail(session, answer_id)
    assert answer is not None
    return answer.document_id


def _combined_points(by_juror, how: str, priority, passages: dict[str, int]) -> list[judgements.NewDataPoint]:
    n = len(by_juror)
    spans: dict[tuple[int, int | None], list[judgements.StoredDataPoint]] = {}
    for points in by_juror.values():
        for p in points:
            if p.span_start is not None and p.tag is not None:
                spans.setdefault((p.span_start, p.span_end), []).append(p)
    combined = []
    for (start, end), votes in sorted(spans.items()):
        tag = combine_tags([v.tag for v in votes if v.tag is not None], how, priority)
        cited = sorted({passages[c] for v in votes for c in v.citations if c in passages})
        agreeing = sum(v.tag is tag for v in votes) / n
        combined.append(
            judgements.NewDataPoint(
                votes[0].text,
                start,
                end,
                tag,
                agreeing,
                f"{sum(v.tag is tag for v in votes)} of {n} jurors",
                tuple(cited),
                (),
                context_start=votes[0].context_start,
                context_end=votes[0].context_end,
            )
        )
    # Missing points: cluster similar proposals across jurors.
    clusters: list[list[judgements.StoredDataPoint]] = []
    for points in by_juror.values():
        for p in (p for p in points if p.tag is Tag.MISSING and p.span_start is None):
            home = next((c for c in clusters if fuzz.token_set_ratio(c[0].text, p.text) >= 80), None)
            (home.append(p) if home is not None else clusters.append([p]))
    needed = 1 if how == "rule" else n // 2 + 1  # by rule any proposal stands; otherwise a majority
    for cluster in clusters:
        if len(cluster) >= needed:
            cited = sorted({passages[c] for v in cluster for c in v.citations if c in passages})
            combined.append(
                judgements.NewDataPoint(
                    cluster[0].text,
                    None,
                    None,
                    Tag.MISSING,
                    len(cluster) / n,
                    f"proposed by {len(cluster)} of {n} jurors",
                    tuple(cited),
                    (),
                )
            )
    return combined

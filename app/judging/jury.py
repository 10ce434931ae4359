"""The LLM jury (LeMAJ E.4): several judges tag the same data points; their tags are combined by
majority, by rule (a priority order, `incorrect` first), or both (any `incorrect` wins, else the
majority). Each juror is a rater of its own, and the verdict is a rater too.

The default jury of an LLM judge and the verifier (`roles`, decided): each says what it is measured
to say. Correctness (correct or incorrect) comes from the juror measured better on correctness on
human labels (app/raters.py: Youden's J; the checker's held-out figures stand for it where the project
has no labels; a juror not measured or near chance never wins); `irrelevant` and the `missing` points
come from the LLM judge, the checker having no opinion there. An `incorrect` from the correctness juror
outranks the LLM's `irrelevant` (a wrong claim is wrong, relevant or not). Where the correctness juror
abstains (the verifier's unconfirmed points) the other's correct/incorrect stands if it is trusted;
a model not measured yet (one the user just installed) keeps its `incorrect` there, as a flag for a
reviewer ("not confirmed" is no `correct` to prefer over it), never its `correct`, which would clear
the point; else the point stays undecided. A `missing` point that only repeats the question is no
omission and is dropped. The jury's name says the rule: `jury:roles:verifier+<judge>`."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from rapidfuzz import fuzz
from sqlalchemy.orm import Session, sessionmaker

from app.errors import AssayError
from app.judging.runs import Progress, RunSummary, open_run, run_judge
from app.judging.verification import VERIFIER
from app.raters import standings
from models.judge import LemajJudge
from models.vocabulary import OutcomeStatus, Tag
from storage import answers, documents, judgements, raters

DEFAULT_PRIORITY = (Tag.INCORRECT, Tag.MISSING, Tag.IRRELEVANT, Tag.CORRECT)  # red, grey, orange, green
COMBINATIONS = ("majority", "rule", "both", "roles")
CORRECTNESS_TAGS = (Tag.CORRECT, Tag.INCORRECT)

# A combined run reads no passage and spends no tokens: its outcome is only that it judged the answer.
COMBINED = judgements.JudgeOutcome(
    status=OutcomeStatus.JUDGED,
    attempts=0,
    error=None,
    raw_output=None,
    passages_seen=(),
    prompt_tokens=0,
    completion_tokens=0,
    seconds=0.0,
)


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
    if how == "roles" and (len(jurors) != 2 or sum(judge is None for _, judge in jurors) != 1):
        raise AssayError("the roles jury is one LLM judge and the verifier: --jury verifier --jury MODEL")
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
    if how == "roles":
        model = next(n for n, judge in jurors if judge is not None)
        summary.combined = combine_roles(sessions, model, answer_ids, name)
    else:
        summary.combined = combine_jury(sessions, [n for n, _ in jurors], name, how, priority, answer_ids)
    return summary


def roles_jury(model: str) -> str:
    """The default jury's name: the LLM judge `model` with the verifier, each in its role."""
    return f"jury:roles:{VERIFIER}+{model}"


def default_jury(sessions: sessionmaker[Session], model: str) -> int:
    """After an LLM judge run: its default jury with the verifier (`roles`), on the answers both judged
    (0 where the verifier has judged none). It is measured like any rater, and speaks only if it
    measures best or the lead chooses it (app/raters.py)."""
    with sessions() as session:
        if raters.rater_named(session, VERIFIER) is None:
            return 0
    return combine_roles(sessions, model)


def correctness_jurors(sessions: sessionmaker[Session], model: str) -> list[str]:
    """The trusted jurors, the one measured better on correctness first (module docstring)."""
    with sessions() as session:
        found = [s for s in standings(session) if s.name in (VERIFIER, model) and s.trusted]
    return [s.name for s in sorted(found, key=lambda s: (s.youden, s.answers), reverse=True)]


def combine_roles(
    sessions: sessionmaker[Session], model: str, answer_ids: list[str] | None = None, name: str | None = None
) -> int:
    """Write the default jury of `model` and the verifier on every answer both judged (of `answer_ids`)."""
    name = name or roles_jury(model)
    order = correctness_jurors(sessions, model)
    with sessions() as session:
        unmeasured = any(s.name == model and s.trusted is None for s in standings(session))
        found = {n: raters.rater_named(session, n) for n in (VERIFIER, model)}
        if missing_jurors := [n for n, r in found.items() if r is None]:
            raise AssayError(f"no judge run named {', '.join(missing_jurors)}")
        ids = {n: r.id for n, r in found.items() if r is not None}
        judged = [
            {a for a, o in judgements.judge_outcomes(session, rater).items() if o.status is OutcomeStatus.JUDGED}
            for rater in ids.values()
        ]
    common = judged[0] & judged[1] & (set(answer_ids) if answer_ids is not None else judged[0])
    if not common:
        return 0
    config = {"backend": "jury", "jurors": [VERIFIER, model], "combine": "roles", "correctness_from": order[:1]}
    rater_id = open_run(sessions, name, config, "jury")
    for answer_id in sorted(common):
        with sessions.begin() as session:
            passages = {p.citation_id: p.id for p in documents.passages_of(session, _document(session, answer_id))}
            checker = {p.span_start: p for p in judgements.data_points_of(session, answer_id, ids[VERIFIER])}
            question = _question(session, answer_id)
            points = [
                _by_role(p, checker.get(p.span_start), model, order, passages, flags=unmeasured)
                for p in judgements.data_points_of(session, answer_id, ids[model])
                if not (p.span_start is None and repeats_question(p.text, question))
            ]
            outcome = COMBINED
            judgements.save_judgement(session, rater_id, answer_id, points, outcome, "jury")
    return len(common)


def _by_role(
    llm: judgements.StoredDataPoint,
    checker: judgements.StoredDataPoint | None,
    model: str,
    order: list[str],
    passages: dict[str, int],
    *,
    flags: bool = False,
) -> judgements.NewDataPoint:
    """One point of the roles jury: `order` the trusted jurors, better on correctness first; `flags`,
    the model is not measured yet: its `incorrect` stands where no trusted juror decided (the rule is in
    the module docstring)."""
    if llm.span_start is None:  # a missing point: the LLM judge's alone
        tag, why = llm.tag, "missing: from the LLM judge"
    else:
        said = {VERIFIER: checker.tag if checker else None, model: llm.tag if llm.tag in CORRECTNESS_TAGS else None}
        decider = next((n for n in order if said[n] is not None), None)
        correctness = said[decider] if decider else None
        if llm.tag is Tag.IRRELEVANT and correctness is not Tag.INCORRECT:
            tag, why = Tag.IRRELEVANT, "irrelevant: from the LLM judge"
        else:
            tag = correctness
            why = f"correctness: from {decider}" if decider else "undecided: no trusted juror decided it"
            if decider is None and flags and llm.tag is Tag.INCORRECT:  # a catch kept for a reviewer to read
                tag, why = (
                    Tag.INCORRECT,
                    f"incorrect: flagged by {model} (not measured yet), not confirmed by the checker",
                )
    cited = [c for c in llm.citations if c in passages]
    if checker is not None and checker.citations:  # the checker's evidence first: the passage that decides
        cited = list(dict.fromkeys([checker.citations[0], *cited]))
    return judgements.NewDataPoint(
        text=llm.text,
        span_start=llm.span_start,
        span_end=llm.span_end,
        tag=tag,
        confidence=None,
        rationale=why,
        passage_ids=tuple(passages[c] for c in cited),
        unverified_citations=(),
        context_start=llm.context_start,
        context_end=llm.context_end,
    )


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
            question = _question(session, answer_id)
            by_juror = {
                n: [
                    p
                    for p in judgements.data_points_of(session, answer_id, rater)
                    if not (p.span_start is None and repeats_question(p.text, question))
                ]
                for n, rater in juror_ids.items()
            }
            points = _combined_points(by_juror, how, priority, passages)
            outcome = COMBINED
            judgements.save_judgement(session, rater_id, answer_id, points, outcome, "jury")
    return len(common)


def _verify_juror(sessions: sessionmaker[Session], models: list[str], answer_ids: list[str] | None) -> RunSummary:
    """The model-free verifier as a juror (it flags or abstains): run on what the model jurors judged."""
    from app.judging.verification import verify_project

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


def repeats_question(text: str, question: str) -> bool:
    """A proposed `missing` point that only asks or restates the question: no omission of the answer."""
    said, asked = (" ".join(t.lower().rstrip("?.! ").split()) for t in (text, question))
    return text.rstrip().endswith("?") or fuzz.token_sort_ratio(said, asked) >= 85


def _question(session: Session, answer_id: str) -> str:
    answer = answers.answer_detail(session, answer_id)
    return answer.question if answer is not None else ""


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
                text=votes[0].text,
                span_start=start,
                span_end=end,
                tag=tag,
                confidence=agreeing,
                rationale=f"{sum(v.tag is tag for v in votes)} of {n} jurors",
                passage_ids=tuple(cited),
                unverified_citations=(),
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
                    text=cluster[0].text,
                    span_start=None,
                    span_end=None,
                    tag=Tag.MISSING,
                    confidence=len(cluster) / n,
                    rationale=f"proposed by {len(cluster)} of {n} jurors",
                    passage_ids=tuple(cited),
                    unverified_citations=(),
                )
            )
    return combined

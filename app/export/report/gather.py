"""What the report says, gathered from the project as plain data: no HTML here (render.py and the
templates in resources/report/ write it).

Every figure of the summary is a `Number` that names the `assay` command whose `--json` output holds
it and its key there, so the summary can be checked against the command line figure by figure.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.errors import AssayError
from app.export.report import words
from app.export.report.words import cell, heading, share
from app.figures import analytics as stats
from app.figures import estimates
from app.figures.rater_names import rater_name
from app.project import Project
from storage import analytics, raters, reviews, rubric_results

Redact = Callable[[Any], Any]
SLICES = ("rater", "source", "document", "generator")
ERROR_TAGS = ("incorrect", "missing")  # what makes an answer wrong (irrelevant points only dilute it)
MOST_ERROR_ANSWERS = 200  # listed in full; the rest are in the CSV export
NO_GENERATOR = ("unknown", "None")  # how the scores (and the estimates) key an answer without a generator


@dataclass(frozen=True)
class Number:
    """A figure as shown (`text`), its value, and where the command line gives it: `assay <command>
    --json`, then `key` (dot-separated; list positions as numbers)."""

    value: float | int | None
    text: str
    command: str
    key: str


@dataclass(frozen=True)
class Headline:
    words: str
    estimate: Number
    low: Number | None
    high: Number | None
    basis: list[str | Number]  # words and figures, in the order read
    whole_set: bool = False  # an estimate for every answer, not only for those a person tagged


@dataclass(frozen=True)
class RaterLine:
    name: str  # readable
    answers: Number
    incorrect: Number | None = None
    missing: Number | None = None
    irrelevant: Number | None = None


@dataclass(frozen=True)
class Table:
    columns: list[str]  # headings, in words
    rows: list[list[str]]
    numeric: list[bool]  # right-aligned columns
    caption: str = ""


@dataclass(frozen=True)
class Claim:
    text: str
    tag: str  # incorrect | missing
    rater: str
    evidence: str | None  # "par_12, § 6.3: the passage's text"
    cited_by: str | None  # who cited the passage: the reviewer, or a judge on the same claim
    comment: str | None


@dataclass(frozen=True)
class ErrorAnswer:
    answer_id: str
    question: str
    document: str
    generator: str | None
    answer: str
    claims: list[Claim]
    comments: list[str]  # the reviewers' comments on the whole answer


@dataclass(frozen=True)
class Triage:
    judged: Number
    cleared: Number | None = None
    cleared_share: Number | None = None
    reviewed_cleared: Number | None = None
    missed: Number | None = None
    upper: Number | None = None
    upper_by_document: Number | None = None
    min_correctness: Number | None = None
    min_relevance: Number | None = None
    reviews_used: Number | None = None
    reviews_left_out: Number | None = None


@dataclass(frozen=True)
class Agreement:
    raters: list[str]
    items: Number
    percent: Number
    ac1: Number | None
    kappa: Number | None
    alpha: Number | None
    meaning: str
    left_out: list[str]
    by_source: Table | None


@dataclass(frozen=True)
class Guidelines:
    version: str
    author: str | None
    created_at: str | None
    sha256: str | None


@dataclass(frozen=True)
class Signoff:
    answer_id: str
    reviewer: str
    signed_at: str
    digest: str
    matches: bool
    problem: str | None


@dataclass
class Report:
    title: str
    project: str
    made_at: str
    documents: Number
    answers: Number
    questions: Number
    points: Number
    labels: Number
    reviewers: list[RaterLine]
    judges: list[RaterLine]
    headlines: list[Headline]
    triage: Triage
    agreement: Agreement | None
    agreement_problem: str | None
    guidelines: Guidelines | None
    scores: dict[str, Table]  # by rater, source, document, generator
    no_generator: bool
    standings: Table | None
    planted: Table | None  # planted errors caught, by kind of error
    standing_note: str
    demonstration: list[str]  # judges near chance, by readable name
    error_answers: list[ErrorAnswer]
    error_answers_total: int
    signoffs: list[Signoff]
    comparisons: Table | None
    comparison_notes: list[str]  # pairs with questions in common but nothing to compare them by yet
    appendix: dict[str, Table] = field(default_factory=dict)
    figures: list[tuple[str, str, str]] = field(default_factory=list)  # (title, data URI, caption)
    figures_data: tuple[Any, ...] = ()  # what they are drawn from: answer scores, points, triage
    calibration: dict[str, Any] | None = None  # the judge's confidence against reviewers (ECE), when measured


def gather(project: Project, redact: Redact) -> Report:
    """Everything the report shows; `redact` has hidden personal data in every text."""
    counts = project.counts()
    # Read as stored: names are keys here (two names redacted alike must stay two raters); every text
    # is redacted where it is written, and again by the templates.
    with project.sessions() as session:
        kinds = analytics.rater_kinds(session)
        points = analytics.labelled_points(session)
    by_rater = stats.scores(project, by="rater")
    per_answer = stats.scores(project)
    triage = stats.triage(project)
    estimate_all = estimates.estimate(project, "all")

    def info(key: str) -> Number:
        return Number(counts[key], f"{counts[key]:,}", "info", key)

    reviewers: list[RaterLine] = []
    judges: list[RaterLine] = []
    for n, row in enumerate(by_rater):
        line = RaterLine(
            redact(rater_name(row["rater"])),
            Number(row["answers"], str(row["answers"]), "scores --by rater", f"{n}.answers"),
            *(Number(row[t], str(row[t]), "scores --by rater", f"{n}.{t}") for t in (*ERROR_TAGS, "irrelevant")),
        )
        (judges if kinds.get(row["rater"]) == "judge" else reviewers).append(line)
    agreement, problem = _agreement(project, redact)
    standings, planted, note, demonstration = _standings(project, redact)
    name = project.url.rsplit("/", 1)[-1]
    report = Report(
        title="Review of LLM answers",
        project=redact(name),
        made_at=dt.datetime.now(dt.UTC).strftime("%d %B %Y"),
        documents=info("documents"),
        answers=info("answers"),
        questions=info("questions"),
        points=info("data_points"),
        labels=info("labels"),
        reviewers=reviewers,
        judges=judges,
        headlines=_headlines(estimate_all) + _reviewer_headlines(by_rater, per_answer, kinds, redact),
        triage=_triage(triage),
        agreement=agreement,
        agreement_problem=problem,
        guidelines=_guidelines(project, redact),
        scores={by: _scores_table(project, by, per_answer, redact) for by in SLICES},
        no_generator=all(a.generator is None for a in project.answers()),
        standings=standings,
        planted=planted,
        standing_note=note,
        demonstration=demonstration,
        error_answers=[],
        error_answers_total=0,
        signoffs=_signoffs(project, redact),
        comparisons=None,
        comparison_notes=[],
    )
    report.error_answers_total, report.error_answers = _error_answers(project, points, kinds, redact)
    report.comparisons, report.comparison_notes = _comparisons(project, redact)
    report.appendix = _appendix(project, per_answer, triage, redact)
    report.figures_data = (per_answer, points, triage)
    report.calibration = _calibration(project)
    return report


# ---------------------------------------------------------------- the summary's figures


def _headlines(result: dict[str, Any]) -> list[Headline]:
    """Share of answers with an error and mean correctness over the whole set, each with its 95 %
    interval: prediction-powered where answers drawn at random were reviewed, else the judge's alone."""
    if not result["groups"]:
        return []
    out = []
    command = "estimate --by all"
    for metric, what in (
        ("any_incorrect", "Answers with at least one incorrect point, whole set"),
        ("correctness", "Correctness, whole set"),
    ):
        figures = result["groups"][0]["metrics"][metric]
        reviewed = Number(figures["reviewed"], str(figures["reviewed"]), command, f"groups.0.metrics.{metric}.reviewed")
        judged = Number(figures["judged"], str(figures["judged"]), command, f"groups.0.metrics.{metric}.judged")
        basis: list[str | Number]
        if figures["reviewed"] >= 2 and figures["ppi"]:
            kind = "ppi"
            basis = [reviewed, " random reviews, with the judge on ", judged, " answers"]
        elif figures["judge_only"]:
            kind = "judge_only"
            basis = ["the judge alone on ", judged, " answers: no random review corrects it yet"]
        else:
            continue
        key = f"groups.0.metrics.{metric}.{kind}"
        ci = figures[kind]["ci"]
        out.append(
            Headline(
                what,
                Number(figures[kind]["estimate"], share(figures[kind]["estimate"]), command, key + ".estimate"),
                Number(ci[0], share(ci[0]), command, key + ".ci.0"),
                Number(ci[1], share(ci[1]), command, key + ".ci.1"),
                basis,
                whole_set=True,
            )
        )
    return out


def _reviewer_headlines(
    by_rater: list[dict[str, Any]],
    per_answer: list[dict[str, Any]],
    kinds: dict[str, str],
    redact: Redact,
    most: int = 3,
) -> list[Headline]:
    """Each person's mean correctness and relevance over the answers they tagged, with a 95 % t interval
    over those answers (`mean_interval`; the interval's key says so: `t_interval.<metric>.<row>.<end>`)."""
    out: list[Headline] = []
    for n, row in enumerate(by_rater):
        if kinds.get(row["rater"]) == "judge" or len(out) >= 2 * most:
            continue
        for metric, what in (("correctness", "Correctness"), ("f1", "Relevance")):
            values = [r[metric] for r in per_answer if r["rater"] == row["rater"] and r[metric] is not None]
            if row[metric] is None:
                continue
            low, high = mean_interval(values)
            ends = [
                None if end is None else Number(end, words.score(end), "scores", f"t_interval.{metric}.{n}.{i}")
                for i, end in enumerate((low, high))
            ]
            out.append(
                Headline(
                    f"{what}, answers {redact(rater_name(row['rater']))} tagged",
                    Number(row[metric], words.score(row[metric]), "scores --by rater", f"{n}.{metric}"),
                    ends[0],
                    ends[1],
                    ["answers picked, not drawn at random: true of these answers only"],
                )
            )
    return out


def _triage(result: dict[str, Any]) -> Triage:
    def n(key: str, text: str | None = None) -> Number:
        value = result[key]
        return Number(value, text if text is not None else str(value), "triage", key)

    if not result["judged"]:
        return Triage(judged=n("judged"))
    return Triage(
        judged=n("judged"),
        cleared=Number(len(result["cleared"]), str(len(result["cleared"])), "triage", "cleared.length"),
        cleared_share=n("cleared_share", share(result["cleared_share"])),
        reviewed_cleared=n("reviewed_cleared"),
        missed=n("missed"),
        upper=n("miss_rate_upper_95", share(result["miss_rate_upper_95"])),
        upper_by_document=n("miss_rate_upper_95_by_document", share(result["miss_rate_upper_95_by_document"])),
        min_correctness=_rule(result, "min_correctness"),
        min_relevance=_rule(result, "min_relevance"),
        reviews_used=n("reviews_used"),
        reviews_left_out=n("reviews_left_out"),
    )


def _rule(result: dict[str, Any], key: str) -> Number:
    value = result["rule"][key]
    return Number(value, f"{value:g}", "triage", f"rule.{key}")


def agreement_meaning(ac1: float | None, percent: float | None) -> str:
    """What a chance-corrected agreement says, on the bands reviewers of annotation quote (Landis and
    Koch 1977, read for Gwet's AC1 as in Gwet 2014)."""
    if ac1 is None:
        return "Agreement beyond chance cannot be computed: the raters used a single tag."
    bands = ((0.8, "almost perfect"), (0.6, "substantial"), (0.4, "moderate"), (0.2, "fair"), (0.0, "slight"))
    band = next((word for floor, word in bands if ac1 >= floor), "worse than chance")
    said = f"Beyond what chance would give, the raters' agreement is {band}."
    if ac1 < 0.6:
        said += " The tags depend on who reviews: sharpen the guidelines before comparing scores between people."
    return said


def _agreement(project: Project, redact: Redact) -> tuple[Agreement | None, str | None]:
    try:
        result = stats.agreement(project)
    except AssayError as exc:
        return None, str(exc)

    def n(key: str, as_share: bool = False) -> Number | None:
        value = result.get(key)
        if value is None:
            return None
        return Number(value, share(value) if as_share else f"{value:.2f}", "agreement", key)

    sources = [
        [redact(source), str(f["n_items"]), share(f["percent_agreement"]), words.score(f["gwet_ac1"])]
        for source, f in sorted(result["by_source"].items())
    ]
    by_source = Table(
        [heading("source"), heading("n_items"), heading("percent_agreement"), heading("gwet_ac1")],
        sources,
        [False, True, True, True],
    )
    items = Number(result["n_items"], str(result["n_items"]), "agreement", "n_items")
    percent = n("percent_agreement", as_share=True) or Number(None, "—", "agreement", "percent_agreement")
    return (
        Agreement(
            raters=[rater_name(r) for r in redact(result["raters"])],
            items=items,
            percent=percent,
            ac1=n("gwet_ac1"),
            kappa=n("cohen_kappa") or n("fleiss_kappa"),
            alpha=n("krippendorff_alpha"),
            meaning=agreement_meaning(result.get("gwet_ac1"), result.get("percent_agreement")),
            left_out=[rater_name(r) for r in redact(list(result.get("left_out", {})))],
            by_source=by_source if len(sources) > 1 else None,
        ),
        None,
    )


def _guidelines(project: Project, redact: Redact) -> Guidelines | None:
    found = project.guidelines()
    if found is None:
        return None
    return Guidelines(
        redact(str(found.version)), redact(found.author), found.created_at.strftime("%d %B %Y"), found.sha256
    )


def _signoffs(project: Project, redact: Redact) -> list[Signoff]:
    out = []
    for s in project.signoffs():
        at = s.signed_at
        signed = at.astimezone(dt.UTC).strftime("%d %b %Y %H:%M UTC") if isinstance(at, dt.datetime) else str(at)
        out.append(Signoff(redact(s.answer_id), redact(s.reviewer), signed, s.digest, s.matches, redact(s.problem)))
    return out


# ---------------------------------------------------------------- scores with intervals


def mean_interval(values: list[float]) -> tuple[float | None, float | None]:
    """The 95 % t interval of a mean of scores in [0, 1], clipped to [0, 1]; none below two values."""
    if len(values) < 2:
        return None, None
    import numpy as np
    from scipy import stats as scipy_stats

    data = np.asarray(values, dtype=float)
    half = scipy_stats.t.ppf(0.975, len(data) - 1) * data.std(ddof=1) / np.sqrt(len(data))
    return max(0.0, float(data.mean() - half)), min(1.0, float(data.mean() + half))


def _scores_table(project: Project, by: str, per_answer: list[dict[str, Any]], redact: Redact) -> Table:
    """Mean correctness and relevance of each slice and rater, with 95 % intervals over its answers."""
    rows = stats.scores(project, by=by)
    keys = {}
    if by != "rater":
        with project.sessions() as session:
            from storage import scoring

            keys = dict(scoring.answer_keys(session, by))
    values: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: {"correctness": [], "f1": []})
    for r in per_answer:
        group = values[(keys.get(r["answer_id"], ""), r["rater"])]
        for metric in ("correctness", "f1"):
            if r[metric] is not None:
                group[metric].append(r[metric])
    out = []
    for r in rows:
        key = "" if by == "rater" else r[by]
        found = values[(key, r["rater"])]
        line = [] if by == "rater" else [redact(_slice_value(by, key))]
        line += [redact(rater_name(r["rater"])), str(r["answers"])]
        for metric in ("correctness", "f1"):
            low, high = mean_interval(found[metric])
            line += [words.score(r[metric]), words.interval(low, high, as_share=False)]
        line += [str(r["incorrect"]), str(r["missing"])]
        out.append(line)
    columns = [] if by == "rater" else [heading(by)]
    columns += [heading("rater"), heading("answers"), heading("correctness"), heading("interval")]
    columns += [heading("f1"), heading("interval"), heading("incorrect"), heading("missing")]
    return Table(columns, out, [n >= len(columns) - 7 for n in range(len(columns))])


def _slice_value(by: str, key: str) -> str:
    if by == "generator" and key in NO_GENERATOR:
        return "no generator recorded"
    return key


# ---------------------------------------------------------------- judges


def _standings(project: Project, redact: Redact) -> tuple[Table | None, Table | None, str, list[str]]:
    from app.judging.standing import judge_standings, real_label_note

    found = judge_standings(project.sessions)
    if not found:
        return None, None, "", []
    rows = []
    for s in found:
        r, f = s.real or {}, s.figures or {}
        rows.append(
            [
                rater_name(redact(s.run or "")),
                str(r.get("answers", "—")),
                _count_share(r, "caught", "with_errors", "recall", "recall_ci"),
                _count_share(r, "false_alarms", "correct", "false_alarm_rate", "false_alarm_ci"),
                share(f.get("caught_share")) if f.get("caught_share") is not None else "not stress-tested",
                "demonstration model: do not rely on its tags" if s.demonstration else "measured",
            ]
        )
    columns = ["judge", "labelled", "caught", "false_alarms", "planted", "standing"]
    note = " ".join(dict.fromkeys(real_label_note(redact(s.real)) or "" for s in found if s.real)).strip()
    demonstration = [rater_name(redact(s.run or "")) for s in found if s.demonstration]
    planted = [
        [
            redact(rater_name(s.run or "")),
            kind.replace("_", " "),
            f"{t['caught']} of {t['trials']} ({share(t['recall'])}; {words.interval(*t['ci'])})",
        ]
        for s in found
        for kind, t in (s.figures or {}).get("by_type", {}).items()
        if t["trials"]
    ]
    by_kind = Table([heading("judge"), heading("kind"), heading("planted")], planted, [False, False, True])
    table = Table([heading(c) for c in columns], rows, [False, True, True, True, True, False])
    return table, by_kind if planted else None, note, demonstration


def _calibration(project: Project) -> dict[str, Any] | None:
    from app.figures import calibration

    found = calibration.reliability(project)
    return found if found["overall"]["points"] else None


def _count_share(r: dict[str, Any], k: str, n: str, rate: str, ci: str) -> str:
    if not r.get(n):
        return "—"
    lo, hi = r[ci]
    return f"{r[k]} of {r[n]} ({share(r[rate])}; {words.interval(lo, hi)})"


# ---------------------------------------------------------------- the answers with errors


def _error_answers(
    project: Project, points: list[dict[str, Any]], kinds: dict[str, str], redact: Redact
) -> tuple[int, list[ErrorAnswer]]:
    """Each answer in which a person found an incorrect claim or an omission, with the claims, the
    passage that is the evidence (cited by the reviewer, else by a judge on the same claim) and the
    reviewers' comments."""
    by_answer: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in points:
        by_answer[p["answer_id"]].append(p)
    wrong = sorted(
        a for a, ps in by_answer.items() if any(p["tag"] in ERROR_TAGS and kinds.get(p["rater"]) == "human" for p in ps)
    )
    out = []
    passages_of: dict[int, dict[str, Any]] = {}
    for answer_id in wrong[:MOST_ERROR_ANSWERS]:
        detail = project.answer(answer_id)
        if detail is None:
            continue
        if detail.document_id not in passages_of:
            passages_of[detail.document_id] = {p.citation_id: p for p in project.passages(detail.document_id)}
        passages = passages_of[detail.document_id]
        mine = by_answer[answer_id]
        claims = []
        for p in mine:
            if p["tag"] not in ERROR_TAGS or kinds.get(p["rater"]) != "human":
                continue
            citing = p if p["citations"] else next((q for q in mine if q["citations"] and _same_claim(p, q)), p)
            cited = citing["citations"]
            evidence = None
            if cited and cited[0] in passages:
                passage = passages[cited[0]]
                where = f"{passage.citation_id}" + (f", § {passage.section}" if passage.section else "")
                evidence = f"{where}: {redact(passage.text)}"
            comment = p["comment"] or (p["rationale"] if kinds.get(p["rater"]) == "human" else None)
            by = rater_name(citing["rater"]) if evidence else None
            claims.append(
                Claim(
                    redact(p["text"]), p["tag"], redact(rater_name(p["rater"])), evidence, redact(by), redact(comment)
                )
            )
        comments = _answer_comments(project, answer_id, {p["rater"] for p in mine if kinds.get(p["rater"]) == "human"})
        out.append(
            ErrorAnswer(
                redact(answer_id),
                redact(detail.question),
                redact(detail.document),
                redact(detail.generator),
                redact(detail.text),
                claims,
                [redact(c) for c in comments],
            )
        )
    return len(wrong), out


def _same_claim(p: dict[str, Any], q: dict[str, Any]) -> bool:
    """Two raters' points on one claim: the same words, or the same span of the answer."""
    same_span = p["span_start"] is not None and (p["span_start"], p["span_end"]) == (q["span_start"], q["span_end"])
    return q is not p and (q["text"] == p["text"] or same_span)


def _answer_comments(project: Project, answer_id: str, names: set[str]) -> list[str]:
    with project.sessions() as session:
        found = []
        for name in sorted(names):
            rater = raters.rater_named(session, name)
            if rater is not None and (comment := reviews.review(session, answer_id, rater.id).comment):
                found.append(f"{rater_name(name)}: {comment}")  # redacted by the caller
    return found


# ---------------------------------------------------------------- comparisons and the appendix


def _interval_text(figures: dict[str, Any] | None, as_share: bool = False) -> str:
    if not figures:
        return "—"
    write = share if as_share else words.score
    low, high = figures["ci"]
    return f"{write(figures['estimate'])} [{words.interval(low, high, as_share=as_share)}]"


def _as_interval(estimate: float | None, interval: list[float] | None) -> dict[str, Any] | None:
    return {"estimate": estimate, "ci": interval} if interval else None


def _comparisons(project: Project, redact: Redact, most: int = 6) -> tuple[Table | None, list[str]]:
    """Each two generators on the questions both answered (app/figures/comparison.py): wins, ties and
    losses of the second against the first, its win rate and the difference of its scores, with 95 %
    intervals, and how many questions it does worse on."""
    from app.figures.comparison import comparison, generator_pairs

    rows, notes = [], []
    for a, b in generator_pairs(project)[:most]:
        try:
            found = comparison(project, a, b)
        except AssayError:
            continue
        if not found["compared"]:
            notes.append(
                redact(
                    f"{b} and {a} answered {found['questions']} questions in common; no reviewer or judge has "
                    "tagged both answers of any of them yet, so there is nothing to compare them by."
                )
            )
            continue
        rate = found["win_rate"]
        differences = [
            _interval_text(_as_interval(f.get("difference"), f.get("interval")))
            for f in (found["scores"].get(m, {}) for m in ("correctness", "any_incorrect"))
        ]
        rows.append(
            [
                redact(f"{b} against {a}"),
                str(found["compared"]),
                f"{found['wins']} / {found['ties']} / {found['losses']}",
                _interval_text(
                    {"estimate": rate["estimate"], "ci": rate["interval"]} if rate["interval"] else None, True
                ),
                *differences,
                str(len(found["regressions"])),
            ]
        )
    columns = ["pair", "compared", "outcomes", "win_rate", "correctness_difference", "error_difference", "regressions"]
    table = Table([heading(c) for c in columns], rows, [False, True, True, True, True, True, True])
    return (table if rows else None), notes


def _appendix(
    project: Project, per_answer: list[dict[str, Any]], triage: dict[str, Any], redact: Redact
) -> dict[str, Table]:
    tables: dict[str, Table] = {}
    columns = ["answer_id", "rater", "correct", "incorrect", "irrelevant", "missing", "correctness", "f1"]
    tables["Scores of every answer, by rater"] = Table(
        [heading(c) for c in columns],
        [[r["answer_id"], rater_name(r["rater"]), *(words.cell(r[c]) for c in columns[2:])] for r in per_answer],
        [False, False, True, True, True, True, True, True],
    )
    rows = []
    for group in redact(estimates.estimate(project, "generator"))["groups"]:
        for metric in ("correctness", "f1", "any_incorrect"):
            f = group["metrics"][metric]
            as_share = metric == "any_incorrect"
            rows.append(
                [
                    _slice_value("generator", group["group"]),
                    heading(metric),
                    str(f["reviewed"]),
                    _interval_text(f["ppi"], as_share),
                    _interval_text(f["judge_only"], as_share),
                    _interval_text(f["human_only"], as_share),
                ]
            )
    columns = ["generator", "figure", "reviewed", "ppi", "judge_only", "human_only"]
    tables["Estimates by generator, with 95 % intervals"] = Table(
        [heading(c) for c in columns], rows, [False, False, True, True, True, True]
    )
    with project.sessions() as session:
        rubrics = rubric_results.rubric_results(session)
    if rubrics:  # answer-level rubrics other judges ran (DeCE, the two-dimensional…)
        columns = ["answer_id", "rater", "rubric", "label", "score"]
        tables["Other rubrics, answer by answer"] = Table(
            [heading(c) for c in columns],
            [
                [redact(r.answer_id), redact(rater_name(r.rater)), r.rubric, redact(r.label or "—"), cell(r.score)]
                for r in rubrics
            ],
            [False, False, False, False, True],
        )
    if triage["judged"]:
        columns = [
            "min_correctness",
            "min_relevance",
            "cleared_count",
            "cleared_share",
            "reviewed_cleared",
            "missed",
            "miss_rate_upper_95",
            "miss_rate_upper_95_by_document",
        ]
        shares = {"cleared_share", "miss_rate_upper_95", "miss_rate_upper_95_by_document"}
        tables["Triage: every rule tried"] = Table(
            [heading(c) for c in columns],
            [[share(s[c]) if c in shares else words.cell(s[c]) for c in columns] for s in triage["sweep"]],
            [True] * len(columns),
        )
    return tables

"""What the report says, gathered from the project as plain data: no HTML here (render.py and the
templates in resources/report/ write it). The content's shape is content.py; the tables are
tables.py, the answers with errors errors.py.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from app import raters
from app.errors import AssayError
from app.export.report import words
from app.export.report.content import (
    SLICES,
    Agreement,
    Guidelines,
    Headline,
    Number,
    RaterLine,
    Redact,
    Report,
    Signoff,
    Table,
    Triage,
)
from app.export.report.errors import ERROR_TAGS, error_answers
from app.export.report.tables import (
    TOO_FEW,
    appendix_tables,
    comparisons,
    correctness_only,
    mean_interval,
    scores_table,
    without_untaggable,
)
from app.export.report.words import heading, share
from app.figures import analytics as stats
from app.figures import estimates
from app.figures.rater_names import rater_name, rater_phrase, sentence_start
from app.figures.triage import triage as lemaj_triage
from app.project import Project
from storage import analytics


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
    triage = lemaj_triage(project)
    speaker = raters.speaks_as_finding(project.sessions)  # the rater the whole-set figures may come from
    estimate_all = estimates.estimate(project, "all")

    def info(key: str) -> Number:
        return Number(counts[key], f"{counts[key]:,}", "info", key)

    only = correctness_only(project)
    reviewers: list[RaterLine] = []
    judges: list[RaterLine] = []
    for n, row in enumerate(by_rater):
        tags = {t: Number(row[t], str(row[t]), "scores --by rater", f"{n}.{t}") for t in (*ERROR_TAGS, "irrelevant")}
        line = RaterLine(
            redact(rater_name(row["rater"])),
            Number(row["answers"], str(row["answers"]), "scores --by rater", f"{n}.answers"),
            **tags,
            cannot_tag=row["rater"] in only,
        )
        (judges if kinds.get(row["rater"]) == "judge" else reviewers).append(line)
    agreement, problem = _agreement(project, redact)
    standings, planted, note, demonstration = _standings(project, redact)
    report = Report(
        title="Review of LLM answers",
        project=redact(report_title(project)),
        made_at=dt.datetime.now(dt.UTC).strftime("%d %B %Y"),
        documents=info("documents"),
        answers=info("answers"),
        questions=info("questions"),
        points=info("claims"),  # each once: not the judge's, the jury's and the reviewers' records of it
        labels=info("labels"),
        reviewers=reviewers,
        judges=judges,
        headlines=(_headlines(estimate_all, redact(rater_phrase(speaker.name)), counts["answers"]) if speaker else [])
        + _reviewer_headlines(by_rater, per_answer, kinds, redact, only),
        triage=_triage(triage, by_rater, speaker.name if speaker else None, redact),
        agreement=agreement,
        agreement_problem=problem,
        guidelines=_guidelines(project, redact),
        scores={by: scores_table(project, by, per_answer, redact) for by in SLICES},
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
    report.error_answers_total, report.error_answers = error_answers(project, points, kinds, redact)
    report.comparisons, report.comparison_notes = comparisons(project, redact)
    report.appendix = appendix_tables(project, per_answer, triage, redact)
    # a rater that tags correct or incorrect only is drawn with no relevance, never one of 1.00
    drawn = [without_untaggable(r) if r["rater"] in only else r for r in per_answer]
    report.figures_data = (drawn, points, triage, only)
    report.calibration = _calibration(project)
    _speaker(project, speaker, redact, report)
    return report


def _speaker(project: Project, speaker: Any, redact: Redact, report: Report) -> None:
    """Which automatic rater the figures come from, and those left out: named in the summary, with
    their standing's figures in the judges' section."""
    with project.sessions() as session:
        chosen = raters.chosen(session)
    if speaker is not None:
        why = {"project": "trusted on human labels", "data card": "trusted on the held-out labels of its data card"}
        reason = "chosen by the lead" if chosen == speaker.name else why.get(speaker.basis, "trusted")
        phrase = redact(rater_phrase(speaker.name))  # "the claim checker": a sentence's words, one colon a sentence
        report.speaker = (phrase, reason)
        report.speaker_standing = f"{sentence_start(phrase)} speaks for the project. It is {_clause(speaker.words)}."
    left = raters.left_out(project.sessions)
    why_not = {True: "measured less well", False: "near chance", None: "not measured yet"}
    report.left_out = [(redact(rater_name(s.name)), why_not[s.trusted]) for s in left]
    report.left_out_standing = [
        f"{sentence_start(redact(rater_phrase(s.name)))} is left out, {_clause(s.words)}." for s in left
    ]
    report.left_out_rule = raters.RULE if left else ""


def _clause(standing: str) -> str:
    """A standing's words inside a sentence ("trusted: caught 57 % …" → "trusted; it caught 57 % …"): no
    colon after the sentence's own."""
    return standing.replace("trusted: ", "trusted; it ", 1)


def report_title(project: Project) -> str:
    """What the report is about: the matter its users named (`assay title NAME`), with the one matter
    it holds (a report of one matter, `--matter M`) after it; else, as a last resort, the project
    file's name without its folder and extension (a database's name on a server)."""
    from storage.matters import matters

    named = project.matter_name()
    with project.sessions() as session:
        held = matters(session)
    if len(held) == 1 and held[0].name != named:
        return f"{named}: {held[0].label}" if named else held[0].label
    if named:
        return named
    last = project.url.rsplit("/", 1)[-1].split("?", 1)[0]
    return last.removesuffix(".assay").removesuffix(".sqlite").removesuffix(".db") or "Assay project"


# ---------------------------------------------------------------- the summary's figures


def _headlines(result: dict[str, Any], speaker: str, answers: int) -> list[Headline]:
    """Share of answers with an error and mean correctness, each with its 95 % interval: over the whole
    set, prediction-powered, where answers drawn at random were reviewed; else the `speaker`'s own tags
    (`speaker` as a sentence names it: "the claim checker"),
    named as such, over the answers it rated (of `answers`): its flags, not an error rate."""
    if not result["groups"]:
        return []
    out = []
    command = "estimate --by all"
    for metric, what, alone in (
        (
            "any_incorrect",
            "Answers with at least one incorrect point, whole set",
            f"Answers in which {speaker} flagged a point",
        ),
        ("correctness", "Correctness, whole set", f"Share of points {speaker} found correct"),
    ):
        figures = result["groups"][0]["metrics"][metric]
        reviewed = Number(figures["reviewed"], str(figures["reviewed"]), command, f"groups.0.metrics.{metric}.reviewed")
        judged = Number(figures["judged"], str(figures["judged"]), command, f"groups.0.metrics.{metric}.judged")
        total = Number(answers, f"{answers:,}", "info", "answers")
        basis: list[str | Number]
        if figures["reviewed"] >= 2 and figures["ppi"]:
            kind = "ppi"
            basis = [reviewed, " random reviews, with the judge on ", judged, " answers"]
        elif figures["judge_only"]:
            kind = "judge_only"
            what = alone
            basis = [f"{sentence_start(speaker)} alone, over the ", judged, " answers it rated of the ", total]
            basis += [": no random review corrects it yet, so it is not an error rate"]
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
                whole_set=kind == "ppi",
            )
        )
    return out


def _reviewer_headlines(
    by_rater: list[dict[str, Any]],
    per_answer: list[dict[str, Any]],
    kinds: dict[str, str],
    redact: Redact,
    correctness_only: set[str] = frozenset(),  # type: ignore[assignment]
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
            if row[metric] is None or (metric == "f1" and row["rater"] in correctness_only):
                continue  # a rater is never scored on tags it cannot give
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
                    no_interval=TOO_FEW if low is None else "—",
                )
            )
    return out


def _triage(result: dict[str, Any], by_rater: list[dict[str, Any]], speaker: str | None, redact: Redact) -> Triage:
    """Triage's figures, with the rater it read named from the same result, and the answers that rater
    tagged points in as the summary's "Which judges" counts them (`scores --by rater`)."""

    def n(key: str, text: str | None = None) -> Number:
        value = result[key]
        return Number(value, text if text is not None else str(value), "triage", key)

    if not result["judged"]:
        return Triage(judged=n("judged"))
    row = next(((i, r) for i, r in enumerate(by_rater) if r["rater"] == result["rater"]), None)
    tagged = (
        None
        if row is None
        else Number(row[1]["answers"], str(row[1]["answers"]), "scores --by rater", f"{row[0]}.answers")
    )
    return Triage(
        judged=n("judged"),
        rater=redact(rater_phrase(result["rater"])),  # "the claim checker", in the sentence that names it
        tagged=tagged,
        trusted=result["rater"] == speaker,
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


def agreement_meaning(
    ac1: float | None, percent: float | None, kappa: float | None = None, alpha: float | None = None
) -> str:
    """What a chance-corrected agreement says, on the bands reviewers of annotation quote (Landis and
    Koch 1977, read for Gwet's AC1 as in Gwet 2014): the band of the most conservative of AC1, κ and α,
    and whether the three figures agree (AC1 reads high where one tag is rare, κ and α low)."""
    figures = {name: value for name, value in (("AC1", ac1), ("κ", kappa), ("α", alpha)) if value is not None}
    if not figures:
        return "Agreement beyond chance cannot be computed: the raters used a single tag."
    bands = ((0.8, "almost perfect"), (0.6, "substantial"), (0.4, "moderate"), (0.2, "fair"), (0.0, "slight"))

    def band(value: float) -> str:
        return next((word for floor, word in bands if value >= floor), "worse than chance")

    lowest = min(figures, key=lambda name: figures[name])
    said = f"Beyond what chance would give, the raters' agreement is {band(figures[lowest])}"
    if len({band(value) for value in figures.values()}) > 1:
        # named, not quoted: the figures themselves stand beside the sentence, each traced to its command
        listed = ", ".join(figures)
        said += f" by the most conservative figure ({lowest}); {listed} do not agree."
    else:
        said += "; the figures agree." if len(figures) > 1 else "."
    if figures[lowest] < 0.6:
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
            meaning=agreement_meaning(
                result.get("gwet_ac1"),
                result.get("percent_agreement"),
                result.get("cohen_kappa") if result.get("cohen_kappa") is not None else result.get("fleiss_kappa"),
                result.get("krippendorff_alpha"),
            ),
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
                standing_words(s),
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


def standing_words(s: Any) -> str:
    """A judge's standing in a few words that agree with its figures beside them: a judge that raised
    an alarm on most correct answers is not "measured" and left at that."""
    if s.demonstration and not (s.real or s.figures):  # a model the user installed, say, not yet measured
        return "never measured on this project: do not rely on its tags yet"
    if s.demonstration:
        return "near chance on this project: do not rely on its tags"
    real = s.real or {}
    if real.get("correct") and real.get("false_alarm_rate") is not None and real["false_alarm_rate"] >= 0.5:
        most = "every" if real["false_alarms"] == real["correct"] else "most"
        return f"unreliable: flagged {most} correct answer"
    if real.get("with_errors") and real.get("recall") is not None and real["recall"] < 0.5:
        return "unreliable: missed most wrong answers"
    if real and real.get("answers", 0) < 30:
        return f"rough: checked on {real['answers']} answer{'s' * (real['answers'] != 1)}"
    if real:
        return "checked against human labels"
    return "checked on planted errors only" if s.figures else "not checked"


def _calibration(project: Project) -> dict[str, Any] | None:
    from app.figures import calibration

    found = calibration.reliability(project)
    return found if found["overall"]["points"] else None


def _count_share(r: dict[str, Any], k: str, n: str, rate: str, ci: str) -> str:
    if not r.get(n):
        return "—"
    lo, hi = r[ci]
    return f"{r[k]} of {r[n]} ({share(r[rate])}; {words.interval(lo, hi)})"

"""The report's tables: scores with intervals by slice, generators compared, and the appendix."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from app.errors import AssayError
from app.export.report import words
from app.export.report.content import Redact, Table
from app.export.report.words import cell, heading, share
from app.figures import analytics as stats
from app.figures import estimates
from app.figures.rater_names import rater_name
from app.project import Project
from storage import rubric_results

NO_GENERATOR = ("unknown", "None")  # how the scores (and the estimates) key an answer without a generator


# ---------------------------------------------------------------- scores with intervals


MIN_ANSWERS_FOR_INTERVAL = 3  # below this a t interval is either as wide as the scale or, when two agree, of no width
TOO_FEW = "too few answers for an interval"


def mean_interval(values: list[float]) -> tuple[float | None, float | None]:
    """The 95 % t interval of a mean of scores in [0, 1], clipped to [0, 1]; none below three values.
    Where every score is the same (five answers all 1.00) the t interval has no width, which no sample
    of five shows: the Wilson interval of that mean is used, the widest spread a score in [0, 1] with
    that mean can have."""
    if len(values) < MIN_ANSWERS_FOR_INTERVAL:
        return None, None
    import numpy as np
    from scipy import stats as scipy_stats

    data = np.asarray(values, dtype=float)
    if float(data.std(ddof=1)) == 0.0:
        low, high = wilson(float(data.mean()), len(data))
        return min(low, float(data.mean())), max(high, float(data.mean()))  # the mean inside, to the last bit
    half = scipy_stats.t.ppf(0.975, len(data) - 1) * data.std(ddof=1) / np.sqrt(len(data))
    return max(0.0, float(data.mean() - half)), min(1.0, float(data.mean() + half))


def wilson(share: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95 % Wilson score interval of a share seen over n."""
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (share * (1 - share) / n + z * z / (4 * n * n)) ** 0.5
    return max(0.0, centre - half), min(1.0, centre + half)


def interval_text(values: list[float]) -> str:
    """A mean's 95 % interval as a table writes it, or why there is none."""
    low, high = mean_interval(values)
    if low is None and values:
        return TOO_FEW
    return words.interval(low, high, as_share=False)


CANNOT_TAG = "—*"  # a figure of tags the rater cannot give: never a score of 1.00 or a count of 0
CANNOT_TAG_NOTE = (
    "—* the rater cannot tag a point irrelevant or missing (the claim checker, and labels imported as spans, "
    "say correct or incorrect only): its relevance and missing points are not figures of it, in this table "
    "and in those by source, document and generator."
)
CANNOT_TAG_ROWS_NOTE = (
    "—* the rater cannot tag a point irrelevant or missing (the claim checker, and labels imported as spans, "
    "say correct or incorrect only): its irrelevant and missing points and its relevance are not figures of it."
)


UNTAGGABLE = ("irrelevant", "missing", "precision", "recall", "f1")  # what a correct/incorrect rater cannot give


def without_untaggable(row: dict[str, Any]) -> dict[str, Any]:
    """A correct/incorrect rater's scores of an answer without the figures of tags it cannot give (its
    relevance of 1.00 says only that it never tagged a point irrelevant or missing)."""
    return row | {key: None for key in UNTAGGABLE if key in row}


def correctness_only(project: Project) -> set[str]:
    """The raters that tag points correct or incorrect only: the claim checker (model-free, it reads
    what a point says, never what an answer leaves out), and imported labels that never used another tag
    (span labels: supported, contradicted, unsupported)."""
    with project.sessions() as session:
        from storage import raters

        found = raters.raters(session)
    used = {r["rater"]: r for r in stats.scores(project, by="rater")}
    out = set()
    for rater in found:
        config = rater.config or {}
        other = used.get(rater.name, {})
        never = not other.get("irrelevant") and not other.get("missing")
        if config.get("backend") == "verifier" or (config.get("imported_from") and never):
            out.add(rater.name)
    return out


def scores_table(project: Project, by: str, per_answer: list[dict[str, Any]], redact: Redact) -> Table:
    """Mean correctness and relevance of each slice and rater, with 95 % intervals over its answers; a
    rater's relevance and missing points are left out (CANNOT_TAG) where it cannot give those tags."""
    rows = stats.scores(project, by=by)
    only = correctness_only(project)
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
    titles = project.document_titles() if by == "document" else {}
    out = []
    for r in rows:
        key = "" if by == "rater" else r[by]
        found = values[(key, r["rater"])]
        line = [] if by == "rater" else [redact(titles.get(key) or slice_value(by, key))]
        line += [redact(rater_name(r["rater"])), str(r["answers"])]
        cannot = r["rater"] in only
        for metric in ("correctness", "f1"):
            if metric == "f1" and cannot:
                line += [CANNOT_TAG, CANNOT_TAG]
                continue
            line += [words.score(r[metric]), interval_text(found[metric])]
        line += [str(r["incorrect"]), CANNOT_TAG if cannot else str(r["missing"])]
        out.append(line)
    columns = [] if by == "rater" else [heading(by)]
    columns += [heading("rater"), heading("answers"), heading("correctness"), heading("interval")]
    columns += [heading("f1"), heading("interval"), heading("incorrect"), heading("missing")]
    # Said once, under the first table (by rater): every rater of the other slices is in it.
    caption = CANNOT_TAG_NOTE if by == "rater" and any(r["rater"] in only for r in rows) else ""
    numeric = [n >= len(columns) - 7 for n in range(len(columns))]
    return Table(columns, out, numeric, caption, grouped=by != "rater")


def slice_value(by: str, key: str) -> str:
    if by == "generator" and key in NO_GENERATOR:
        return "no generator recorded"
    return key


# ---------------------------------------------------------------- comparisons and the appendix


def _interval_text(figures: dict[str, Any] | None, as_share: bool = False) -> str:
    if not figures:
        return "—"
    write = share if as_share else words.score
    low, high = figures["ci"]
    return f"{write(figures['estimate'])} [{words.interval(low, high, as_share=as_share)}]"


def _as_interval(estimate: float | None, interval: list[float] | None) -> dict[str, Any] | None:
    return {"estimate": estimate, "ci": interval} if interval else None


def comparisons(project: Project, redact: Redact, most: int = 6) -> tuple[Table | None, list[str]]:
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


def appendix_tables(
    project: Project, per_answer: list[dict[str, Any]], triage: dict[str, Any], redact: Redact
) -> dict[str, Table]:
    tables: dict[str, Table] = {}
    columns = ["answer_id", "rater", "correct", "incorrect", "irrelevant", "missing", "correctness", "f1"]
    only = correctness_only(project)
    tables["Scores of every answer, by rater"] = Table(
        [heading(c) for c in columns],
        [
            [
                r["answer_id"],
                rater_name(r["rater"]),
                *(CANNOT_TAG if r["rater"] in only and c in UNTAGGABLE else words.cell(r[c]) for c in columns[2:]),
            ]
            for r in per_answer
        ],
        [False, False, True, True, True, True, True, True],
        CANNOT_TAG_ROWS_NOTE if any(r["rater"] in only for r in per_answer) else "",
        keep=[True] + [False] * 7,
    )
    rows = []
    for group in redact(estimates.estimate(project, "generator"))["groups"]:
        for metric in ("correctness", "f1", "any_incorrect"):
            f = group["metrics"][metric]
            as_share = metric == "any_incorrect"
            rows.append(
                [
                    slice_value("generator", group["group"]),
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
            keep=[True, False, False, False, False],
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
        tables["Triage: every rule tried"] = Table(
            [heading(c) for c in (*columns, "rules")],
            sweep_rows(triage["sweep"], columns),
            [True] * (len(columns) + 1),
            "Rules that give the same figures share a row: their thresholds run over the range shown, "
            "and the last column counts them.",
        )
    return tables


def sweep_rows(sweep: list[dict[str, Any]], columns: list[str]) -> list[list[str]]:
    """The triage sweep's rules, those that give the same figures as one row: each threshold as the range
    it runs over (a row per correctness threshold where the rules sharing figures are not every
    combination of their thresholds), and how many rules the row stands for."""
    shares = {"cleared_share", "miss_rate_upper_95", "miss_rate_upper_95_by_document"}
    thresholds = {c: sorted({s[c] for s in sweep}) for c in columns[:2]}
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for s in sweep:
        figures = tuple(share(s[c]) if c in shares else words.cell(s[c]) for c in columns[2:])
        groups.setdefault(figures, []).append(s)

    def span(column: str, values: set[float]) -> str:
        """The values as a range of the sweep's thresholds where they run without a gap, else listed."""
        every = thresholds[column]
        found = [v for v in every if v in values]
        if len(found) == 1:
            return words.cell(found[0])
        if every.index(found[-1]) - every.index(found[0]) == len(found) - 1:
            return f"{words.cell(found[0])} – {words.cell(found[-1])}"
        return ", ".join(words.cell(v) for v in found)

    rows = []
    for figures, rules in groups.items():
        correctness = {s[columns[0]] for s in rules}
        relevance = {s[columns[1]] for s in rules}
        whole = len(rules) == len(correctness) * len(relevance)  # every combination of the two ranges
        parts = (
            [rules] if whole else [[s for s in rules if s[columns[0]] == c] for c in sorted(correctness, reverse=True)]
        )
        for part in parts:
            ranges = [span(c, {s[c] for s in part}) for c in columns[:2]]
            rows.append([*ranges, *figures, str(len(part))])
    return rows

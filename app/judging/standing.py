"""How good each judge is, said where its tags are shown: first how it did against human labels, where
people have labelled answers it judged, then the share of planted errors its latest paired stress test
caught. A judge near chance, or never measured, is called a demonstration model.

Against human labels the figures are storage.statistics.real_label_figures (the rule is there).

Decision: on human labels, "near chance" is app.raters' one definition (not flagging the wrong answers
clearly more often than the correct ones: Fisher's exact test); where both kinds of answer are known it
decides. Otherwise "near chance" is catching fewer than half of the planted errors (a rater that flags
points at random catches about as many as it flags). A model's standing is that of the run with that
model whose stress test is the latest, with the human-label figures of the run with that model that the
most human-labelled answers measure (the latest of equals).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.orm import Session, sessionmaker

from app.raters import data_card_counts, standing_from_counts
from app.settings import ModelChoice
from models.vocabulary import BackendKind
from storage import raters, reviews
from storage.statistics import real_label_figures

DEMONSTRATION_BELOW = 0.5  # catching fewer than half of planted errors is no better than a coin
STRESS_SETTING = "stress.{}"  # the latest figures of each rater, kept in the project's settings
MODEL_RATERS = tuple(BackendKind)  # the backends whose runs are language models


@dataclass(frozen=True)
class Standing:
    run: str | None  # the judge run the figures are of (None: no run with this model was tested)
    text: str  # "human labels on 34 answers: caught 9 of 14 wrong answers (…); planted errors: caught 94%"
    demonstration: bool
    figures: dict[str, Any] | None  # the latest stress test's (planted errors)
    real: dict[str, Any] | None = None  # against human labels (real_label_figures), shown first
    held_out: str | None = None  # the claim checker's held-out figures (its data card), where nothing else is

    @property
    def measured(self) -> bool:
        return self.figures is not None or self.real is not None

    @property
    def short(self) -> str:
        """For a column header: the wrong answers caught, else the planted errors caught, else that it
        was never measured."""
        if self.real is not None:
            r = self.real
            if r["with_errors"]:
                return f"caught {r['caught']}/{r['with_errors']} real errors"
            return f"false alarms on {r['false_alarms']}/{r['correct']} correct answers"
        if self.figures is None:
            return self.held_out or "not stress-tested"
        return f"caught {self.figures['caught_share']:.0%}"


def latest_figures(session: Session, rater: str) -> dict[str, Any] | None:
    return reviews.setting(session, STRESS_SETTING.format(rater))


def real_label_text(real: dict[str, Any]) -> str:
    """The figures in words, e.g. "human labels on 34 answers: caught 9 of 14 wrong answers (64%; 95% CI
    39%–84%), false alarms on 2 of 20 correct answers (10%; 95% CI 3%–30%)"."""
    parts = []
    if real["with_errors"]:
        parts.append(f"caught {real['caught']} of {real['with_errors']} wrong answers ({_share(real, 'recall')})")
    if real["correct"]:
        alarms = f"{real['false_alarms']} of {real['correct']} correct answers"
        parts.append(f"false alarms on {alarms} ({_share(real, 'false_alarm_rate', 'false_alarm_ci')})")
    return f"human labels on {real['answers']} answers: " + ", ".join(parts)


def _share(real: dict[str, Any], key: str, ci: str = "recall_ci") -> str:
    lo, hi = real[ci]
    return f"{real[key]:.0%}; 95% CI {lo:.0%}–{hi:.0%}"


def real_label_note(real: dict[str, Any] | None) -> str | None:
    """Who labelled, and whether at random, e.g. "Human labels by ContractNLI annotators; none of the 34
    answers was drawn at random for review."."""
    if not real:
        return None
    n, sampled = real["answers"], real["sampled"]
    if sampled == n:
        drawn = f"all {n} answers were drawn at random for review"
    else:
        drawn = f"{sampled or 'none'} of the {n} answers {'was' if sampled < 2 else 'were'} drawn at random for review"
    return f"Human labels by {', '.join(real['human_raters'])}; {drawn}."


def standing_from(
    run: str | None, figures: dict[str, Any] | None, is_model: bool = True, real: dict[str, Any] | None = None
) -> Standing:
    """A rater's standing in words: against human labels first, where it has been measured so, then
    its planted errors (named as such)."""
    planted = figures if figures and figures.get("caught_share") is not None else None
    if real is not None:
        text = real_label_text(real)
        if planted is not None:
            text += f"; planted errors: caught {planted['caught_share']:.0%}"
        if real["with_errors"] and real["correct"]:
            counts = {k: real[k] for k in ("with_errors", "caught", "correct")}
            near_chance = not standing_from_counts(run or "", "project", alarms=real["false_alarms"], **counts).trusted
        else:
            near_chance = planted is None or planted["caught_share"] < DEMONSTRATION_BELOW
        near_chance = is_model and near_chance
        prefix = "demonstration model: " if near_chance else ""
        return Standing(run, prefix + text, near_chance, planted, real)
    if planted is None:
        if not is_model:
            return Standing(run, "not stress-tested", False, None)
        how = f" (assay stress-test --raters {run})" if run else ""
        return Standing(run, f"demonstration model: not stress-tested{how}", True, None)
    near_chance = is_model and planted["caught_share"] < DEMONSTRATION_BELOW
    prefix = "demonstration model: " if near_chance else ""
    return Standing(run, prefix + planted_text(planted), near_chance, planted)


def planted_text(figures: dict[str, Any]) -> str:
    """A stress test's figures in words: "caught 94% of planted errors, false alarms on 1% of correct points"."""
    alarms = figures.get("false_alarm_rate")
    alarm_text = "" if alarms is None else f", false alarms on {alarms:.0%} of correct points"
    return f"caught {figures['caught_share']:.0%} of planted errors{alarm_text}"


def standing_of_run(sessions: sessionmaker[Session], rater: str) -> Standing:
    with sessions() as session:
        run = raters.rater_named(session, rater)
        figures = latest_figures(session, rater)
        real = real_label_figures(session, rater)
    is_model = run is None or run.config.get("backend", "local") in MODEL_RATERS
    found = standing_from(rater, figures, is_model, real)
    if real is None and found.figures is None and run is not None and run.config.get("backend") == "verifier":
        card = data_card_counts()  # the project has no human label yet: the checker's held-out ones
        if card is not None:
            held = standing_from_counts(rater, "data card", **card)
            return replace(found, text=held.words, held_out=f"caught {held.recall:.0%} held-out")
    return found


def model_key(config: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """What a run's model is, whatever way it was chosen: backend, model (a file's name), host."""
    backend = config.get("backend", "local")
    if backend == "local":
        return backend, Path(str(config.get("model_path") or config.get("model") or "")).name or None, None
    return backend, config.get("model"), config.get("host") or urlsplit(config.get("base_url") or "").hostname


def choice_key(choice: ModelChoice) -> tuple[str, str | None, str | None]:
    if choice.kind in ("embedded", "gguf"):
        from models.backends.llama_local import EMBEDDED_MODEL_FILE

        name = EMBEDDED_MODEL_FILE if choice.kind == "embedded" else Path(choice.model or "").name or None
        return "local", name, None
    host = urlsplit(choice.base_url or "").hostname or ("api.anthropic.com" if choice.kind == "anthropic" else None)
    return choice.kind, choice.model, host


def standing_of_model(sessions: sessionmaker[Session], choice: ModelChoice) -> Standing:
    """The chosen model's figures: against human labels, those of its LeMAJ run that the most human-labelled
    answers measure; planted errors, its run's whose stress test is the latest."""
    wanted = choice_key(choice)
    measured, labelled = [], []
    with sessions() as session:
        for run in raters.raters(session):
            if run.kind.value == "judge" and model_key(run.config) == wanted:
                figures = latest_figures(session, run.name)
                if figures and figures.get("caught_share") is not None:
                    measured.append((str(figures.get("measured_at", "")), run.name, figures))
                if real := real_label_figures(session, run.name):
                    labelled.append((real["answers"], run.id, real))
    real = max(labelled, key=lambda found: found[:2])[2] if labelled else None
    if not measured:
        return standing_from(real["rater"] if real else None, None, real=real)
    _, run_name, figures = max(measured)
    return standing_from(run_name, figures, real=real)


def judge_standings(sessions: sessionmaker[Session]) -> list[Standing]:
    """Every judge run's standing (juries and the verifier too), for the report."""
    with sessions() as session:
        runs = [r for r in raters.raters(session) if r.kind.value == "judge"]
        figures = {r.name: latest_figures(session, r.name) for r in runs}
        real = {r.name: real_label_figures(session, r.name) for r in runs}
    return [
        standing_from(r.name, figures[r.name], r.config.get("backend", "local") in MODEL_RATERS, real[r.name])
        for r in runs
    ]


def figure_lines(figures: dict[str, Any] | None) -> list[str]:
    """Per planted error: "change_value: caught 33 of 35 (94%; 95% CI 81–98%)"."""
    if not figures:
        return []
    lines = []
    for kind, f in figures["by_type"].items():
        if f["trials"]:
            lo, hi = f["ci"]
            lines.append(f"{kind}: caught {f['caught']} of {f['trials']} ({f['recall']:.0%}; 95% CI {lo:.0%}–{hi:.0%})")
    if figures.get("unperturbed"):
        lines.append(f"false alarms: {figures['false_alarms']} of {figures['unperturbed']} correct points")
    return lines

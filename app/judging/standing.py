"""How good each judge is, said where its tags are shown: the share of planted errors its latest paired
stress test caught. A judge near chance, or never measured, is called a demonstration model.

Decision: "near chance" is catching fewer than half of the planted errors (a rater that flags points at
random catches about as many as it flags), and a model's standing is that of the run with that model
whose stress test is the latest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.orm import Session, sessionmaker

from app.settings import ModelChoice
from models.vocabulary import BackendKind
from storage import raters, reviews

DEMONSTRATION_BELOW = 0.5  # catching fewer than half of planted errors is no better than a coin
STRESS_SETTING = "stress.{}"  # the latest figures of each rater, kept in the project's settings
MODEL_RATERS = tuple(BackendKind)  # the backends whose runs are language models


@dataclass(frozen=True)
class Standing:
    run: str | None  # the judge run the figures are of (None: no run with this model was tested)
    text: str  # "demonstration model: caught 3% of planted errors, false alarms on 1% of correct points"
    demonstration: bool
    figures: dict[str, Any] | None

    @property
    def short(self) -> str:
        """For a column header: the share caught, else that it was never measured."""
        if self.figures is None:
            return "not stress-tested"
        return f"caught {self.figures['caught_share']:.0%}"


def latest_figures(session: Session, rater: str) -> dict[str, Any] | None:
    return reviews.setting(session, STRESS_SETTING.format(rater))


def standing_from(run: str | None, figures: dict[str, Any] | None, is_model: bool = True) -> Standing:
    if not figures or figures.get("caught_share") is None:
        if not is_model:
            return Standing(run, "not stress-tested", False, None)
        how = f" (assay stress-test --raters {run})" if run else ""
        return Standing(run, f"demonstration model: not stress-tested{how}", True, None)
    share = figures["caught_share"]
    alarms = figures.get("false_alarm_rate")
    alarm_text = "" if alarms is None else f", false alarms on {alarms:.0%} of correct points"
    near_chance = is_model and share < DEMONSTRATION_BELOW
    prefix = "demonstration model: " if near_chance else ""
    return Standing(run, f"{prefix}caught {share:.0%} of planted errors{alarm_text}", near_chance, figures)


def standing_of_run(sessions: sessionmaker[Session], rater: str) -> Standing:
    with sessions() as session:
        run = raters.rater_named(session, rater)
        figures = latest_figures(session, rater)
    is_model = run is None or run.config.get("backend", "local") in MODEL_RATERS
    return standing_from(rater, figures, is_model)


def reference_standing(sessions: sessionmaker[Session], answer_id: str) -> Standing | None:
    """The standing of the judge run whose tags the reviewer sees on this answer (None: no judge ran)."""
    with sessions() as session:
        rater_id = reviews.reference_judge(session, answer_id)
        names = {r.id: r.name for r in raters.raters(session)}
    return None if rater_id is None else standing_of_run(sessions, names[rater_id])


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
    """The latest stress-test figures of any LeMAJ run with the chosen model."""
    wanted = choice_key(choice)
    measured = []
    with sessions() as session:
        for run in raters.raters(session):
            if run.kind.value == "judge" and model_key(run.config) == wanted:
                figures = latest_figures(session, run.name)
                if figures and figures.get("caught_share") is not None:
                    measured.append((str(figures.get("measured_at", "")), run.name, figures))
    if not measured:
        return standing_from(None, None)
    _, run_name, figures = max(measured)
    return standing_from(run_name, figures)


def judge_standings(sessions: sessionmaker[Session]) -> list[Standing]:
    """Every judge run's standing (juries and the verifier too), for the report."""
    with sessions() as session:
        runs = [r for r in raters.raters(session) if r.kind.value == "judge"]
        figures = {r.name: latest_figures(session, r.name) for r in runs}
    return [standing_from(r.name, figures[r.name], r.config.get("backend", "local") in MODEL_RATERS) for r in runs]


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

"""The "Check this model" of the picker: how good a chosen model is on this project, and how long it would take, before
the user commits hours to a full run.

The model judges a small set of answers people have labelled (the project's submitted human reviews:
its randomly drawn reviews and imported labels), drawn at random, as its own judge run `check:<model>`.
Its figures are those of `standing.real_label_figures` (answer-level recall and false alarms, Wilson 95 %
intervals) with the answer-level agreement with the humans, and, being an ordinary judge run of that
model, they become the model's standing in the window and the report.

The estimate of the whole project's judging time is built from the check's own answers, timed, as a
judge reads a contract in one of two ways. A contract that fits the context is read once, with its
first answer (the judge keeps it), and each later answer costs only its own prompt and reply: the
checked answers after the first on their contract give that cost (their median), the first ones the
cost of reading a contract, per token. A contract longer than the context gets passages chosen for
each answer, filling the context anew every time: the check times answers about the project's longest
contract for that cost (the labelled answers are often about short ones). A model's speed per token
is not one figure: short calls cost more per token than one long read, so these are measured, not fitted.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from app.errors import AssayError
from app.judging.cases import GENERATION_RESERVE
from app.judging.runs import JudgeSettings, Progress, make_backend, run_judge
from app.judging.standing import Standing, standing_of_run
from app.project import Project
from models.backends.base import JudgeBackend
from models.judge import JudgeCase, LemajJudge
from models.prompts import EvidencePassage, Strictness, evidence_text, one_pass_prompt
from models.verdict import Verdict
from models.vocabulary import PassageKind
from storage import reviews
from storage.answers import answers_about_longest_document
from storage.statistics import real_label_figures, wilson_interval

CHECK_ANSWERS = 12  # a few minutes with a 7B model on a laptop; enough for a first interval
LONG_TIMED = 2  # answers about the longest contract the check times (the second reuses some of the first's read)
CHECK_SETTING = "model_check.{}"  # the latest check of each run: its timing, for a check that judged nothing new


@dataclass(frozen=True)
class AnswerCost:
    answer_id: str
    seconds: float
    evaluated: int  # prompt tokens computed (the rest came from the model's cache)
    completion: int
    points: int


@dataclass
class ModelCheck:
    run: str  # the judge run holding the check's tags
    model: str  # as the run names it: a file's name, Ollama's name:tag
    answers: int  # labelled answers judged and compared
    labelled: int  # labelled answers the project has
    timed: list[str]  # answers judged only for their time (about the longest contract)
    seconds: float  # the check's judging time
    figures: dict[str, Any] | None  # real_label_figures, with agreement and agreement_ci
    project_answers: int
    estimate_seconds: float | None  # judging every answer of the project on this computer
    rates: Rates | None  # what the estimate is made of
    standing: str
    costs: list[AnswerCost] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """The check in words, figure by figure."""
        timed = f" (and {len(self.timed)} about the longest contract, timed for the estimate)" if self.timed else ""
        lines = [f"{self.model}: judged {self.answers} human-labelled answers in {_duration(self.seconds)}{timed}"]
        f = self.figures
        if f:
            if f["with_errors"]:
                lines.append(f"recall: caught {f['caught']} of {f['with_errors']} wrong answers ({_ci(f, 'recall')})")
            if f["correct"]:
                lines.append(
                    f"false alarms: {f['false_alarms']} of {f['correct']} correct answers "
                    f"({_ci(f, 'false_alarm_rate', 'false_alarm_ci')})"
                )
            lines.append(
                f"agreement with the humans: {f['agreed']} of {f['answers']} answers "
                f"({_ci(f, 'agreement', 'agreement_ci')})"
            )
        if self.estimate_seconds is not None:
            lines.append(
                f"judging all {self.project_answers} answers of the project here: "
                f"about {_duration(self.estimate_seconds)}"
            )
        lines.append(f"standing: {self.standing}")
        return lines


def _ci(figures: dict[str, Any], key: str, ci: str = "recall_ci") -> str:
    lo, hi = figures[ci]
    return f"{figures[key]:.0%}; 95% CI {lo:.0%}–{hi:.0%}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def labelled_answers(project: Project) -> list[str]:
    """The answers a person submitted a review of (the project's human labels), in id order."""
    with project.sessions() as session:
        return reviews.answers_reviewed_by_people(session)


class _CostedJudge(LemajJudge):
    """The judge, keeping what each answer cost it."""

    costs: list[AnswerCost]

    def evaluate(self, case: JudgeCase, cancel: threading.Event | None = None) -> Verdict:
        verdict = super().evaluate(case, cancel)
        if not verdict.failed:
            points = sum(p.start is not None for p in verdict.points) or len(case.segments())
            self.costs.append(
                AnswerCost(case.answer_id, verdict.seconds, verdict.evaluated_tokens, verdict.completion_tokens, points)
            )
        return verdict


def check_name(backend: JudgeBackend) -> str:
    from pathlib import Path

    described = backend.describe()
    return f"check:{Path(str(described.get('model', 'model'))).name}"


def check_model(
    project: Project,
    settings: JudgeSettings,
    *,
    size: int = CHECK_ANSWERS,
    seed: int = 0,
    name: str | None = None,
    long_timed: int = LONG_TIMED,
    on_progress: Callable[[Progress], None] = lambda _p: None,
    cancel: threading.Event | None = None,
) -> ModelCheck:
    """Judge `size` human-labelled answers drawn at random (seeded) with the chosen model, and measure
    it against the humans and the clock. AssayError when the project has no human labels."""
    labelled = labelled_answers(project)
    if not labelled:
        raise AssayError(
            "this project has no human-labelled answers to check a model against: review a random sample "
            "(assay sample) or import labels (assay import-labels) first"
        )
    chosen = sorted(random.Random(seed).sample(labelled, min(size, len(labelled))))
    timed = _on_longest_contract(project, set(labelled))[:long_timed]
    # No saved document states: the check reads each contract afresh, as a first full run would.
    backend = make_backend(settings, None)
    try:
        judge = _CostedJudge(
            backend,
            settings.mode,
            settings.strictness,
            seed=settings.seed,
            find_missing=settings.find_missing,
            tagging=settings.tagging,
        )
        judge.costs = []
        run = name or check_name(backend)
        started = time.perf_counter()
        run_judge(project.sessions, judge, run, answer_ids=chosen + timed, on_progress=on_progress, cancel=cancel)
        seconds = time.perf_counter() - started
        costs = judge.costs
        with project.sessions.begin() as session:
            if costs:  # remembered: checking again judges nothing new, and keeps these timings
                reviews.set_setting(session, CHECK_SETTING.format(run), [asdict(c) for c in costs])
            else:
                costs = [AnswerCost(**c) for c in reviews.setting(session, CHECK_SETTING.format(run), [])]
                seconds = sum(c.seconds for c in costs)
        rates = measured_rates(project, backend, costs)
        estimate = estimate_seconds(project, backend, rates) if rates else None
    finally:
        backend.close()
    figures = _with_agreement(real_label_figures(project.sessions, run))
    standing: Standing = standing_of_run(project.sessions, run)
    return ModelCheck(
        run=run,
        model=run.removeprefix("check:"),  # Ollama's name, where the file is a blob named by its hash
        answers=figures["answers"] if figures else 0,
        labelled=len(labelled),
        timed=timed,
        seconds=seconds,
        figures=figures,
        project_answers=len(project.answers()),
        estimate_seconds=estimate,
        rates=rates,
        standing=standing.text,
        costs=costs,
    )


def _on_longest_contract(project: Project, labelled: set[str]) -> list[str]:
    """Answers about the project's longest contract, judged only for their time: labelled answers are
    often about short ones, and a long contract is read differently (passages chosen to fill the
    context for each answer), so the estimate needs both. Empty when that contract's answers are all
    labelled (they are timed anyway)."""
    with project.sessions() as session:
        about = answers_about_longest_document(session)
    return [a for a in about if a not in labelled]


def _with_agreement(figures: dict[str, Any] | None) -> dict[str, Any] | None:
    """Answer-level agreement: the answers where the judge flagged exactly those the humans found wrong."""
    if figures is None:
        return None
    agreed = figures["caught"] + figures["correct"] - figures["false_alarms"]
    return figures | {
        "agreed": agreed,
        "agreement": agreed / figures["answers"],
        "agreement_ci": wilson_interval(agreed, figures["answers"]),
    }


@dataclass(frozen=True)
class Rates:
    """What judging an answer costs with this model on this computer, in seconds."""

    answer: float  # an answer about a contract the judge has read: its own prompt and reply
    per_contract_token: float  # reading a contract that fits the context, per token, once
    long_answer: float | None  # an answer about a contract longer than the context (None: none timed)


def measured_rates(project: Project, backend: JudgeBackend, costs: list[AnswerCost]) -> Rates | None:
    """The rates the check's timed answers show (module docstring); None without a timed answer."""
    if not costs:
        return None
    with project.sessions() as session:
        sizes = _ContractSizes(session, backend)
        later, firsts, long = [], [], []
        seen: set[int] = set()
        for cost in costs:  # in the order judged: a run judges a contract's answers together
            contract, fits = sizes.of(cost.answer_id)
            if not fits:
                long.append(cost.seconds)
            elif contract.document_id in seen:
                later.append(cost.seconds)
            else:
                firsts.append((cost.seconds, contract.tokens))
            seen.add(contract.document_id)
    import statistics

    answer = statistics.median(later) if later else min(c.seconds for c in costs)
    reads = [max(seconds - answer, 0.0) / tokens for seconds, tokens in firsts if tokens]
    per_token = statistics.mean(reads) if reads else 0.0
    return Rates(answer, per_token, statistics.mean(long) if long else None)


@dataclass(frozen=True)
class _Contract:
    document_id: int
    tokens: int


class _ContractSizes:
    """Each answer's contract, its length in the model's tokens, and whether the judge reads it whole
    (cases.select_evidence's rule: the whole document when it fits beside the answer's prompt)."""

    def __init__(self, session: Any, backend: JudgeBackend) -> None:
        self.session, self.backend = session, backend
        self.tokens: dict[int, int] = {}

    def of(self, answer_id: str) -> tuple[_Contract, bool]:
        from storage import answers as answer_store
        from storage import documents

        answer = answer_store.answer_detail(self.session, answer_id)
        assert answer is not None
        if answer.document_id not in self.tokens:
            shown = [
                EvidencePassage(p.citation_id, p.section, p.text)
                for p in documents.passages_of(self.session, answer.document_id)
                if p.kind is not PassageKind.TOC
            ]
            self.tokens[answer.document_id] = self.backend.count_tokens(evidence_text(shown))
        frame = one_pass_prompt([], answer.question, answer.text, Strictness.STANDARD)
        prompt = sum(self.backend.count_tokens(m.text) for m in frame.messages)
        tokens = self.tokens[answer.document_id]
        return _Contract(
            answer.document_id, tokens
        ), tokens <= self.backend.context_tokens - GENERATION_RESERVE - prompt


def estimate_seconds(
    project: Project, backend: JudgeBackend, rates: Rates, answer_ids: list[str] | None = None
) -> float:
    """Seconds to judge every answer of the project (or those of `answer_ids`) with this backend, from
    a cold start (module docstring)."""
    ids = answer_ids if answer_ids is not None else [a.id for a in project.answers()]
    total = 0.0
    with project.sessions() as session:
        sizes = _ContractSizes(session, backend)
        read: set[int] = set()
        for answer_id in ids:
            contract, fits = sizes.of(answer_id)
            if not fits:  # passages filling the context, for each answer
                long = rates.long_answer
                budget = backend.context_tokens - GENERATION_RESERVE
                total += long if long is not None else rates.answer + budget * rates.per_contract_token
                continue
            total += rates.answer
            if contract.document_id not in read:
                read.add(contract.document_id)
                total += contract.tokens * rates.per_contract_token
    return total

"""The bundled sample: made with a small human-labelled set the verifier has judged, and on its first
open, the embedded judge's tags on the first screen.

The sample ships two ContractNLI NDAs whose answers ContractNLI's annotators labelled (labels.jsonl,
imported as the human rater "ContractNLI annotators"), held out of the claim checker's training; the
verifier judges them when the sample is made, so its standing against human labels, a held-out figure,
shows from the first open.

A judge run shipped in resources/ would go stale whenever the segmentation or the prompts change,
so the first time the sample is opened, the project's own judge judges a few of its answers in the
background, the one on screen first; the window shows each answer's tags as soon as it is saved.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.ingest.datasets import ImportSummary, import_dataset
from app.ingest.documents import PageProgress
from app.ingest.labels import import_labels
from app.judging.jury import combine_jury
from app.judging.runs import JudgeSettings, Progress, RunSummary, document_state_folder, make_backend, run_judge
from app.judging.verification import VERIFIER, verify_project
from app.project import DEFAULT_GUIDELINES, SAMPLE_DATASET, Project
from storage import reviews, statistics

FIRST_OPEN_ANSWERS = 12  # enough for a queue with scores and triage; Project → Run the judge does the rest
STARTED = "sample.judged_on_first_open"
SAMPLE_LABELS = SAMPLE_DATASET / "labels.jsonl"  # ContractNLI's span labels, one line per answer
SAMPLE_ANNOTATORS = "ContractNLI annotators"  # the human rater they are imported as
# A second generator's answers to 15 of the same questions (the datasaur set's older, shorter answers):
# imported as a second answer file, they join the questions already there, so the sample compares two.
SAMPLE_SECOND_GENERATOR = SAMPLE_DATASET / "short_answers.jsonl"


def import_sample(project: Project, on_progress: Callable[[PageProgress], None] | None = None) -> ImportSummary:
    """Make the bundled sample in an empty project: its documents and answers, the human labels it
    ships (submitted reviews of the rater SAMPLE_ANNOTATORS) and the verifier's run on the labelled
    answers (well under a second an answer)."""
    summary = import_dataset(project.sessions, SAMPLE_DATASET, on_progress=on_progress)
    second = import_dataset(project.sessions, SAMPLE_SECOND_GENERATOR)
    summary.answers_added += second.answers_added
    import_labels(project, SAMPLE_LABELS, "sample", default_rater=SAMPLE_ANNOTATORS)
    project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "sample")  # LeMAJ's, version 1
    verify_project(project.sessions, sorted(labelled_ids()))
    return summary


@dataclass(frozen=True)
class SampleTour:
    answer_ids: tuple[str, ...]  # judged in this order; the window opens the first
    settings: JudgeSettings

    @property
    def first_answer(self) -> str:
        return self.answer_ids[0]


def sample_tour(project: Project) -> SampleTour | None:
    """What to do when this project opens: None unless it is the untouched bundled sample (the
    verifier's run on the labelled answers aside).

    The answers on the shortest contracts come first: the first screen gets its tags within
    seconds to a minute on a laptop's CPU, and a short NDA is the easiest first read. The labelled
    answers are left out: they are there to measure judges, not to show one."""
    answers = project.answers()
    main, second = _sample_ids(SAMPLE_DATASET / "qa.jsonl"), _sample_ids(SAMPLE_SECOND_GENERATOR)
    if {a.id for a in answers} not in (main, main | second):  # a sample made before the second generator has none
        return None
    with project.sessions() as session:
        if reviews.setting(session, STARTED) or statistics.latest_judge_per_answer(session, VERIFIER):
            return None
    size = {a.document: (SAMPLE_DATASET / "documents" / a.document).stat().st_size for a in answers}
    labelled = labelled_ids()
    ordered = sorted((a for a in answers if a.id not in labelled), key=lambda a: (size[a.document], a.id))
    return SampleTour(tuple(a.id for a in ordered[:FIRST_OPEN_ANSWERS]), JudgeSettings())


def judge_sample(
    project: Project,
    tour: SampleTour,
    *,
    on_progress: Callable[[Progress], None] = lambda _p: None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Judge the tour's answers in its order, each saved as it is judged: the sample's rater is a jury
    of the model-free verifier and the embedded judge, "incorrect if the verifier flags, else the
    judge" (the jury's rule, incorrect first), so a near-chance small model is never alone.

    The one place that says which judge the sample gets."""
    cancel = cancel or threading.Event()
    with project.sessions.begin() as session:
        reviews.set_setting(session, STARTED, True)  # once: a cancelled tour is not started again
    backend = make_backend(tour.settings, document_state_folder(project))
    judge = tour.settings.judge(backend)
    name = tour.settings.default_name(backend)
    total = RunSummary(name)
    started, count = time.perf_counter(), len(tour.answer_ids)
    last: list[Progress] = []
    try:
        for answer_id in tour.answer_ids:  # one by one: run_judge orders a batch by document
            if cancel.is_set():
                break
            last.clear()
            verify_project(project.sessions, [answer_id])  # seconds at most: no model
            one = run_judge(
                project.sessions, judge, name, answer_ids=[answer_id], cancel=cancel, on_progress=last.append
            )
            combine_jury(project.sessions, [VERIFIER, name], sample_jury(name), "rule", answer_ids=[answer_id])
            total.judged, total.failed = total.judged + one.judged, total.failed + one.failed
            total.failures.update(one.failures)
            done = total.judged + total.failed
            if last:
                speed, eta = last[-1].tokens_per_second, (time.perf_counter() - started) / done * (count - done)
                on_progress(Progress(done, count, total.failed, answer_id, speed, eta))
    finally:
        backend.close()
    total.cancelled = cancel.is_set() and total.judged + total.failed < count
    return total


def sample_jury(judge_name: str) -> str:
    """The name of the sample's default rater: the verifier and the embedded judge as a jury."""
    return f"jury:{VERIFIER}+{judge_name}"


def labelled_ids() -> set[str]:
    """The sample's answers that ship with human labels."""
    with SAMPLE_LABELS.open(encoding="utf-8") as lines:
        return {json.loads(line)["id"] for line in lines if line.strip()}


def _sample_ids(path: Path) -> set[str]:
    with path.open(encoding="utf-8") as lines:
        return {json.loads(line)["id"] for line in lines if line.strip()}

"""The bundled sample: made with a small human-labelled set the verifier has judged, and on its first
open, the claim checker's verdicts on the first screen.

The sample ships two ContractNLI NDAs whose answers ContractNLI's annotators labelled (labels.jsonl,
imported as the human rater "ContractNLI annotators"), held out of the claim checker's training; the
verifier judges them when the sample is made, so its standing against human labels, a held-out figure,
shows from the first open.

A run shipped in resources/ would go stale whenever the segmentation or the checker change, so the
first time the sample is opened the verifier checks its answers in the background, the one on screen
first; the window shows each answer's verdicts as soon as they are saved. The embedded 135M model is
near chance on these labels: it is a demonstration, run only when asked.
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
from app.judging.runs import Progress, RunSummary
from app.judging.verification import VERIFIER, Verifier, read_contracts, verify_project
from app.project import DEFAULT_GUIDELINES, SAMPLE_DATASET, Project
from storage import documents, reviews, statistics
from storage.answers import list_answers

STARTED = "sample.judged_on_first_open"
SAMPLE_LABELS = SAMPLE_DATASET / "labels.jsonl"  # ContractNLI's span labels, one line per answer
SAMPLE_ANNOTATORS = "ContractNLI annotators"  # the human rater they are imported as
# A second generator's answers to 15 of the same questions (the datasaur set's older, shorter answers):
# imported as a second answer file, they join the questions already there, so the sample compares two.
SAMPLE_SECOND_GENERATOR = SAMPLE_DATASET / "short_answers.jsonl"
SAMPLE_MATTER = "Sample review: eleven contracts and a privacy policy"  # its 12 documents


def import_sample(
    project: Project,
    on_progress: Callable[[PageProgress], None] | None = None,
    on_reading: Callable[[int, int], None] = lambda _d, _t: None,
) -> ImportSummary:
    """Make the bundled sample in an empty project: its documents and answers, the human labels it
    ships (submitted reviews of the rater SAMPLE_ANNOTATORS), the labelled answers' contracts read by the claim
    checker's encoders, and the verifier's run on those answers (well under a second an answer). The other
    contracts are read after the window opens, when the tour has checked their answers (`check_sample`)."""
    summary = import_dataset(project.sessions, SAMPLE_DATASET, on_progress=on_progress)
    second = import_dataset(project.sessions, SAMPLE_SECOND_GENERATOR)
    summary.answers_added += second.answers_added
    import_labels(project, SAMPLE_LABELS, "sample", default_rater=SAMPLE_ANNOTATORS)
    project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "sample")  # LeMAJ's, version 1
    project.set_matter_name(SAMPLE_MATTER, "sample")  # the report's title
    verifier, labelled = Verifier(project.sessions), labelled_ids()
    with project.sessions() as session:
        names = {a.document for a in list_answers(session) if a.id in labelled}
        ids = [documents.document_id_by_name(session, name) for name in names]
    read_first = sorted(i for i in ids if i is not None)
    read_contracts(project.sessions, read_first, verifier=verifier, on_progress=on_reading)
    verify_project(project.sessions, sorted(labelled), verifier=verifier)
    return summary


@dataclass(frozen=True)
class SampleTour:
    answer_ids: tuple[str, ...]  # checked in this order; the window opens the first

    @property
    def first_answer(self) -> str:
        return self.answer_ids[0]


def sample_tour(project: Project) -> SampleTour | None:
    """What to do when this project opens: None unless it is the untouched bundled sample (the
    verifier's run on the labelled answers aside).

    The answers on the shortest contracts come first: the first screen gets its verdicts within a
    second, and a short NDA is the easiest first read. The labelled answers were checked when the
    sample was made."""
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
    return SampleTour(tuple(a.id for a in ordered))


def check_sample(
    project: Project,
    tour: SampleTour,
    *,
    on_progress: Callable[[Progress], None] = lambda _p: None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Check the tour's answers in its order with the model-free verifier and its claim checker, each
    saved as it is checked (well under a second an answer, no model loaded): the sample's first screen
    speaks with the rater measured on human labels. The embedded LLM judge runs only when asked
    (Project ▸ Run the judge…).

    The one place that says which rater the sample starts with."""
    cancel = cancel or threading.Event()
    with project.sessions.begin() as session:
        reviews.set_setting(session, STARTED, True)  # once: a cancelled tour is not started again
    verifier = Verifier(project.sessions)
    total, started, count = RunSummary(VERIFIER), time.perf_counter(), len(tour.answer_ids)
    for done, answer_id in enumerate(tour.answer_ids, start=1):
        if cancel.is_set():
            break
        verify_project(project.sessions, [answer_id], verifier=verifier)
        total.judged = done
        eta = (time.perf_counter() - started) / done * (count - done)
        on_progress(Progress(done, count, 0, answer_id, 0.0, eta))
    # then the contracts the sample was made without reading, one at a time (a closed window stops it): a check after
    # this one reads them kept
    with project.sessions() as session:
        unread = documents.unread(session)
    for document_id in unread:
        if cancel.is_set():
            break
        read_contracts(project.sessions, [document_id], verifier=verifier)
    total.cancelled = cancel.is_set() and total.judged < count
    return total


def labelled_ids() -> set[str]:
    """The sample's answers that ship with human labels."""
    with SAMPLE_LABELS.open(encoding="utf-8") as lines:
        return {json.loads(line)["id"] for line in lines if line.strip()}


def _sample_ids(path: Path) -> set[str]:
    with path.open(encoding="utf-8") as lines:
        return {json.loads(line)["id"] for line in lines if line.strip()}

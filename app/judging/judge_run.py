"""A judge run as the window starts one: the backend its settings choose, the run itself (resumable, each
answer saved as it is judged), the local model's speed kept for `assay models`, and on the LeMAJ rubric the
default jury that combines the run with the claim checker, measured like any rater.

Qt-free, as STYLE.md §3 has it: progress is a callback and cancelling an Event. ui/judge_dialog.py's
JudgeWorker runs it on a pool thread and carries what it reports to the window through signals.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from app.judging.jury import default_jury
from app.judging.model_files import record_speed
from app.judging.runs import (
    JudgeSettings,
    Progress,
    RunSummary,
    device_sentence,
    document_state_folder,
    make_backend,
    run_judge,
)
from app.project import Project
from models.rubrics import Rubric


def judge_answers(
    project: Project,
    settings: JudgeSettings,
    answer_ids: list[str] | None,
    *,
    on_loaded: Callable[[str], None] = lambda _device: None,
    on_progress: Callable[[Progress], None] = lambda _p: None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Judge `answer_ids` (None: every answer the run has not judged) with the judge `settings` choose.
    `on_loaded` hears where a local model runs ("… 31/31 layers offloaded to the GPU") once it is loaded;
    AssayError when the judge cannot run. The backend is closed however the run ends."""
    backend = make_backend(settings, document_state_folder(project))
    speed = 0.0  # the last tokens/s the run measured

    def progressed(progress: Progress) -> None:
        nonlocal speed
        speed = progress.tokens_per_second
        on_progress(progress)

    try:
        if device := device_sentence(backend):
            on_loaded(device)
        summary = run_judge(
            project.sessions,
            settings.judge(backend),
            settings.default_name(backend),
            answer_ids=answer_ids,
            on_progress=progressed,
            cancel=cancel,
        )
        model_path: Path | None = getattr(backend, "model_path", None)  # a local model's file; an API has none
        if speed > 0 and model_path:
            record_speed(model_path, speed)
        if settings.rubric is Rubric.LEMAJ:
            default_jury(project.sessions, summary.rater)
    finally:
        backend.close()
    return summary

"""`assay judge`, `verify`, `stress-test`, `models`, `rubric-scores` and `criteria`: judge runs and
juries, the model-free verifier, how far a judge can be trusted, and the judges' own figures."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from app.cli.output import JudgeBar, ProgressBar, print_json_or_lines, print_summary
from app.errors import AssayError, InvalidInput
from app.figures.scores import shown
from app.judging.jury import DEFAULT_PRIORITY, default_jury, roles_jury, run_jury
from app.judging.model_files import record_speed
from app.judging.paired_stress import paired_stress_test, raters_named, remember, stress_table
from app.judging.rubric_results import review_criteria, rubric_summary
from app.judging.runs import (
    JudgeSettings,
    Progress,
    device_sentence,
    document_state_folder,
    make_backend,
    permitted,
    run_judge,
)
from app.judging.stress import stress_test
from app.judging.verification import VERIFIER, verify_project
from app.project import Project
from models.backends.base import JudgeBackend
from models.checker.report import VERDICT_WORDS
from models.judge import LemajJudge, Mode
from models.prompts import Strictness
from models.rubrics import Rubric
from models.verifier import INCORRECT, NEEDS_REVIEW
from models.vocabulary import BackendKind, Tag
from storage.raters import rater_named

BackendKey = tuple[str, str | None, str | None, int | None, int]  # backend, model, base URL, GPU layers, context


def _answer_ids(project: Project, answers: str | None) -> list[str] | None:
    """--answers as ids of the project's answers (None: not given); checked before any model loads."""
    if answers is None:
        return None
    ids = [a.strip() for a in answers.split(",") if a.strip()]
    if not ids:
        raise InvalidInput("--answers", "no answer id given: write ids separated by commas")
    known = {a.id for a in project.answers()}
    if unknown := [a for a in ids if a not in known]:
        raise InvalidInput("--answers", f"no answer with id {', '.join(unknown)}")
    return ids


def _priority(text: str) -> tuple[Tag, ...]:
    """The rule's order: each of the four tags once, highest first."""
    names = [t.strip() for t in text.split(",")]
    if sorted(names) != sorted(t.value for t in Tag):
        example = ",".join(DEFAULT_PRIORITY)
        raise InvalidInput("--priority", f"{text!r}: order the four tags, each once, e.g. {example}")
    return tuple(Tag(n) for n in names)


def _judge(project: Project, args: argparse.Namespace) -> int:
    from app.cli.models import with_found_model

    args = with_found_model(args)  # --model ollama:NAME:TAG: the file Ollama keeps it in
    settings = permitted(JudgeSettings.from_run_config(vars(args)), project.allowed_hosts(), args.allow_network)
    shared: dict[BackendKey, JudgeBackend] = {}
    cancel = threading.Event()
    answer_ids = _answer_ids(project, args.answers)  # a typo is refused before the model takes its seconds to load
    priority = _priority(args.priority)
    if args.jury and len(args.jury) < 2:
        raise AssayError("a jury needs at least two judges: repeat --jury")
    if args.jury and settings.rubric is not Rubric.LEMAJ:
        raise AssayError("a jury tags LeMAJ data points: leave --rubric at lemaj")
    jurors = [(spec, None if spec == VERIFIER else _juror(spec, settings)) for spec in args.jury or []]

    def stop(_signum: int, _frame: object) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        print("\nassay: stopping after the answer in flight (Ctrl-C again to abandon it)", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, stop)
    try:
        if args.jury:
            return _run_jury(project, args, settings, jurors, priority, shared, answer_ids, cancel)
        backend = _backend(settings, shared, project)
        if device := device_sentence(backend):
            print(f"judge: {device}", file=sys.stderr)
        speeds: list[float] = []

        with JudgeBar() as bar:

            def progress(p: Progress) -> None:
                speeds.append(p.tokens_per_second)
                bar.judged(p)

            summary = run_judge(
                project.sessions,
                settings.judge(backend),
                args.name or settings.default_name(backend),
                answer_ids=answer_ids,
                limit=args.limit,
                more=args.more,
                on_progress=progress,
                cancel=cancel,
                parallel=settings.parallel,
            )
    finally:
        signal.signal(signal.SIGINT, previous)
        for opened in shared.values():  # an HTTP client left open warns at exit (and leaks its socket)
            opened.close()
    if settings.backend == BackendKind.LOCAL and speeds and speeds[-1] > 0:  # `assay models` shows it
        from models.backends.llama_local import embedded_model_path

        record_speed(Path(settings.model) if settings.model else embedded_model_path(), speeds[-1])

    def text() -> str:
        state = " (stopped; run it again to resume)" if summary.cancelled else ""
        lines = [f"{summary.rater}: {summary.judged} judged, {summary.failed} failed{state}"]
        lines += [f"  {answer_id}: {error}" for answer_id, error in summary.failures.items()]
        if summary.rejected:
            refused = ", ".join(f"{count} {reason}" for reason, count in sorted(summary.rejected.items()))
            lines.append(f"  judge points refused by validation (not stored): {refused}")
        return "\n".join(lines)

    jury = default_jury(project.sessions, summary.rater) if settings.rubric is Rubric.LEMAJ else 0

    def with_jury() -> str:
        combined = f"\n{roles_jury(summary.rater)}: {jury} answers combined with the claim checker"
        return text() + (combined if jury else "")

    print_summary(summary, args.json, with_jury)
    return 0


def _backend(settings: JudgeSettings, shared: dict[BackendKey, JudgeBackend], project: Project) -> JudgeBackend:
    """One backend per model: jurors on the same local model share its weights and cache."""
    key = (settings.backend, settings.model, settings.base_url, settings.gpu_layers, settings.context_tokens)
    if key not in shared:
        shared[key] = make_backend(settings, document_state_folder(project))
        described = shared[key].describe()
        if "host" in described:
            print(f"assay: document and answer text will be sent to {described['host']}", file=sys.stderr)
    return shared[key]


def _juror(spec: str, base: JudgeSettings) -> JudgeSettings:
    """'local', 'local:seed=2,strictness=strict', 'openai:base_url=http://…/v1,model=m'."""
    backend, _, options = spec.partition(":")
    kinds = [k.value for k in BackendKind]
    if backend and backend not in kinds:
        raise AssayError(f"juror {spec!r}: the judge is one of {', '.join(kinds)} or {VERIFIER}")
    values: dict[str, Any] = {"backend": BackendKind(backend) if backend else base.backend}
    for option in filter(None, options.split(",")):
        key, sep, value = option.partition("=")
        if not sep or key not in {"model", "base_url", "seed", "strictness", "mode", "structured"}:
            raise AssayError(f"juror option {option!r}: use model=, base_url=, seed=, strictness=, mode=, structured=")
        values[key] = _juror_value(option, key, value)
    return replace(base, **values)


def _juror_value(option: str, key: str, value: str) -> Any:
    choices = {"strictness": Strictness, "mode": Mode}
    if key == "seed":
        if not (value.isascii() and value.isdigit()) or int(value) >= 2**32:
            raise AssayError(f"juror option {option!r}: a seed is a whole number from 0 to {2**32 - 1}")
        return int(value)
    if key in choices:
        allowed = [c.value for c in choices[key]]
        if value not in allowed:
            raise AssayError(f"juror option {option!r}: {key} is one of {', '.join(allowed)}")
        return choices[key](value)
    if key == "structured" and value not in ("json_schema", "json_object", "none"):
        raise AssayError(f"juror option {option!r}: structured is one of json_schema, json_object, none")
    if not value:
        raise AssayError(f"juror option {option!r} has no value")
    return value


def _run_jury(
    project: Project,
    args: argparse.Namespace,
    settings: JudgeSettings,
    specs: list[tuple[str, JudgeSettings | None]],
    priority: tuple[Tag, ...],
    shared: dict[BackendKey, JudgeBackend],
    answer_ids: list[str] | None,
    cancel: threading.Event,
) -> int:
    jurors: list[tuple[str, LemajJudge | None]] = []
    for spec, chosen in specs:
        if chosen is None:  # the model-free verifier: it flags or abstains
            jurors.append((VERIFIER, None))
            continue
        juror = replace(chosen, mode=Mode.TWO_STAGE)  # jurors tag the same points
        juror = permitted(juror, project.allowed_hosts(), args.allow_network)  # each juror's host its own opt-in
        backend = _backend(juror, shared, project)
        jurors.append((f"juror:{spec}", juror.lemaj_judge(backend)))
    # one model and the verifier: each in its role, by default (app/judging/jury.py)
    how = args.combine or ("roles" if len(jurors) == 2 and (VERIFIER, None) in jurors else "both")
    name = args.name or (roles_jury(jurors[1 - jurors.index((VERIFIER, None))][0]) if how == "roles" else None)
    name = name or f"jury:{how}:" + "+".join(args.jury)
    with JudgeBar("jury") as bar:
        summary = run_jury(
            project.sessions,
            jurors,
            name,
            how,
            priority,
            answer_ids=answer_ids,
            limit=args.limit,
            more=args.more,
            on_progress=bar.judged,
            cancel=cancel,
        )
    print_summary(
        summary,
        args.json,
        lambda: "\n".join(
            [f"{j.rater}: {j.judged} judged, {j.failed} failed" for j in summary.jurors]
            + [f"{summary.jury}: {summary.combined} answers combined"]
        ),
    )
    return 0


def _verify(project: Project, args: argparse.Namespace) -> int:
    with ProgressBar("verifying", "answers") as bar:
        reports = verify_project(project.sessions, _answer_ids(project, args.answers), on_progress=bar)
    if args.json:
        print(json.dumps({"answers": [r.as_dict() for r in reports]}))
        return 0
    counts = Counter(p.verdict for r in reports for p in r.points)
    for report in reports:
        for point in report.points:
            if point.verdict in (INCORRECT, NEEDS_REVIEW):
                print(f"{report.answer_id} [{point.start}:{point.end}] {point.verdict}: {point.summary}")
    print(", ".join(f"{counts[v]} {v}" for v in VERDICT_WORDS))  # every verdict: the counts add up to the points
    print(f"saved as the rater {VERIFIER!r} ({len(reports)} answers)")
    return 0


def _stress(project: Project, args: argparse.Namespace) -> int:
    if args.raters is not None and args.judge is not None:
        raise AssayError("give --raters (the paired test) or --judge (the older test), not both")
    if args.raters is not None:
        return _paired_stress(project, args)
    if not args.judge:
        raise AssayError("name the raters to test: --raters verifier,JUDGE_RUN,JURY (or --judge RUN)")
    with project.sessions() as session:
        run = rater_named(session, args.judge)
    if run is None or run.kind.value != "judge" or run.config.get("rubric", "lemaj") != "lemaj":
        raise AssayError(f"no LeMAJ judge run named {args.judge!r}")
    settings = JudgeSettings.from_run_config(run.config)
    if settings.backend != BackendKind.LOCAL:
        raise AssayError("the stress test re-runs the judge: run it with a local judge, or start from the CLI judge")
    backend = make_backend(settings)
    try:
        report = stress_test(project, settings.lemaj_judge(backend), args.judge, limit=args.limit or 3)
    finally:
        backend.close()
    result = {**asdict(report), "false_alarm_rate": report.false_alarm_rate}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"stress test of {report.judge} on {report.answers} answers (base: {report.base})")
    for kind, figures in (report.per_type or {}).items():
        recall = shown(figures["detection_recall"])
        print(f"  {kind:15} detected {figures['detected']}/{figures['cases']}  recall {recall}")
    print(f"  false alarms on untouched correct points: {report.false_alarms}/{report.untouched_points}")
    return 0


def _paired_stress(project: Project, args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.raters.split(",") if n.strip()]
    if not names:
        raise InvalidInput("--raters", "no rater given: write names separated by commas, e.g. verifier,RUN")
    raters = raters_named(project.sessions, names)
    with ProgressBar("stress test", "answers") as bar:
        result = paired_stress_test(
            project.sessions,
            raters,
            limit=args.limit,
            seed=args.seed,
            answer_ids=_answer_ids(project, args.answers),
            on_progress=bar,
        )
    remember(project.sessions, result)
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"paired stress test on {result['answers']} answers (seed {result['seed']}): {result['qualifying_points']} "
        f"of {result['points']} points are supported by the document and had errors planted"
    )
    print(stress_table(result))
    return 0


def _rubric_scores(project: Project, args: argparse.Namespace) -> int:
    print_json_or_lines(rubric_summary(project, Rubric(args.rubric)), args.json)
    return 0


def _criteria(project: Project, args: argparse.Namespace) -> int:
    def numbers(option: str, text: str) -> list[int]:
        items = [n.strip() for n in text.split(",") if n.strip()]
        if not all(n.isascii() and n.isdigit() and len(n) <= 6 for n in items):  # a criterion is one of a few
            shown = text if len(text) <= 40 else f"{text[:40]}…"
            raise InvalidInput(option, f"{shown!r}: write criterion numbers separated by commas, e.g. 1,3")
        return [int(n) for n in items]

    if project.answer(args.answer_id) is None:
        raise AssayError(f"no answer with id {args.answer_id!r}")
    edits = {}
    for item in args.edit:
        number, sep, text = item.partition("=")
        if not sep or not number.strip().isdigit():
            raise AssayError(f"--edit {item!r}: write N=new text")
        edits[int(number)] = text
    payload = review_criteria(
        project,
        args.answer_id,
        args.run,
        accept=numbers("--accept", args.accept),
        reject=numbers("--reject", args.reject),
        edit=edits,
        add=args.add,
        reviewer=args.reviewer,
    )
    print_summary(
        payload,
        args.json,
        lambda: "\n".join(
            [
                f"{i:3} [{c['status']:8}] {'✓' if c['satisfied'] else '✗'} {c['text']}"
                for i, c in enumerate(payload["criteria"], start=1)
            ]
            + [
                f"recall {shown(payload['recall'])} · F2 {shown(payload['f2'])} · revision rate "
                f"{shown(payload['revision_rate'])}"
            ]
        ),
    )
    return 0


COMMANDS = {
    "judge": _judge,
    "verify": _verify,
    "stress-test": _stress,
    "rubric-scores": _rubric_scores,
    "criteria": _criteria,
}

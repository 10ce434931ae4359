"""The `assay` command. Expected failures print one sentence and exit 2; nothing is half-written."""

from __future__ import annotations

import argparse
import getpass
import json
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from sqlalchemy.exc import DatabaseError

from app import analytics, cli_backups, stats_cli
from app.citations import find_citations
from app.datasets import import_dataset
from app.documents import PageProgress
from app.errors import AssayError, InvalidInput, PasswordRequired
from app.exports import FORMATS, export
from app.judging import JudgeSettings, Progress, destination, device_sentence, make_backend, run_judge
from app.jury import run_jury
from app.labels import import_labels
from app.model_files import describe, read_model_info, recent_models, record_speed
from app.paired_stress import paired_stress_test, raters_named, remember, stress_table
from app.project import PASSPHRASE_ENV, SAMPLE_DATASET, AskPassphrase, Project, project_passphrase, project_url
from app.redaction import Redaction, keep_everything
from app.rubric_results import review_criteria, rubric_summary
from app.scores import shown
from app.segments import segment_report
from app.stress import stress_test
from app.team import assign, export_bundle, import_bundle
from app.verification import VERIFIER, finding_at, findings, reasons_text, verify_project
from models.backends.base import JudgeBackend
from models.judge import Mode, Tagging
from models.prompts import Strictness
from models.rubrics import Rubric
from models.vocabulary import BackendKind, Tag
from storage.analytics import SLICES
from storage.audit import audit_entries, verify_audit
from storage.raters import rater_named

EXIT_INVALID = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assay", description="Review LLM answers about legal documents.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", type=Path, help="project file (SQLite); default in the user data folder")
    where.add_argument("--db", help="database URL, e.g. postgresql+psycopg://user@host/assay")
    parser.add_argument(
        "--encrypt",
        action="store_true",
        help=f"create the project file encrypted (SQLCipher); the passphrase comes from {PASSPHRASE_ENV} or is asked",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("init", help="create the project (or bring an old one up to date)")

    models = commands.add_parser("models", help="GGUF models used before: what they are, last measured speed")
    models.add_argument("--json", action="store_true")

    imp = commands.add_parser("import", help="import a dataset: a folder with documents/ and qa.jsonl, or .csv/.xlsx")
    imp.add_argument("path", type=Path)
    imp.add_argument("--json", action="store_true", help="print the summary as JSON")
    imp.add_argument(
        "--pdf-password",
        action="append",
        default=[],
        metavar="FILE=PASSWORD",
        help="the password of an encrypted PDF (asked in a terminal when missing)",
    )

    info = commands.add_parser("info", help="what the project holds")
    info.add_argument("--json", action="store_true")

    search = commands.add_parser("search", help="BM25-ranked passages of one document")
    search.add_argument("document", help="document name, or a unique part of it")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--json", action="store_true")

    cite = commands.add_parser("citations", help="the citations an answer writes, resolved to passages")
    cite.add_argument("answer_id")
    cite.add_argument("--json", action="store_true")

    seg = commands.add_parser("segment", help="the data points each answer is cut into, and their coverage")
    seg.add_argument("--answer", help="only this answer (default: every answer)")
    seg.add_argument("--json", action="store_true")

    judge = commands.add_parser("judge", help="judge answers with an LLM (LeMAJ data points and tags)")
    judge.add_argument("--backend", choices=[k.value for k in BackendKind], default=BackendKind.LOCAL.value)
    judge.add_argument("--model", help="GGUF file (local; default: the embedded SmolLM2) or the API's model name")
    judge.add_argument("--base-url", help="API base URL, e.g. http://127.0.0.1:8000/v1")
    judge.add_argument("--allow-network", action="store_true", help="let an API judge send the texts to its host")
    judge.add_argument(
        "--structured",
        choices=["json_schema", "json_object", "none"],
        default="json_schema",
        help="how an OpenAI-compatible server constrains JSON (llama-cpp server: json_object)",
    )
    judge.add_argument("--gpu-layers", type=int, help="layers to offload (default: all when the build supports it)")
    judge.add_argument("--context", type=int, default=8192, help="context size in tokens (local)")
    judge.add_argument("--threads", type=int)
    judge.add_argument("--flash-attn", action="store_true")
    judge.add_argument("--mode", choices=[m.value for m in Mode], default=Mode.TWO_STAGE.value)
    judge.add_argument("--strictness", choices=[s.value for s in Strictness], default=Strictness.STANDARD.value)
    judge.add_argument("--seed", type=int, default=0)
    judge.add_argument("--no-missing", action="store_true", help="two-stage: tag only, do not search for omissions")
    judge.add_argument(
        "--tagging",
        choices=[t.value for t in Tagging],
        default=Tagging.ONE_PASS.value,
        help="two-stage: every point's tag from one evaluation (local models), or a prompt per point",
    )
    judge.add_argument("--rubric", choices=[r.value for r in Rubric], default=Rubric.LEMAJ.value)
    judge.add_argument("--disputatio", action="store_true", help="two-dimensional: the disputatio prompt")
    judge.add_argument(
        "--jury",
        action="append",
        metavar="JUROR",
        help="a juror, e.g. local:seed=1, openai:base_url=URL,model=M or verifier (repeat: 2 or more)",
    )
    judge.add_argument(
        "--combine",
        choices=["majority", "rule", "both"],
        default="both",
        help="how the jury's tags are combined (rule: incorrect first)",
    )
    judge.add_argument(
        "--priority", default="incorrect,missing,irrelevant,correct", help="the rule's order of tags, highest first"
    )
    judge.add_argument("--answers", help="comma-separated answer ids (default: all not yet judged by this run)")
    howmany = judge.add_mutually_exclusive_group()
    howmany.add_argument(
        "--limit",
        type=int,
        help="the first N answers of the selection, in dataset order (run again: finishes those N, no others)",
    )
    howmany.add_argument("--more", type=int, help="the next N answers this run has not judged yet")
    judge.add_argument("--parallel", type=int, default=1, help="API judges: answers judged at once (default 1)")
    judge.add_argument("--name", help="run name; the same name resumes the run")
    judge.add_argument("--json", action="store_true", help="print the summary as JSON")

    ver = commands.add_parser("verify", help="check answers against their documents without a model (the verifier)")
    ver.add_argument("--answers", help="comma-separated answer ids (default: all)")
    ver.add_argument("--json", action="store_true", help="every point with its verdict and reasons, as JSON")

    st = commands.add_parser(
        "stress-test", help="plant errors in answers and measure what each rater catches (no review needed)"
    )
    st.add_argument("--raters", help="comma-separated: verifier, judge runs, jury runs (the paired test)")
    st.add_argument("--judge", help="the older test on reviewed answers: the judge run to test")
    st.add_argument("--limit", type=int, help="answers to perturb (default: all with --raters, 3 with --judge)")
    st.add_argument("--answers", help="paired test: comma-separated answer ids to perturb (default: drawn by --seed)")
    st.add_argument("--seed", type=int, default=0, help="which answers and which changes (paired test)")
    st.add_argument("--json", action="store_true")

    rs = commands.add_parser("rubric-scores", help="figures of an answer-level rubric, per judge run")
    rs.add_argument("--rubric", required=True, choices=[r.value for r in Rubric if r is not Rubric.LEMAJ])
    rs.add_argument("--json", action="store_true")

    cr = commands.add_parser("criteria", help="validate a DeCE run's criteria for an answer")
    cr.add_argument("answer_id")
    cr.add_argument("--run", required=True)
    cr.add_argument("--accept", default="", help="criterion numbers, comma-separated")
    cr.add_argument("--reject", default="")
    cr.add_argument("--edit", action="append", default=[], metavar="N=TEXT")
    cr.add_argument("--add", action="append", default=[], metavar="TEXT")
    cr.add_argument("--reviewer", default="reviewer")
    cr.add_argument("--json", action="store_true")

    audit = commands.add_parser("audit", help="the hash-chained audit log")
    audit.add_argument("action", choices=["verify", "export"])
    audit.add_argument("out", nargs="?", type=Path, help="export: a JSONL file")
    audit.add_argument("--json", action="store_true")

    network = commands.add_parser("network", help="the hosts this project allows API judges to send texts to")
    network.add_argument("action", choices=["list", "allow", "forbid"])
    network.add_argument("host", nargs="?")

    bundle = commands.add_parser("bundle", help="a reviewer's work as one file, for laptops without a server")
    bundle.add_argument("action", choices=["export", "import"])
    bundle.add_argument("path", type=Path)
    bundle.add_argument("--reviewer", help="export: whose work")

    assign = commands.add_parser("assign", help="spread review evenly among reviewers")
    assign.add_argument("--reviewers", required=True, help="comma-separated names")
    assign.add_argument("--per-answer", type=int, default=2)
    assign.add_argument("--json", action="store_true")

    show = commands.add_parser("show", help="an answer's data points, tags and citations by each rater")
    show.add_argument("answer_id")
    show.add_argument("--json", action="store_true")

    sc = commands.add_parser("scores", help="LeMAJ scores per answer and rater, or averaged over a slice")
    sc.add_argument("--rater", action="append", help="only this rater (repeatable)")
    sc.add_argument("--by", default="answer", choices=SLICES)
    sc.add_argument("--json", action="store_true")

    ag = commands.add_parser("agreement", help="agreement between raters (human or judge)")
    ag.add_argument("--raters", help="comma-separated rater names (default: all)")
    ag.add_argument("--level", choices=["data-point", "answer"], default="data-point")
    ag.add_argument("--json", action="store_true")

    al = commands.add_parser("alignment", help="a judge run against a human reviewer")
    al.add_argument("--judge", required=True)
    al.add_argument("--human", required=True)
    al.add_argument("--json", action="store_true")

    stats_cli.add_parsers(commands)

    il = commands.add_parser("import-labels", help="labels from other tools or raters (JSONL)")
    il.add_argument("path", type=Path)
    il.add_argument("--json", action="store_true")

    ex = commands.add_parser("export", help="export the reviewed set")
    ex.add_argument("--format", required=True, choices=FORMATS)
    ex.add_argument("out", type=Path)
    ex.add_argument("--redact", action="store_true", help="replace e-mail addresses and phone numbers")
    ex.add_argument("--redact-name", action="append", default=[], metavar="NAME", help="also replace NAME (repeatable)")
    ex.add_argument("--redact-names-file", type=Path, help="also replace the names in this file, one per line")

    cli_backups.add_commands(commands)

    gui = commands.add_parser("gui", help="open the review window")
    gui.add_argument("--sample", action="store_true", help="import the bundled sample project first")
    gui.add_argument("--open", dest="open_answer", metavar="ANSWER_ID", help="open this answer")
    gui.add_argument("--reviewer", help="your name as a reviewer (asked at start when not given)")
    gui.add_argument("--screenshot", type=Path, help="save a PNG of the window once loaded, then exit")
    return parser


Command = Callable[[Project, argparse.Namespace], int]


def ask_in_terminal(where: str, new: bool) -> str | None:
    if not sys.stdin.isatty():
        return None
    passphrase = getpass.getpass(f"Passphrase for {where}: ")
    if new and getpass.getpass("The same passphrase again: ") != passphrase:
        raise InvalidInput("passphrase", "the two entries differ")
    return passphrase


def main(
    argv: Sequence[str] | None = None,
    window_commands: dict[str, Command] | None = None,
    ask_in_window: AskPassphrase | None = None,
) -> int:
    """Run one command. `ui.main` passes the commands that open a window, and how a window asks for
    a passphrase, so app/ stays Qt-free."""
    args = build_parser().parse_args(argv)
    commands = {**COMMANDS, **(window_commands or {})}
    if args.command not in commands and args.command != "restore":
        print(f"assay: '{args.command}' needs the desktop application (run it as `assay`)", file=sys.stderr)
        return EXIT_INVALID
    try:
        url = project_url(args.project, args.db)
        ask = ask_in_window if ask_in_window and args.command in (window_commands or {}) else ask_in_terminal
        if args.command == "restore":  # the file it replaces may not open at all
            return cli_backups.restore(args, ask)
        project = Project.open(url, project_passphrase(url, args.encrypt, ask))
    except AssayError as exc:
        print(f"assay: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        return commands[args.command](project, args)
    except AssayError as exc:
        print(f"assay: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except DatabaseError as exc:  # a damaged page met mid-command
        print(f"assay: {cli_backups.damaged(args, exc)}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        project.close()


def _init(project: Project, _args: argparse.Namespace) -> int:
    print(f"project ready: {project.url}")
    return 0


def _import(project: Project, args: argparse.Namespace) -> int:
    passwords = dict(entry.partition("=")[::2] for entry in args.pdf_password)
    while True:
        try:
            summary = import_dataset(project.sessions, args.path, passwords=passwords, on_progress=_print_pages)
            break
        except PasswordRequired as exc:
            if not sys.stdin.isatty():
                raise InvalidInput(exc.place, f"{exc.problem} (--pdf-password {exc.name}=…)") from exc
            again = " (that one was wrong)" if exc.wrong else ""
            passwords[exc.name] = getpass.getpass(f"Password for {exc.name}{again}: ")
    if args.json:
        print(json.dumps(asdict(summary)))
    else:
        print(
            f"imported {args.path}: {summary.documents_added} new documents, {summary.answers_added} new answers, "
            f"{summary.answers_updated} updated, {summary.answers_unchanged} unchanged"
        )
    return 0


def _info(project: Project, args: argparse.Namespace) -> int:
    counts = project.counts()
    if args.json:
        print(json.dumps(counts))
    else:
        print(project.url)
        for name, count in counts.items():
            print(f"  {name:12} {count}")
    return 0


def _search(project: Project, args: argparse.Namespace) -> int:
    hits = project.search(args.document, args.query, args.limit)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "citation_id": h.passage.citation_id,
                        "section": h.passage.section,
                        "heading": h.passage.heading_path,
                        "score": h.score,
                        "text": h.passage.text,
                    }
                    for h in hits
                ]
            )
        )
    else:
        for hit in hits:
            where = hit.passage.section or hit.passage.heading_path
            print(f"{hit.passage.citation_id:>8}  {where[:30]:30}  {hit.passage.text[:100]}")
    return 0


def _citations(project: Project, args: argparse.Namespace) -> int:
    answer = project.answer(args.answer_id)
    if answer is None:
        raise AssayError(f"no answer with id {args.answer_id!r}")
    citations = find_citations(answer.text, project.passages(answer.document_id))
    if args.json:
        print(json.dumps([asdict(c) for c in citations]))
    else:
        for c in citations:
            print(f"{c.written!r:28} -> {', '.join(c.passages[:5]) or 'not in the document'}")
    return 0


def _segment(project: Project, args: argparse.Namespace) -> int:
    report = segment_report(project, args.answer)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    for answer in report["answers"]:
        print(f"{answer['answer_id']}  coverage {answer['coverage']:.3f}")
        for p in answer["points"]:
            context = f"[{' '.join(p['context'].split())[-40:]}] " if p["context"] else ""
            print(f"  {p['start']:>5}-{p['end']:<5} {context}{' '.join(p['text'].split())[:100]}")
    print(f"coverage of letters and digits: {report['coverage']:.3f}")
    return 0


def _network(project: Project, args: argparse.Namespace) -> int:
    if args.action != "list":
        if not args.host:
            raise AssayError(f"network {args.action} needs a host, e.g. 10.0.0.7 or llm.example.com")
        project.set_host_allowed(args.host, args.action == "allow", getpass.getuser())
    hosts = project.allowed_hosts()
    print("\n".join(hosts) if hosts else "no host allowed: API judges need --allow-network for each run")
    return 0


def _settings(project: Project, args: argparse.Namespace) -> JudgeSettings:
    return _permitted(project, _settings_from_flags(args), args.allow_network)


def _permitted(project: Project, settings: JudgeSettings, this_run: bool) -> JudgeSettings:
    """An API judge may send texts when --allow-network says so, or the project allows its host."""
    if settings.backend == BackendKind.LOCAL:
        return settings
    return replace(settings, allow_network=this_run or destination(settings) in project.allowed_hosts())


def _settings_from_flags(args: argparse.Namespace) -> JudgeSettings:
    return JudgeSettings(
        backend=BackendKind(args.backend),
        model=args.model,
        base_url=args.base_url,
        gpu_layers=args.gpu_layers,
        context_tokens=args.context,
        threads=args.threads,
        mode=Mode(args.mode),
        strictness=Strictness(args.strictness),
        seed=args.seed,
        structured=args.structured,
        allow_network=args.allow_network,
        flash_attn=args.flash_attn,
        rubric=Rubric(args.rubric),
        disputatio=args.disputatio,
        find_missing=not args.no_missing,
        parallel=args.parallel,
        tagging=Tagging(args.tagging),
    )


def _backend(settings: JudgeSettings, shared: dict) -> JudgeBackend:
    """One backend per model: jurors on the same local model share its weights and cache."""
    key = (settings.backend, settings.model, settings.base_url, settings.gpu_layers, settings.context_tokens)
    if key not in shared:
        shared[key] = make_backend(settings)
        described = shared[key].describe()
        if "host" in described:
            print(f"assay: document and answer text will be sent to {described['host']}", file=sys.stderr)
    return shared[key]


def _juror(spec: str, base: JudgeSettings) -> JudgeSettings:
    """'local', 'local:seed=2,strictness=strict', 'openai:base_url=http://…/v1,model=m'."""
    backend, _, options = spec.partition(":")
    values: dict = {"backend": backend or base.backend}
    for option in filter(None, options.split(",")):
        key, sep, value = option.partition("=")
        if not sep or key not in {"model", "base_url", "seed", "strictness", "mode", "structured"}:
            raise AssayError(f"juror option {option!r}: use model=, base_url=, seed=, strictness=, mode=, structured=")
        values[key] = (
            int(value)
            if key == "seed"
            else Strictness(value)
            if key == "strictness"
            else (Mode(value) if key == "mode" else value)
        )
    return replace(base, **values)


def _judge(project: Project, args: argparse.Namespace) -> int:
    settings = _settings(project, args)
    shared: dict = {}
    cancel = threading.Event()

    def stop(_signum: int, _frame: object) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        print("\nassay: stopping after the answer in flight (Ctrl-C again to abandon it)", file=sys.stderr)

    answer_ids = args.answers.split(",") if args.answers else None
    previous = signal.signal(signal.SIGINT, stop)
    try:
        if args.jury:
            return _run_jury(project, args, settings, shared, answer_ids, cancel)
        backend = _backend(settings, shared)
        if device := device_sentence(backend):
            print(f"judge: {device}", file=sys.stderr)
        speeds: list[float] = []

        def progress(p: Progress) -> None:
            speeds.append(p.tokens_per_second)
            _print_progress(p)

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
    print(file=sys.stderr)
    if settings.backend == BackendKind.LOCAL and speeds and speeds[-1] > 0:  # `assay models` shows it
        from models.backends.llama_local import embedded_model_path

        record_speed(Path(settings.model) if settings.model else embedded_model_path(), speeds[-1])
    if args.json:
        print(json.dumps(asdict(summary)))
    else:
        state = " (stopped; run it again to resume)" if summary.cancelled else ""
        print(f"{summary.rater}: {summary.judged} judged, {summary.failed} failed{state}")
        for answer_id, error in summary.failures.items():
            print(f"  {answer_id}: {error}")
        if summary.rejected:
            refused = ", ".join(f"{count} {reason}" for reason, count in sorted(summary.rejected.items()))
            print(f"  judge points refused by validation (not stored): {refused}")
    return 0


def _run_jury(project, args, settings, shared, answer_ids, cancel) -> int:
    if settings.rubric is not Rubric.LEMAJ:
        raise AssayError("a jury tags LeMAJ data points: leave --rubric at lemaj")
    jurors = []
    for spec in args.jury:
        if spec == VERIFIER:  # the model-free verifier: it flags or abstains
            jurors.append((VERIFIER, None))
            continue
        juror = replace(_juror(spec, settings), mode=Mode.TWO_STAGE)  # jurors tag the same points
        juror = _permitted(project, juror, args.allow_network)  # each juror's host its own opt-in
        backend = _backend(juror, shared)
        judge = juror.judge(backend)
        jurors.append((f"juror:{spec}", judge))
    priority = tuple(Tag(t.strip()) for t in args.priority.split(","))
    name = args.name or f"jury:{args.combine}:" + "+".join(args.jury)
    summary = run_jury(
        project.sessions,
        jurors,
        name,
        args.combine,
        priority,
        answer_ids=answer_ids,
        limit=args.limit,
        more=args.more,
        on_progress=_print_progress,
        cancel=cancel,
    )
    print(file=sys.stderr)
    if args.json:
        print(json.dumps(asdict(summary)))
    else:
        for juror in summary.jurors:
            print(f"{juror.rater}: {juror.judged} judged, {juror.failed} failed")
        print(f"{summary.jury}: {summary.combined} answers combined")
    return 0


def _verify(project: Project, args: argparse.Namespace) -> int:
    answer_ids = [a.strip() for a in args.answers.split(",") if a.strip()] if args.answers else None
    reports = verify_project(project.sessions, answer_ids)
    if args.json:
        print(json.dumps({"answers": [r.as_dict() for r in reports]}))
        return 0
    counts = Counter(p.verdict for r in reports for p in r.points)
    for report in reports:
        for point in report.points:
            if point.verdict in ("incorrect", "needs_review"):
                print(f"{report.answer_id} [{point.start}:{point.end}] {point.verdict}: {point.summary}")
    print(", ".join(f"{counts[v]} {v}" for v in ("supported", "incorrect", "needs_review", "unverifiable")))
    print(f"saved as the rater {VERIFIER!r} ({len(reports)} answers)")
    return 0


def _stress(project: Project, args: argparse.Namespace) -> int:
    if args.raters:
        return _paired_stress(project, args)
    if not args.judge:
        raise AssayError("name the raters to test: --raters verifier,JUDGE_RUN,JURY (or --judge RUN)")
    with project.sessions() as session:
        run = rater_named(session, args.judge)
    if run is None or run.kind.value != "judge" or run.config.get("rubric", "lemaj") != "lemaj":
        raise AssayError(f"no LeMAJ judge run named {args.judge!r}")
    config = run.config
    settings = JudgeSettings(
        backend=BackendKind(config.get("backend", BackendKind.LOCAL)),
        model=config.get("model_path") or config.get("model"),
        base_url=config.get("base_url"),
        gpu_layers=config.get("gpu_layers"),
        context_tokens=config.get("context_tokens", 8192),
        mode=Mode(config.get("mode", "two-stage")),
        strictness=Strictness(config.get("strictness", "standard")),
        seed=config.get("seed", 0),
        structured=config.get("structured", "json_schema"),
        allow_network=config.get("backend") == BackendKind.LOCAL,
        tagging=Tagging(config.get("tagging", Tagging.PER_POINT.value)),
    )
    if settings.backend != BackendKind.LOCAL:
        raise AssayError("the stress test re-runs the judge: run it with a local judge, or start from the CLI judge")
    judge = settings.judge(make_backend(settings))
    report = stress_test(project, judge, args.judge, limit=args.limit or 3)
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
    raters = raters_named(project.sessions, names)
    result = paired_stress_test(
        project.sessions,
        raters,
        limit=args.limit,
        seed=args.seed,
        answer_ids=[a.strip() for a in args.answers.split(",") if a.strip()] if args.answers else None,
        on_progress=lambda d, t: print(f"\r{d}/{t} answers", end="", file=sys.stderr),
    )
    print(file=sys.stderr)
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
    _print_json_or_lines(rubric_summary(project, Rubric(args.rubric)), args.json)
    return 0


def _criteria(project: Project, args: argparse.Namespace) -> int:
    def numbers(text: str) -> list[int]:
        return [int(n) for n in text.split(",") if n.strip()]

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
        accept=numbers(args.accept),
        reject=numbers(args.reject),
        edit=edits,
        add=args.add,
        reviewer=args.reviewer,
    )
    if args.json:
        print(json.dumps(payload))
    else:
        for i, c in enumerate(payload["criteria"], start=1):
            print(f"{i:3} [{c['status']:8}] {'✓' if c['satisfied'] else '✗'} {c['text']}")
        print(
            f"recall {shown(payload['recall'])} · F2 {shown(payload['f2'])} · revision rate "
            f"{shown(payload['revision_rate'])}"
        )
    return 0


def _audit(project: Project, args: argparse.Namespace) -> int:
    with project.sessions() as session:
        if args.action == "export":
            if args.out is None:
                raise AssayError("audit export needs an output file")
            with args.out.open("w", encoding="utf-8") as handle:
                for entry in audit_entries(session):
                    handle.write(json.dumps(entry.as_dict(), ensure_ascii=False) + "\n")
            print(f"wrote {args.out}")
            return 0
        count, problems = verify_audit(session)
    if args.json:
        print(json.dumps({"entries": count, "ok": not problems, "problems": [asdict(p) for p in problems]}))
    else:
        print(f"{count} audit entries: " + ("the chain is intact" if not problems else f"{len(problems)} problems"))
        if first := next((p for p in problems if p.entry_id is not None), None):
            print(f"  first bad entry: {first.entry_id}")
        for problem in problems:
            print(f"  {f'entry {problem.entry_id}' if problem.entry_id is not None else 'the log'}: {problem.problem}")
    return 0 if not problems else 1


def _bundle(project: Project, args: argparse.Namespace) -> int:
    if args.action == "export":
        if not args.reviewer:
            raise AssayError("bundle export needs --reviewer NAME")
        print(f"wrote {export_bundle(project, args.reviewer, args.path)} answers of {args.reviewer} to {args.path}")
        return 0
    summary = import_bundle(project, args.path)
    state = "already imported: nothing changed" if summary.already_imported else "merged"
    print(f"{summary.reviewer}: {summary.answers} answers, {state}")
    return 0


def _assign(project: Project, args: argparse.Namespace) -> int:
    plan = assign(project, args.reviewers.split(","), args.per_answer)
    load = Counter(r for names in plan.values() for r in names)
    if args.json:
        print(json.dumps({"assignments": plan, "per_reviewer": load}))
    else:
        print(", ".join(f"{r}: {n} answers" for r, n in sorted(load.items())))
    return 0


def _models(_project: Project, args: argparse.Namespace) -> int:
    rows = []
    for recent in recent_models():
        try:
            info: str | dict = describe(read_model_info(Path(recent["path"])))
        except InvalidInput as exc:
            info = exc.problem
        speed = recent.get("tokens_per_second")
        rows.append({**recent, "about": info})
        if not args.json:
            measured = f"{speed:.1f} tokens/s (judge run of {recent['measured_at'][:10]})" if speed else "not run yet"
            print(f"{recent['path']}\n    {info}\n    {measured}")
    if args.json:
        print(json.dumps(rows))
    elif not rows:
        print("no models used yet: choose one in the judge dialog or run `assay judge --model FILE.gguf`")
    return 0


def _print_pages(progress: PageProgress) -> None:
    """Only scans are worth a progress line: OCR takes seconds a page, a text layer milliseconds."""
    if progress.ocr:
        end = "\n" if progress.done == progress.total else ""
        print(f"\rOCR {progress.document}: page {progress.done}/{progress.total}", end=end, file=sys.stderr, flush=True)


def _print_progress(progress: Progress) -> None:
    width = 24
    filled = int(width * progress.done / max(progress.total, 1))
    eta = f"{int(progress.eta_seconds // 60)}:{int(progress.eta_seconds % 60):02d}" if progress.eta_seconds else "-"
    print(
        f"\rjudging [{'#' * filled}{'.' * (width - filled)}] {progress.done}/{progress.total} answers"
        f" · {progress.failed} failed · {progress.tokens_per_second:.0f} tok/s · ETA {eta}  ",
        end="",
        file=sys.stderr,
        flush=True,
    )


def _show(project: Project, args: argparse.Namespace) -> int:
    answer = project.answer(args.answer_id)
    if answer is None:
        raise AssayError(f"no answer with id {args.answer_id!r}")
    by_rater = project.data_points(args.answer_id)
    checked = findings(project.sessions, answer.id)  # as stored by `assay verify`, else checked now
    if args.json:
        raters = {r: [asdict(p) for p in ps] for r, ps in by_rater.items()}
        print(json.dumps({"answer_id": answer.id, "raters": raters, "verifier": checked.as_dict()}))
        return 0
    print(f"{answer.id}: {answer.question}")
    for rater, points in by_rater.items():
        if rater == VERIFIER:
            continue  # shown below, with its reasons
        print(f"\n{rater}")
        for p in points:
            tag = p.tag.value if p.tag else "untagged"
            confidence = f" {p.confidence:.2f}" if p.confidence is not None else ""
            cites = f" [{', '.join(p.citations)}]" if p.citations else ""
            print(f"  {tag:10}{confidence:5} {p.text[:100]}{cites}")
            flagged = finding_at(checked, p.span_start, p.span_end)
            if flagged is not None and flagged.reasons:
                print(f"      ⚑ verifier {flagged.verdict}: {reasons_text(flagged)[:300]}")
    stored = VERIFIER in by_rater
    print(f"\n{VERIFIER}" + ("" if stored else " (checked now, not stored: `assay verify` keeps it)"))
    for point in checked.points:
        print(f"  {point.verdict:12} {point.text[:100]}")
        if point.reasons:
            print(f"      {reasons_text(point)[:300]}")
    return 0


def _scores(project: Project, args: argparse.Namespace) -> int:
    rows = analytics.scores(project, args.by, args.rater)
    if args.json:
        print(json.dumps(rows))
        return 0
    key = "answer_id" if args.by == "answer" else args.by
    for r in rows:
        print(
            f"{str(r[key])[:40]:40} {r['rater'][:36]:36} C{r['correct']:3} I{r['incorrect']:3} "
            f"Irr{r['irrelevant']:3} M{r['missing']:3}  correctness {shown(r['correctness'])}  "
            f"precision {shown(r['precision'])}  recall {shown(r['recall'])}  F1 {shown(r['f1'])}"
        )
    return 0


def _print_json_or_lines(value: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(value))
        return
    for key, item in value.items():
        if isinstance(item, float):
            item = f"{item:.3f}"
        elif isinstance(item, list) and len(item) > 8:
            item = f"{len(item)} items"
        print(f"{key:20} {item}")


def _agreement(project: Project, args: argparse.Namespace) -> int:
    raters = args.raters.split(",") if args.raters else None
    _print_json_or_lines(analytics.agreement(project, raters, args.level), args.json)
    return 0


def _alignment(project: Project, args: argparse.Namespace) -> int:
    _print_json_or_lines(analytics.alignment(project, args.judge, args.human), args.json)
    return 0


def _import_labels(project: Project, args: argparse.Namespace) -> int:
    summary = import_labels(project, args.path)
    if args.json:
        print(json.dumps(asdict(summary)))
    else:
        print(
            f"imported {summary.labels} labels from {summary.lines} lines "
            f"({summary.data_points_created} new data points; {summary.sampled} answers marked as randomly sampled)"
        )
    return 0


def _export(project: Project, args: argparse.Namespace) -> int:
    names = list(args.redact_name)
    if args.redact_names_file:
        try:
            names += args.redact_names_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(str(args.redact_names_file), f"cannot read the names ({exc})") from exc
    redact = Redaction(tuple(names)) if args.redact or names else keep_everything
    print(f"wrote {export(project, args.format, args.out, redact)}")
    return 0


def prepare_gui(project: Project, args: argparse.Namespace) -> None:
    """What `assay gui` does before the window opens."""
    if args.sample and not project.answers():
        import_dataset(project.sessions, SAMPLE_DATASET)


COMMANDS = {
    "init": _init,
    "import": _import,
    "info": _info,
    "search": _search,
    "citations": _citations,
    "segment": _segment,
    "judge": _judge,
    "show": _show,
    "scores": _scores,
    "agreement": _agreement,
    "alignment": _alignment,
    "import-labels": _import_labels,
    "models": _models,
    "export": _export,
    "verify": _verify,
    "stress-test": _stress,
    "rubric-scores": _rubric_scores,
    "criteria": _criteria,
    "audit": _audit,
    "bundle": _bundle,
    "network": _network,
    "assign": _assign,
    "backup": cli_backups.backup,
    **stats_cli.COMMANDS,
}

if __name__ == "__main__":
    sys.exit(main())

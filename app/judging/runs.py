"""Judge runs: judge answers grouped by document (what each reads: app/judging/cases.py), save each at once.

A run is a rater whose configuration (backend, model and file hash, prompt version, parameters) is
recorded; running it again resumes where it stopped, and a killed run loses at most the answer in
flight (each judged answer is one transaction).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import AssayError, JudgeUnavailable
from app.ingest.citations import find_citations
from app.judging.cases import AnyJudge, judge_case
from app.judging.evidence import DocumentEvidence
from models.backends.base import JudgeBackend
from models.judge import Cancelled, JudgeCase, LemajJudge, Mode, Tagging
from models.prompts import Strictness
from models.rubrics import Rubric, RubricCase, RubricJudge, RubricResult
from models.verdict import Verdict
from models.vocabulary import BackendKind, OutcomeStatus, RaterKind
from storage import documents, judgements, raters, rubric_results

if TYPE_CHECKING:
    from app.project import Project

STOP_AFTER_UNAVAILABLE = 3  # the model or server is gone: stop instead of failing every answer


@dataclass(frozen=True)
class JudgeSettings:
    """What the user chose for a run (CLI flags, or the judge dialog)."""

    backend: BackendKind = BackendKind.LOCAL
    model: str | None = None  # GGUF path (local) or model name (API); None: the embedded model
    base_url: str | None = None
    gpu_layers: int | None = None
    context_tokens: int = 8192
    threads: int | None = None
    mode: Mode = Mode.TWO_STAGE
    strictness: Strictness = Strictness.STANDARD
    seed: int = 0
    structured: str = "json_schema"
    allow_network: bool = False
    flash_attn: bool = False
    rubric: Rubric = Rubric.LEMAJ
    disputatio: bool = False
    find_missing: bool = True
    parallel: int = 1  # answers judged at once; API servers only (one local model runs one at a time)
    tagging: Tagging = Tagging.ONE_PASS  # two-stage on a local model: all points in one evaluation

    @classmethod
    def from_run_config(cls, config: Mapping[str, Any]) -> JudgeSettings:
        """The settings a run's stored configuration names (its judge's `describe()`), or the `assay
        judge` flags, whose names are the same. The one place settings are rebuilt: a setting added
        here is kept by every run that replays a stored one (the stress tests). What the
        configuration does not say keeps its default, except `tagging`: runs from before one-pass
        tagging tagged point by point."""
        values = {f.name: config[f.name] for f in fields(cls) if f.name in config}
        values["model"] = config.get("model_path") or config.get("model")  # a local run keeps the file's path
        values["tagging"] = values.get("tagging", Tagging.PER_POINT.value)
        kinds = {"backend": BackendKind, "mode": Mode, "strictness": Strictness, "rubric": Rubric, "tagging": Tagging}
        for name, kind in kinds.items():
            if name in values:
                values[name] = kind(values[name])
        return cls(**values)

    def default_name(self, backend: JudgeBackend) -> str:
        model = Path(str(backend.describe().get("model", "model"))).stem
        if self.rubric is not Rubric.LEMAJ:
            return f"{self.rubric.value}:{model}"
        return f"judge:{model}:{self.mode.value}:{self.strictness.value}"

    def judge(self, backend: JudgeBackend) -> LemajJudge | RubricJudge:
        if self.rubric is Rubric.LEMAJ:
            return self.lemaj_judge(backend)
        return RubricJudge(backend, self.rubric, seed=self.seed, disputatio=self.disputatio)

    def lemaj_judge(self, backend: JudgeBackend) -> LemajJudge:
        """The judge that tags data points (juries and stress tests need one, not a rubric)."""
        if self.rubric is not Rubric.LEMAJ:
            raise AssayError(f"this needs a LeMAJ judge; {self.rubric.value} is a rubric")
        return LemajJudge(
            backend,
            self.mode,
            self.strictness,
            seed=self.seed,
            find_missing=self.find_missing,
            tagging=self.tagging,
        )


def destination(settings: JudgeSettings) -> str:
    """The host an API judge sends texts to."""
    from urllib.parse import urlsplit

    default = "api.anthropic.com" if settings.backend == BackendKind.ANTHROPIC else ""
    return urlsplit(settings.base_url or "").hostname or default or "an unnamed server"


def permitted(settings: JudgeSettings, allowed_hosts: Collection[str], this_run: bool) -> JudgeSettings:
    """An API judge may send texts when this run says so (--allow-network), or the project allows its host."""
    if settings.backend == BackendKind.LOCAL:
        return settings
    return replace(settings, allow_network=this_run or destination(settings) in allowed_hosts)


def is_on_premise(host: str) -> bool:
    """Loopback and private-range addresses stay inside the organisation's network."""
    import ipaddress

    if host in ("localhost",):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def _check_model_fits(path: Path, settings: JudgeSettings) -> None:
    """Refuse, before llama.cpp tries, a model that cannot fit: the estimate is in the message."""
    from app.judging.model_files import check_fit, read_model_info, remember_model
    from models.backends.llama_local import gpu_offload_supported

    if not path.is_file():
        return  # the backend names the missing file
    fit = check_fit(
        read_model_info(path), settings.context_tokens, gpu=settings.gpu_layers != 0 and gpu_offload_supported()
    )
    if not fit.fits:
        raise JudgeUnavailable(f"{path.name}: {fit.sentence()}")
    remember_model(path)


def device_sentence(backend: JudgeBackend) -> str | None:
    """Where a local model runs ("runs on Vulkan0 (…): 31/31 layers offloaded to the GPU"); None for an API."""
    offload = getattr(backend, "offload", None)
    return f"{Path(str(backend.describe().get('model', 'the model'))).name} {offload.sentence()}" if offload else None


JUDGE_STATE_ENV = "ASSAY_JUDGE_STATE_DIR"


def document_state_folder(project: Project) -> Path | None:
    """Where a local judge keeps what it read of each contract, so the next run about it starts at
    once: the user's cache folder. None for an encrypted project: its text must not be recoverable
    from a file the passphrase does not protect."""
    if project.passphrase is not None:
        return None
    if folder := os.environ.get(JUDGE_STATE_ENV):
        return Path(folder)
    from platformdirs import user_cache_path

    return user_cache_path("Assay", appauthor=False) / "judge-state"


def make_backend(settings: JudgeSettings, state_folder: Path | None = None) -> JudgeBackend:
    """The backend the settings name; API backends refuse to exist without network permission. A
    local model keeps documents' states in `state_folder` (document_state_folder), if given."""
    if settings.parallel < 1:
        raise AssayError("--parallel is at least 1")
    if settings.backend == BackendKind.LOCAL:
        from models.backends.llama_local import LlamaBackend

        if settings.parallel > 1:
            raise AssayError("the local judge runs one answer at a time; --parallel is for API servers")

        if settings.model:
            _check_model_fits(Path(settings.model).expanduser(), settings)
        return LlamaBackend(
            Path(settings.model).expanduser() if settings.model else None,
            context_tokens=settings.context_tokens,
            threads=settings.threads,
            gpu_layers=settings.gpu_layers,
            seed=settings.seed,
            flash_attn=settings.flash_attn,
            state_folder=state_folder,
        )
    from models.backends.http import AnthropicBackend, OpenAIBackend

    if settings.backend == BackendKind.OPENAI:
        if not settings.base_url or not settings.model:
            raise AssayError("an OpenAI-compatible judge needs --base-url and --model")
        return OpenAIBackend(
            settings.base_url,
            settings.model,
            structured=settings.structured,
            allow_network=settings.allow_network,
            concurrency=settings.parallel,
        )
    if settings.backend == BackendKind.ANTHROPIC:
        if not settings.model:
            raise AssayError("an Anthropic judge needs --model")
        return AnthropicBackend(
            settings.base_url or "https://api.anthropic.com",
            settings.model,
            allow_network=settings.allow_network,
            concurrency=settings.parallel,
        )
    raise AssayError(f"unknown judge backend {settings.backend!r} (local, openai or anthropic)")


# ---------------------------------------------------------------- runs


def _failed(judge: AnyJudge, answer_id: str, error: str) -> Verdict | RubricResult:
    if isinstance(judge, RubricJudge):
        return RubricResult(answer_id, judge.rubric, failed=True, error=error)
    return Verdict(answer_id, failed=True, error=error)


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    failed: int
    answer_id: str
    tokens_per_second: float
    eta_seconds: float | None


@dataclass
class RunSummary:
    rater: str
    judged: int = 0
    failed: int = 0
    skipped: int = 0  # judged by this run before
    cancelled: bool = False
    failures: dict[str, str] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)  # judge points refused by validation, by reason


def open_run(sessions: sessionmaker[Session], name: str, config: dict[str, Any], actor: str) -> int:
    """The rater of a run: created with its configuration, or the same run resumed."""
    with sessions.begin() as session:
        existing = raters.rater_named(session, name)
        if existing is None:
            return raters.add_rater(session, name, RaterKind.JUDGE, config, actor).id
        if existing.kind is not RaterKind.JUDGE:
            raise AssayError(f"{name!r} is a human reviewer, not a judge run")
        changed = sorted(k for k in set(config) | set(existing.config) if config.get(k) != existing.config.get(k))
        if changed:
            raise AssayError(
                f"a judge run named {name!r} exists with other settings ({', '.join(changed)}); "
                "choose another --name to start a new run"
            )
        return existing.id


def run_judge(
    sessions: sessionmaker[Session],
    judge: AnyJudge,
    name: str,
    *,
    answer_ids: list[str] | None = None,
    limit: int | None = None,
    more: int | None = None,
    on_progress: Callable[[Progress], None] = lambda _p: None,
    cancel: threading.Event | None = None,
    actor: str = "judge",
    parallel: int = 1,
) -> RunSummary:
    """Judge the run's pending answers, saving each as it is judged, so a stopped run keeps its work.

    `limit`: the first N answers of the selection in dataset order (run again, or after a crash, it
    finishes those N and nothing else); `more`: the next N answers this run has not judged.

    `parallel` answers are judged at once (for API servers that batch requests: vLLM, llama-server
    with several slots); reading and saving stay on this thread, one transaction per answer.
    """
    cancel = cancel or threading.Event()
    rater_id = open_run(sessions, name, judge.describe(), actor)
    with sessions() as session:
        pending, done_before = judgements.answers_to_judge(session, rater_id, answer_ids, first=limit, more=more)
    summary = RunSummary(name, skipped=done_before)
    queue = iter(pending)
    in_flight: dict[Future[Any], tuple[JudgeCase | RubricCase, list[documents.Passage]]] = {}
    started, tokens, unavailable, last_error = time.perf_counter(), 0, 0, ""

    with ThreadPoolExecutor(max_workers=max(parallel, 1), thread_name_prefix="judge") as pool:

        def submit_next() -> None:
            answer_id = next(queue, None)
            if answer_id is None or cancel.is_set() or unavailable >= STOP_AFTER_UNAVAILABLE:
                return
            with sessions.begin() as session:  # an answer's segmentation not stored yet is kept
                case, passages = judge_case(session, judge, answer_id)
            in_flight[pool.submit(_evaluate, judge, case, cancel)] = (case, passages)

        for _ in range(max(parallel, 1)):
            submit_next()
        while in_flight:
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in finished:
                case, passages = in_flight.pop(future)
                try:
                    verdict, judge_was_unavailable = future.result()
                except Cancelled:
                    continue
                unavailable = unavailable + 1 if judge_was_unavailable else 0
                last_error = verdict.error or ""
                with sessions.begin() as session:
                    _save(session, rater_id, case, verdict, passages, actor)
                for reason, count in verdict.rejected.items():
                    summary.rejected[reason] = summary.rejected.get(reason, 0) + count
                if verdict.failed:
                    summary.failed += 1
                    summary.failures[case.answer_id] = verdict.error or "failed"
                else:
                    summary.judged += 1
                tokens += verdict.evaluated_tokens + verdict.completion_tokens
                done = summary.judged + summary.failed
                elapsed = time.perf_counter() - started
                on_progress(
                    Progress(
                        done,
                        len(pending),
                        summary.failed,
                        case.answer_id,
                        tokens / elapsed if elapsed else 0.0,
                        elapsed / done * (len(pending) - done),
                    )
                )
                submit_next()
    if unavailable >= STOP_AFTER_UNAVAILABLE:
        raise JudgeUnavailable(f"stopped after {unavailable} answers in a row could not be judged: {last_error}")
    summary.cancelled = cancel.is_set() and summary.judged + summary.failed < len(pending)
    return summary


def _evaluate(judge: AnyJudge, case: JudgeCase | RubricCase, cancel: threading.Event):
    """The verdict, and whether the judge could not be reached at all (a failure of the service)."""
    try:
        if isinstance(judge, LemajJudge):
            assert isinstance(case, JudgeCase)  # a run builds the case its judge reads
            return judge.evaluate(case, cancel), False
        assert isinstance(case, RubricCase)
        return judge.evaluate(case, cancel), False
    except JudgeUnavailable as exc:
        return _failed(judge, case.answer_id, str(exc)), True


def _save(
    session: Session,
    rater_id: int,
    case: JudgeCase | RubricCase,
    verdict: Verdict | RubricResult,
    passages: list[documents.Passage],
    actor: str,
) -> None:
    outcome = judgements.JudgeOutcome(
        status=OutcomeStatus.FAILED if verdict.failed else OutcomeStatus.JUDGED,
        attempts=verdict.attempts,
        error=verdict.error,
        raw_output=verdict.raw_output,
        passages_seen=tuple(p.citation_id for p in case.evidence),
        prompt_tokens=verdict.prompt_tokens,
        completion_tokens=verdict.completion_tokens,
        seconds=verdict.seconds,
        rejected=dict(verdict.rejected) or None,
    )
    if isinstance(verdict, RubricResult):
        result = None if verdict.failed else (verdict.label, verdict.score, verdict.payload)
        rubric_results.save_rubric_result(
            session, rater_id, case.answer_id, verdict.rubric.value, result, outcome, actor
        )
        return
    passage_ids = {p.citation_id: p.id for p in passages}
    evidence = DocumentEvidence(passages)
    points = []
    for point in verdict.points:
        # The evidence the judge relied on (what holds the point first), then what the answer itself
        # cites inside the point's words.
        written = find_citations(point.text, passages) if point.start is not None else []
        ordered = evidence.first_holding(point.citations, point.text)
        cited = {c: point.basis if c in point.citations else "found" for c in ordered if c in passage_ids}
        for citation in written:
            for c in citation.passages[:3]:
                cited.setdefault(c, "answer")
        points.append(
            judgements.NewDataPoint(
                text=point.text,
                span_start=point.start,
                span_end=point.end,
                tag=point.tag,
                confidence=point.confidence,
                rationale=point.rationale,
                passage_ids=tuple(passage_ids[c] for c in cited),
                unverified_citations=point.unverified_citations,
                bases=tuple(cited.values()),
                context_start=point.context_start,
                context_end=point.context_end,
            )
        )
    judgements.save_judgement(session, rater_id, case.answer_id, points, outcome, actor)

"""The paired stress test, which needs no prior review: plant one error in one point of an answer, and
count a catch when a rater flags the changed point but not the same point unchanged.

Errors are planted only in points the document supports (judged here by a test of its own, not by any
rater), so that a planted error is an error; flags on those points unchanged are false alarms. Raters:
the verifier, a LeMAJ judge run (its model re-tags the points with the run's settings), or a jury run
(its jurors' tags on the point, combined by the jury's rule).
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import AssayError
from app.ingest.citations import CITATION, CitationIndex
from app.judging.standing import STRESS_SETTING
from app.judging.verification import VERIFIER, Verifier
from models.perturbations import TYPES, Context, Planted, document_context, plant
from models.verifier import INCORRECT
from models.vocabulary import BackendKind, Tag
from storage import documents, reviews
from storage.answers import answer_detail, list_answers, segmentation
from storage.raters import rater_named

SUPPORT = 0.7  # share of a point's words one passage must hold for the point to count as supported


# ---------------------------------------------------------------- which points the document supports

_WORD = re.compile(r"[a-z0-9]+")
_QUOTED = re.compile(r"[“\"]([^”\"]{10,})[”\"]")


def _plain(text: str) -> str:
    return " ".join(_WORD.findall(text.lower().replace("’", "'")))


@dataclass
class _DocumentFacts:
    plain: str
    passages: list[tuple[str, set[str]]]  # citation id, its words of 4+ letters
    context_pairs: tuple[tuple[str, str], ...]
    sections: dict[str, list[str]]  # section number -> citation ids of its passages
    count: int
    sources: list[documents.Passage]
    index: CitationIndex = field(init=False)
    text_of: dict[str, str] = field(init=False)
    whole: dict[str, set[str]] = field(init=False)  # section number -> its passages with every clause under it

    def __post_init__(self) -> None:
        self.index = CitationIndex(self.sources)
        self.text_of = {p.citation_id: p.text for p in self.sources}
        self.whole = {s: set(self.index.resolve_whole("section", s)) for s in self.sections}


def _facts(passages: list[documents.Passage]) -> _DocumentFacts:
    text = "\n".join(p.text for p in passages)
    sections: dict[str, list[str]] = {}
    for p in passages:
        if p.section and re.fullmatch(r"\d+(?:\.\d+)*", p.section):
            sections.setdefault(p.section, []).append(p.citation_id)
    return _DocumentFacts(
        " " + _plain(text) + " ",
        [(p.citation_id, {w for w in _WORD.findall(p.text.lower()) if len(w) >= 4}) for p in passages],
        document_context(text, list(sections), len(passages)),
        sections,
        len(passages),
        passages,
    )


def supported(point: str, facts: _DocumentFacts) -> bool:
    """Quotations found word for word, numbers present, and most words in one passage."""
    for quoted in _QUOTED.findall(point):
        for piece in re.split(r"\.\.\.|…|\[[^\]]*\]", quoted):
            if _plain(piece) and f" {_plain(piece)} " not in facts.plain:
                return False
    for number in re.findall(r"\d+", point):
        if f" {number} " not in facts.plain and number not in facts.plain:
            return False
    own = {w for w in _WORD.findall(point.lower()) if len(w) >= 4}
    if len(own) < 3:
        return False
    by_id = dict(facts.passages)
    for at, section in _cited_sections(point, facts):
        if _in_quotes(point, at):
            continue
        # A point that cites a section not holding it is not supported as written: the section is its
        # heading and text with every clause under it, as the claim checker reads a citation.
        if not any(len(own & by_id.get(c, set())) >= 0.3 * len(own) for c in section):
            return False
        # Nor is one whose quotation comes from elsewhere than the section it cites.
        cited = " " + " ".join(_plain(facts.text_of[c]) for c in section) + " "
        for quoted in _QUOTED.findall(point):
            pieces = [_plain(p) for p in re.split(r"\.\.\.|…|\[[^\]]*\]", quoted)]
            if any(len(p.split()) >= 5 and f" {p} " not in cited for p in pieces):
                return False
    return max(len(own & words) / len(own) for _, words in facts.passages) >= SUPPORT


def _cited_sections(point: str, facts: _DocumentFacts) -> list[tuple[int, tuple[str, ...]]]:
    """Where the point cites, and the passages of what it cites: a section with every clause under it
    (CitationIndex.resolve_whole, the claim checker's reading of a citation); none where the document
    lacks it."""
    found = []
    for m in CITATION.finditer(point):
        kind = next(name for name, value in m.groupdict().items() if value)
        found.append((m.start(), facts.index.resolve_whole(kind, m.group(kind))))
    return found


def _in_quotes(text: str, at: int) -> bool:
    return any(m.start() < at < m.end() for m in _QUOTED.finditer(text))


def _unrelated_section(point: str, facts: _DocumentFacts) -> str | None:
    own = {w for w in _WORD.findall(point.lower()) if len(w) >= 4}
    by_id = dict(facts.passages)
    # A short section (a long one, "1.01 Definitions", holds nearly everything) sharing least with the point.
    # Never a section that holds the point's own passage: "Section 11" is 11 with 11.1, 11.2… (its clauses).
    home = max(facts.passages, key=lambda p: len(own & p[1]))[0] if facts.passages else None
    short = [s for s, ids in facts.sections.items() if len(ids) <= 3 and home not in facts.whole[s]]
    if short:
        number = min(short, key=lambda s: (sum(len(own & by_id.get(i, set())) for i in facts.sections[s]), s))
        return f"Section {number}"
    scored = sorted(facts.passages, key=lambda p: (len(own & p[1]), -len(p[1])))
    return f"[{scored[0][0]}]" if scored and scored[0][1] else None


# ---------------------------------------------------------------- raters


class Rater:
    """Flags (True: tagged incorrect) for spans of an answer text; `None` for a span not rated."""

    name: str

    def flags(self, answer_id: str, text: str, spans: list[tuple[int, int]]) -> list[bool]:
        raise NotImplementedError

    def tags(self, answer_id: str, text: str, spans: list[tuple[int, int]]) -> list[Tag | None]:
        return [Tag.INCORRECT if f else None for f in self.flags(answer_id, text, spans)]

    def finds_missing(self, answer_id: str, text: str, removed: str) -> bool | None:
        """Whether the rater names the removed point as missing; None when it cannot say."""
        return None


class VerifierRater(Rater):
    name = VERIFIER

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self.verifier = Verifier(sessions)
        self._documents: dict[str, int] = {}

    def flags(self, answer_id: str, text: str, spans: list[tuple[int, int]]) -> list[bool]:
        with self.sessions() as session:
            if answer_id not in self._documents:
                answer = answer_detail(session, answer_id)
                assert answer is not None
                self._documents[answer_id] = answer.document_id
            reports = self.verifier.check(session, self._documents[answer_id], text, spans)
        return [r.verdict == INCORRECT for r in reports]

    def finds_missing(self, answer_id: str, text: str, removed: str) -> bool | None:
        return False  # the verifier checks what is written; it never proposes what is missing


class JudgeRater(Rater):
    """A LeMAJ judge run's model, re-tagging each point of the (perturbed) answer as the run would."""

    def __init__(self, sessions: sessionmaker[Session], name: str, judge: Any, cancel: threading.Event) -> None:
        self.sessions, self.name, self.judge, self.cancel = sessions, name, judge, cancel
        self._cases: dict[str, Any] = {}
        self._tags: dict[tuple[str, str, int, int], Tag | None] = {}

    def _case(self, answer_id: str) -> Any:
        from app.judging.cases import select_evidence
        from models.judge import JudgeCase

        if answer_id not in self._cases:
            with self.sessions.begin() as session:  # its segmentation, kept if not stored yet
                answer = answer_detail(session, answer_id)
                assert answer is not None
                passages = documents.passages_of(session, answer.document_id)
                points = segmentation(session, answer_id)
                evidence = select_evidence(
                    session, self.judge.backend, passages, answer.question, answer.text, self.judge.strictness, points
                )
            known = frozenset(p.citation_id for p in passages)
            self._cases[answer_id] = JudgeCase(
                answer_id, answer.question, answer.text, evidence, known, points=tuple(points)
            )
        return self._cases[answer_id]

    def tags(self, answer_id: str, text: str, spans: list[tuple[int, int]]) -> list[Tag | None]:
        from dataclasses import replace

        from models.verdict import Verdict

        case = self._case(answer_id)
        if text != case.answer:  # a planted error: its own points, segmented when read
            case = replace(case, answer=text, points=None)
        if getattr(self.judge, "tagging", None) == "one-pass":
            return self._tags_in_one_pass(case, answer_id, text, spans)
        out = []
        for s, e in spans:
            key = (answer_id, text, s, e)
            if key not in self._tags:
                if self.cancel.is_set():
                    raise AssayError("stress test cancelled")
                tag, _ = self.judge._tag(case, text[s:e], Verdict(answer_id), self.cancel)
                self._tags[key] = tag
            out.append(self._tags[key])
        return out

    def _tags_in_one_pass(self, case: Any, answer_id: str, text: str, spans: list[tuple[int, int]]) -> list[Tag | None]:
        """One-pass tagging reads every point of the answer in one evaluation, as a judge run does; each
        span gets the tag of the point it overlaps most."""
        from models.verdict import Verdict

        key = (answer_id, text, -1, -1)
        segments = case.segments()
        if key not in self._tags:
            if self.cancel.is_set():
                raise AssayError("stress test cancelled")
            tagged = self.judge.tag_points(case, segments, Verdict(answer_id), self.cancel)
            for segment, (tag, _) in zip(segments, tagged, strict=True):
                self._tags[(answer_id, text, segment.start, segment.end)] = tag
            self._tags[key] = None
        out: list[Tag | None] = []
        for s, e in spans:
            best = max(segments, key=lambda g: min(e, g.end) - max(s, g.start), default=None)
            out.append(self._tags.get((answer_id, text, best.start, best.end)) if best else None)
        return out

    def flags(self, answer_id: str, text: str, spans: list[tuple[int, int]]) -> list[bool]:
        return [t is Tag.INCORRECT for t in self.tags(answer_id, text, spans)]


class JuryRater(Rater):
    """The jury's combination of its jurors' tags on each point (a juror that abstains is left out)."""

    def __init__(self, name: str, jurors: list[Rater], how: str, priority: tuple[Tag, ...]) -> None:
        self.name, self.jurors, self.how, self.priority = name, jurors, how, priority

    def flags(self, answer_id: str, text: str, spans: list[tuple[int, int]]) -> list[bool]:
        from app.judging.jury import combine_tags

        by_juror = [j.tags(answer_id, text, spans) for j in self.jurors]
        out = []
        for i in range(len(spans)):
            votes = [tag for tags in by_juror if (tag := tags[i]) is not None]
            out.append(bool(votes) and combine_tags(votes, self.how, self.priority) is Tag.INCORRECT)
        return out


# ---------------------------------------------------------------- the test


@dataclass
class _Tally:
    trials: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TYPES, 0))
    caught: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TYPES, 0))
    unperturbed: int = 0
    false_alarms: int = 0


def wilson(k: int, n: int) -> list[float] | None:
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return None
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return [round(float(lo), 4), round(float(hi), 4)]


def paired_stress_test(
    sessions: sessionmaker[Session],
    raters: list[Rater],
    *,
    limit: int | None = None,
    seed: int = 0,
    types: tuple[str, ...] = TYPES,
    answer_ids: list[str] | None = None,
    on_progress: Callable[[int, int], None] = lambda _d, _t: None,
) -> dict[str, Any]:
    """Per rater and perturbation type: trials, catches, recall with its Wilson interval; false alarms."""
    rng = random.Random(seed)
    with sessions() as session:
        answers = [a.id for a in list_answers(session)]
    if answer_ids is not None:  # the answers named, in the project's order
        unknown = sorted(set(answer_ids) - set(answers))
        if unknown:
            raise AssayError(f"no answer with id {', '.join(unknown)}")
        answers = [a for a in answers if a in set(answer_ids)]
    if not answers:
        raise AssayError("the project has no answers to stress-test")
    chosen = sorted(rng.sample(answers, min(limit or len(answers), len(answers))))
    tallies = {r.name: _Tally() for r in raters}
    facts_by_document: dict[int, _DocumentFacts] = {}
    qualifying = points_seen = 0
    for done, answer_id in enumerate(chosen, start=1):
        with sessions.begin() as session:  # the answer's segmentation, kept if not stored yet
            answer = answer_detail(session, answer_id)
            assert answer is not None
            if answer.document_id not in facts_by_document:
                facts_by_document[answer.document_id] = _facts(documents.passages_of(session, answer.document_id))
            segments = segmentation(session, answer_id)
        facts = facts_by_document[answer.document_id]
        points_seen += len(segments)
        spans = [(s.start, s.end) for s in segments if supported(s.text, facts)]
        qualifying += len(spans)
        if not spans:
            on_progress(done, len(chosen))
            continue
        before = {r.name: r.flags(answer_id, answer.text, spans) for r in raters}
        for r in raters:
            tallies[r.name].unperturbed += len(spans)
            tallies[r.name].false_alarms += sum(before[r.name])
        contexts = [
            Context(
                facts.context_pairs, tuple(facts.sections), _unrelated_section(answer.text[s:e], facts), facts.count
            )
            for s, e in spans
        ]
        for kind in types:
            for i, (span, ctx) in enumerate(zip(spans, contexts, strict=True)):
                planted = plant(kind, answer.text, span, ctx, random.Random(f"{seed}:{answer_id}:{kind}:{i}"))
                if planted is None:
                    continue
                for r in raters:
                    caught = _caught(r, answer_id, planted, before[r.name][i])
                    if caught is None:
                        continue
                    tallies[r.name].trials[kind] += 1
                    tallies[r.name].caught[kind] += caught
        on_progress(done, len(chosen))
    return {
        "answers": len(chosen),
        "points": points_seen,
        "qualifying_points": qualifying,
        "seed": seed,
        "raters": {name: _figures(t) for name, t in tallies.items()},
    }


def _caught(rater: Rater, answer_id: str, planted: Planted, flagged_before: bool) -> bool | None:
    if planted.span is None:
        return rater.finds_missing(answer_id, planted.answer, planted.original)
    flagged = rater.flags(answer_id, planted.answer, [planted.span])[0]
    if planted.kind == "add_claim":
        return flagged
    return flagged and not flagged_before


def _figures(t: _Tally) -> dict[str, Any]:
    by_type = {
        kind: {
            "trials": t.trials[kind],
            "caught": t.caught[kind],
            "recall": round(t.caught[kind] / t.trials[kind], 4) if t.trials[kind] else None,
            "ci": wilson(t.caught[kind], t.trials[kind]),
        }
        for kind in TYPES
    }
    return {
        "by_type": by_type,
        "unperturbed": t.unperturbed,
        "false_alarms": t.false_alarms,
        "false_alarm_rate": round(t.false_alarms / t.unperturbed, 4) if t.unperturbed else None,
    }


def stress_table(result: dict[str, Any]) -> str:
    """The raters side by side: per kind of planted error, caught/trials, recall and its 95 % interval."""

    def cell(f: dict[str, Any]) -> str:
        if not f["trials"]:
            return "–"
        lo, hi = f["ci"]
        return f"{f['caught']}/{f['trials']} {f['recall']:.0%} ({lo:.0%}–{hi:.0%})"

    raters = result["raters"]
    rows = [["planted error", *raters]]
    for kind in TYPES:
        if any(r["by_type"][kind]["trials"] for r in raters.values()):
            rows.append([kind, *(cell(r["by_type"][kind]) for r in raters.values())])
    alarms = [
        f"{r['false_alarms']}/{r['unperturbed']} ({r['false_alarm_rate']:.1%})" if r["unperturbed"] else "–"
        for r in raters.values()
    ]
    rows.append(["false alarms", *alarms])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def remember(sessions: sessionmaker[Session], result: dict[str, Any]) -> None:
    """Keep each rater's latest figures, for the judge dialog, the Judge column and the report."""
    with sessions.begin() as session:
        for name, figures in result["raters"].items():
            planted = sum(f["trials"] for k, f in figures["by_type"].items() if k != "remove_point")
            caught = sum(f["caught"] for k, f in figures["by_type"].items() if k != "remove_point")
            summary = {
                **figures,
                "planted": planted,
                "caught": caught,
                "caught_share": caught / planted if planted else None,
                "answers": result["answers"],
                "seed": result["seed"],
                "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            reviews.set_setting(session, STRESS_SETTING.format(name), summary)


# ---------------------------------------------------------------- raters by name


def judge_from_run(config: dict[str, Any]) -> Any:
    """The LeMAJ judge a run's stored settings describe (local runs only: the test re-runs the model)."""
    from app.judging.runs import JudgeSettings, make_backend

    if config.get("backend", BackendKind.LOCAL) != BackendKind.LOCAL:
        raise AssayError("the stress test re-runs the judge: test a local judge run")
    settings = JudgeSettings.from_run_config(config)
    return settings.judge(make_backend(settings))


def raters_named(
    sessions: sessionmaker[Session], names: list[str], cancel: threading.Event | None = None
) -> list[Rater]:
    """`verifier`, LeMAJ judge runs and jury runs, by name; a jury's jurors are built the same way."""
    cancel = cancel or threading.Event()
    built: dict[str, Rater] = {}

    def build(name: str) -> Rater:
        if name in built:
            return built[name]
        if name == VERIFIER:
            built[name] = VerifierRater(sessions)
            return built[name]
        with sessions() as session:
            run = rater_named(session, name)
        if run is None or run.kind.value != "judge":
            raise AssayError(f"no judge run named {name!r} (raters: verifier, judge runs, jury runs)")
        if run.config.get("backend") == "jury":
            from app.judging.jury import DEFAULT_PRIORITY

            priority = tuple(Tag(t) for t in run.config.get("priority", [t.value for t in DEFAULT_PRIORITY]))
            jurors = [build(j) for j in run.config.get("jurors", [])]
            built[name] = JuryRater(name, jurors, run.config.get("combine", "both"), priority)
        elif run.config.get("backend") == VERIFIER:
            built[name] = VerifierRater(sessions)
        else:
            if run.config.get("rubric", "lemaj") != "lemaj":
                raise AssayError(f"{name!r} is a rubric run; the stress test measures LeMAJ judges")
            built[name] = JudgeRater(sessions, name, judge_from_run(run.config), cancel)
        return built[name]

    return [build(n) for n in names]

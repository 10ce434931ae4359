"""Which automatic rater speaks for a project, and how far each one can be trusted.

The project's *default rater* gives the judge column, the queue's verdict, triage, "least certain
first", the dashboard and the report's headline. It is chosen by standing on human labels:

- on this project: answers both the rater judged and people reviewed (reviewers, the consensus,
  imported human labels), per answer as storage.statistics.real_label_figures counts them;
- where the project has none yet: for the verifier, the claim checker's held-out figures from its data
  card (resources/claim_checker); any other rater is "not measured yet".

Decision, near chance: a rater is trusted when it flags the answers people found wrong clearly more
often than those they found correct — Fisher's exact test, one-sided, on its 2×2 table (flagged or
not × wrong or correct) gives p < 0.05. A rater that flags at random flags both alike, whatever its
rate. Measured on both kinds of answer and not clearly better: "near chance on N human-labelled
answers" (trusted False). Measured on only one kind, or never: "not measured yet" (trusted None).

Decision, the default: the lead's choice (`assay raters --default NAME`, audited), else the trusted
rater with the highest Youden's J (catch rate minus false-alarm rate; ties: more answers measured),
else a rater not measured yet (the latest run) — never one near chance, and never the embedded model
as a finding. A default that is not trusted gives no headline figure unless the lead chose it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import AssayError
from models.vocabulary import RaterKind
from storage import audit, learned_checker, raters, reviews, statistics

if TYPE_CHECKING:  # numpy is imported by the figures that pass a table, not by every command
    from storage.scoring import ScoreTable

DEFAULT_SETTING = "raters.default"  # the lead's explicit choice, by name
TRUSTED_BELOW = 0.05  # Fisher's one-sided p: flags wrong answers more often than correct ones
RULE = (
    "A rater speaks in the headline figures, triage and the queue only when it flags the answers people "
    "found wrong clearly more often than those they found correct (Fisher's exact test, one-sided, p < 0.05, "
    "on human-labelled answers; the claim checker's held-out figures where the project has none), or when "
    "the lead chose it; a rater never measured is never a headline."
)


@dataclass(frozen=True, kw_only=True)
class RaterStanding:
    name: str
    rater_id: int
    answers: int  # how many answers the figures rest on (0: none)
    basis: str  # "project" (its human labels), "data card" (held-out, the checker), "none"
    trusted: bool | None  # None: not measured yet
    recall: float | None = None  # share of wrong answers flagged
    recall_ci: tuple[float, float] | None = None
    false_alarm_rate: float | None = None  # share of correct answers flagged
    false_alarm_ci: tuple[float, float] | None = None
    p_value: float | None = None
    rated: int = 0  # answers it judged in this project

    @property
    def youden(self) -> float:
        if self.recall is None or self.false_alarm_rate is None:
            return float("-inf")
        return self.recall - self.false_alarm_rate

    @property
    def words(self) -> str:
        """Its standing in words, e.g. "trusted: caught 57% of wrong answers, false alarms on 10% of
        correct ones (34 human-labelled answers)"."""
        if self.trusted is None:
            return "not measured yet" if self.basis == "none" else f"not measured yet ({self._measure()})"
        if not self.trusted:
            return f"near chance on {self.answers} human-labelled answers ({self._measure()})"
        # the data cards' claims are worded as their benchmarks word them: a lawyer's wording does worse
        # (bench/wordings.py), and the reader should know which it is
        where = (
            "held-out, from its data card; claims in the benchmarks' own wording"
            if self.basis == "data card"
            else "human-labelled answers"
        )
        return f"trusted: {self._measure()} ({self.answers:,} {where})"

    def _measure(self) -> str:
        parts = []
        if self.recall is not None:
            parts.append(f"caught {self.recall:.0%} of wrong answers")
        if self.false_alarm_rate is not None:
            parts.append(f"false alarms on {self.false_alarm_rate:.0%} of correct ones")
        return ", ".join(parts) or "no answers of both kinds"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "standing": self.words,
            "trusted": self.trusted,
            "n": self.answers,
            "basis": self.basis,
            "recall": self.recall,
            "false_alarm_rate": self.false_alarm_rate,
            "interval": {"recall": self.recall_ci, "false_alarms": self.false_alarm_ci},
            "p_value": self.p_value,
            "answers_rated": self.rated,
        }


class NotAReviewer(AssayError):
    """No human rater by that name: none at all, or the name is a judge run's; `name` is the name asked for."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(problem)
        self.name = name


def human_named(session: Session, name: str, *, create_by: str | None = None) -> raters.Rater:
    """The human rater (a reviewer) called `name`; with `create_by`, one is added (by that actor) when
    the project has none. Refuses with one sentence (NotAReviewer) when the name is a judge run's, or
    when there is none and none is to be added."""
    from storage.reviewer_keys import new_reviewer_problem  # cryptography: not at start-up

    if any("\ud800" <= c <= "\udfff" for c in name):  # no database stores a lone surrogate: refused before asking
        raise NotAReviewer(name, new_reviewer_problem(session, name) or f"{name!r} is not a reviewer's name")
    rater = raters.rater_named(session, name)
    if rater is None and create_by is not None:
        if problem := new_reviewer_problem(session, name):  # "аlice" or "Alice" beside alice: refused
            raise NotAReviewer(name, problem)
        return raters.add_rater(session, name, RaterKind.HUMAN, {}, create_by)
    if rater is not None and rater.kind is RaterKind.HUMAN:
        return rater
    if rater is not None and create_by is not None:
        raise NotAReviewer(name, f"{name!r} is the name of a judge run in this project; choose another reviewer name")
    raise NotAReviewer(name, f"no reviewer named {name!r} in this project")


def _fisher(caught: int, missed: int, alarms: int, quiet: int) -> float:
    from scipy.stats import fisher_exact

    return float(fisher_exact([[caught, missed], [alarms, quiet]], alternative="greater").pvalue)


def standing_from_counts(
    name: str,
    basis: str,
    *,
    with_errors: int,
    caught: int,
    correct: int,
    alarms: int,
    rated: int = 0,
    rater_id: int = 0,
) -> RaterStanding:
    """A standing from the 2×2 counts: caught of with_errors wrong answers, alarms of correct ones."""
    answers = with_errors + correct
    if not with_errors or not correct:
        return RaterStanding(
            name=name, rater_id=rater_id, answers=answers, basis=basis if answers else "none", trusted=None, rated=rated
        )
    p = _fisher(caught, with_errors - caught, alarms, correct - alarms)
    return RaterStanding(
        name=name,
        rater_id=rater_id,
        answers=answers,
        basis=basis,
        trusted=p < TRUSTED_BELOW,
        recall=caught / with_errors,
        recall_ci=statistics.wilson_interval(caught, with_errors),
        false_alarm_rate=alarms / correct,
        false_alarm_ci=statistics.wilson_interval(alarms, correct),
        p_value=p,
        rated=rated,
    )


def data_card_counts() -> dict[str, int] | None:
    """The verifier's held-out answers from its checkers' data cards, as counts: wrong answers and those
    caught, correct answers and false alarms, summed over the entries of what ships (None: no card)."""
    from models.checker import shipped_held_out

    try:
        held_out = shipped_held_out()
    except (OSError, ValueError, AssayError):  # a missing model is said where the verifier runs
        return None
    fields = {"with_errors": "with_errors", "caught": "caught", "correct": "correct", "alarms": "false_alarm_count"}
    totals = dict.fromkeys(fields, 0)
    for entry in held_out:
        if all(isinstance(entry.get(k), int) for k in fields.values()):
            totals = {mine: totals[mine] + entry[theirs] for mine, theirs in fields.items()}
    return totals if totals["with_errors"] and totals["correct"] else None


def _automatic(session: Session) -> list[raters.Rater]:
    return [r for r in raters.raters(session) if r.kind is RaterKind.JUDGE]


def _rated(session: Session, rater_id: int) -> int:
    return statistics.judged_counts(session).get(rater_id, 0)


def standing(
    session: Session, rater: raters.Rater, rated: int | None = None, table: ScoreTable | None = None
) -> RaterStanding:
    """`table`: every rater's scores where the caller has read them (the figures do), so that the human
    labels are weighed from its counts (storage.statistics.real_label_figures)."""
    rated = _rated(session, rater.id) if rated is None else rated
    if rater.config.get("backend") == "verifier" and (fitted := learned_checker.held_out_counts(session)) is not None:
        # a checker fitted to these reviews speaks: its held-out figures, never its verdicts on what it learnt
        return standing_from_counts(rater.name, "project", rated=rated, rater_id=rater.id, **fitted)
    real = statistics.real_label_figures(session, rater.name, table)
    if real is not None and real["with_errors"] and real["correct"]:
        return standing_from_counts(
            rater.name,
            "project",
            with_errors=real["with_errors"],
            caught=real["caught"],
            correct=real["correct"],
            alarms=real["false_alarms"],
            rated=rated,
            rater_id=rater.id,
        )
    if rater.config.get("backend") == "verifier" and (card := data_card_counts()) is not None:
        return standing_from_counts(rater.name, "data card", rated=rated, rater_id=rater.id, **card)
    answers = real["answers"] if real else 0
    basis = "project" if answers else "none"
    return RaterStanding(name=rater.name, rater_id=rater.id, answers=answers, basis=basis, trusted=None, rated=rated)


def standings(source: Session | sessionmaker[Session], table: ScoreTable | None = None) -> list[RaterStanding]:
    """Every automatic rater's standing (judge runs, juries, the verifier), in the order they were made;
    `table` as `standing` takes it."""
    if not isinstance(source, Session):
        with source() as session:
            return standings(session, table)
    counts = statistics.judged_counts(source)
    return [standing(source, r, counts.get(r.id, 0), table) for r in _automatic(source)]


def chosen(session: Session) -> str | None:
    """The lead's explicit choice, if it still names a rater."""
    name = reviews.setting(session, DEFAULT_SETTING)
    return name if name and raters.rater_named(session, name) is not None else None


def default_rater(source: Session | sessionmaker[Session], table: ScoreTable | None = None) -> RaterStanding | None:
    """The rater that speaks for the project (the rule is in the module docstring); None when no
    automatic rater has rated an answer, or only raters near chance have. `table`: every rater's
    scores, where the caller has read them (`standing`)."""
    if not isinstance(source, Session):
        with source() as session:
            return default_rater(session, table)
    return speaker(source, standings(source, table))


def speaker(session: Session, every: list[RaterStanding]) -> RaterStanding | None:
    """default_rater's choice among standings already read (every automatic rater's, as `standings`
    gives them), for a caller that keeps them between saves."""
    all_standings = [s for s in every if s.rated]
    if (name := chosen(session)) is not None:
        return next((s for s in all_standings if s.name == name), None)
    trusted = [s for s in all_standings if s.trusted]
    if trusted:
        return max(trusted, key=lambda s: (s.youden, s.answers))
    unmeasured = [s for s in all_standings if s.trusted is None]
    return unmeasured[-1] if unmeasured else None


def speaks_as_finding(source: Session | sessionmaker[Session]) -> RaterStanding | None:
    """The default rater where its figures may be a headline: trusted, or chosen by the lead."""
    if not isinstance(source, Session):
        with source() as session:
            return speaks_as_finding(session)
    found = default_rater(source)
    return found if found is not None and (found.trusted or chosen(source) == found.name) else None


def left_out(source: Session | sessionmaker[Session]) -> list[RaterStanding]:
    """The raters that have rated answers but do not speak as findings, each with its standing."""
    if not isinstance(source, Session):
        with source() as session:
            return left_out(session)
    speaker = speaks_as_finding(source)
    return [s for s in standings(source) if s.rated and (speaker is None or s.name != speaker.name)]


def judge_per_answer(session: Session) -> dict[str, int]:
    """The default rater's id on each answer it judged: "the judge" of triage, estimates and calibration."""
    found = default_rater(session)
    return {} if found is None else statistics.judged_by(session, found.name)


def set_default(sessions: sessionmaker[Session], name: str | None, actor: str) -> RaterStanding | None:
    """The lead chooses the default rater by name (None: back to the automatic choice); audited. A rater
    that does not exist, is a person, or has rated nothing is refused in one sentence."""
    with sessions.begin() as session:
        if name is not None:
            found = raters.rater_named(session, name)
            if found is None or found.kind is not RaterKind.JUDGE:
                known = ", ".join(r.name for r in _automatic(session)) or "none yet"
                raise AssayError(f"no automatic rater named {name!r} (the raters are: {known})")
            if not _rated(session, found.id):
                raise AssayError(f"{name} has rated no answer yet: run it first, then choose it")
        before = reviews.setting(session, DEFAULT_SETTING)
        reviews.set_setting(session, DEFAULT_SETTING, name)
        audit.append_audit(session, actor, "raters.default", "project", "-", {"from": before, "to": name})
    return default_rater(sessions)

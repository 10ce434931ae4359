"""Values: an amount, date, period or number in a claim is compared with the statement of the same duty in
the passages it is about, never with any value of the same kind that happens to stand nearby. Reading values
from text is models/verifier/values.py's work.

A passage is cut into statements (sentences, and their clauses at semicolons and at ", and", ", provided" ...).
The statement of the same duty is the one that holds most of the claim's words around the value, each word
weighed by how rare it is in the document ("agreement" says little, "dispute" much): the same subject and the
same action (HERMAN; issue 63: "resolve the dispute within 30 days" is not confirmed by a "30 days" about
another duty in the same section, where the dispute is to be resolved in 15). Then:
- every value of that statement (and of any as close to the claim) agrees: the value is checked;
- none agrees: contradicted, and the reason shows both values;
- some agree, some do not: the values compete, and the claim is not confirmed (a doubt, never a flag);
- no statement of the document is close enough to be the same duty: the passages the claim is about decide
  only when they state one value of that kind; with several, the claim's is not confirmed if it is among
  them, and left unchecked if not.
A date or period of one event of a contract's life (made, start, end, renewal, notice, payment) is read only
from a statement about that event. Among the values of the duty's statements, the words right around each
value choose ("commencing on [June 1] and ending on [May 31]"), and so do the claim's other values: in a
table, the row they stand in; a claim of three or more values is read as a row against the run of values it
matches most. Where the claim's value stands in a statement nearly as close to the duty, it competes rather
than contradicts, and so does a date the document also gives for the same event (a preamble's "made as of"
and the signatures' "Dated:"); with no statement of its duty, a date the document gives for the same event
confirms it. The first date the agreement gives for its making or start (its preamble: "made effective as
of the 17th day of October, 2007") decides over a signature's or another contract's, and, where no statement
of the duty gives one, decides alone. A date the document gives only less exactly ("January 2018") neither
confirms nor contradicts a claim's day. A value alone ("Termination Date: December 31, 2023", "Date Bogota
D.C. January 30, 2012") is read with the words before it. A term's end, where the contract gives its length
and start but not the date, is computed (term_end.py).
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from datetime import date
from functools import cached_property, lru_cache

from models.verifier.checks import Outcome, Reason
from models.verifier.checks.term_end import START, iso, term_ends
from models.verifier.document import Document
from models.verifier.text import content_words, stem
from models.verifier.values import Value, digits, read_values

AGREEMENT = "agreement"  # the concept of the words that name the contract itself (_CONCEPTS)
END = "end"  # the concept of the words that say when something ends (_CONCEPTS)
SAME_DUTY = 0.5  # weighed share of the claim's words a statement must hold to state the same duty
TIE = 0.1  # statements this close to the best one state the same duty too
MAY_BE_DUTY = 0.25  # a statement this close to the best one may state the duty too: its value is no rival
# Where a passage's statements part: a sentence's end, a semicolon, a colon before a list, and a comma before
# a conjunction that starts another duty ("..., and the Supplier shall ...", "..., provided that ..."); not at
# ", or", which offers another value for the same duty ("5 days after sending, or 10 days by mail").
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[(\"'A-Z0-9])|;\s*")
_CLAUSE_START = re.compile(
    r",\s+(?=(?i:and|but|provided|except|unless|whereupon|if|in which case|after which|thereafter)\b)"
)
_VALUE_WORDS = """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion first
january february march april may june july august september october november december day days week weeks month
months year years hour hours business calendar percent dollars"""
_NUMBER_WORDS = frozenset(_VALUE_WORDS.split())  # a value's own words and units say nothing of its duty


@dataclass(frozen=True)
class Statement:
    """One statement of a passage: its words (as stems, without the values' own), its typed values, and the
    words right around each value ("commencing on [June 1] and ending on [May 31]")."""

    text: str
    stems: frozenset[str]
    values: tuple[Value, ...]
    normalisations: tuple[str, ...]
    around: tuple[frozenset[str], ...]  # one for each value
    sentence: str  # the sentence it is part of: where its exceptions ("..., unless ...") are
    beside: tuple[tuple[Value, ...], ...] = ()  # for each value, the values next to it: its row of a table
    in_order: tuple[Value, ...] = ()  # its values as the text gives them

    def near(self, value: Value) -> frozenset[str]:
        return self.around[self.values.index(value)]


NEAR_BEFORE, NEAR_AFTER = 60, 30  # characters: the words around a value that say what it is


@lru_cache(maxsize=8192)  # a passage is read by every claim about it
def statements(text: str) -> tuple[Statement, ...]:
    out = []
    for sentence in _labelled(_SENTENCE_END.split(text)):
        for piece in _CLAUSE_START.split(sentence):
            if piece.strip():
                reading = read_values(piece)
                plain = digits(piece)[0]
                around = tuple(_around(plain, v, reading.values) for v in reading.values)
                values, notes = tuple(reading.values), tuple(reading.normalisations)
                beside = _beside(plain, values)
                in_order = tuple(sorted(values, key=lambda v: plain.find(v.surface)))
                out.append(Statement(piece, _context(piece), values, notes, around, sentence, beside, in_order))
    return tuple(out)


def _labelled(sentences: list[str]) -> list[str]:
    """A value alone stays with the words before it: "Termination Date: December 31, 2023" is one statement,
    whose words say which date it is."""
    out: list[str] = []
    for sentence in sentences:
        if out and not _context(digits(sentence)[0]):  # "Date Bogota D.C. [January 30, 2012]"
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


def _beside(plain: str, values: tuple[Value, ...]) -> tuple[tuple[Value, ...], ...]:
    """For each value, the two before it and the one after it in the text: "7,501 - 10,000 subscribers:
    7.00%" puts 7.00% beside 7,501 and 10,000, the row that says which rate it is."""
    order = sorted(range(len(values)), key=lambda i: plain.find(values[i].surface))
    rank = {i: r for r, i in enumerate(order)}
    return tuple(
        tuple(values[order[r]] for r in (rank[i] - 2, rank[i] - 1, rank[i] + 1) if 0 <= r < len(order))
        for i in range(len(values))
    )


def _around(plain: str, value: Value, values: list[Value]) -> frozenset[str]:
    """The words just before a value and just after it, not reaching past a neighbouring value."""
    at = plain.find(value.surface)
    if at < 0:
        return frozenset()
    end = at + len(value.surface)
    start, stop = max(0, at - NEAR_BEFORE), min(len(plain), end + NEAR_AFTER)
    for other in values:  # a neighbour with words between them bounds it; "10 days or 20 days" share theirs
        where = plain.find(other.surface)
        if other is value or where < 0:
            continue
        if where + len(other.surface) <= at and _context(plain[where + len(other.surface) : at]):
            start = max(start, where + len(other.surface))
        elif where >= end and _context(plain[end:where]):
            stop = min(stop, where)
    while 0 < start < at and plain[start - 1].isalnum():  # whole words only
        start += 1
    while end < stop < len(plain) and plain[stop].isalnum():
        stop -= 1
    return _context(plain[start:at] + " " + plain[end:stop])


def _context(text: str) -> frozenset[str]:
    """The words that say what a statement is about: its content words as stems, the words of a contract's
    terms folded to one concept each ("signed", "entered", "dated" are all the making of it), and not its
    numbers or dates."""
    return frozenset(
        _concept(w) for w in content_words(text) if not any(map(str.isdigit, w)) and w not in _NUMBER_WORDS
    )


def _concept(word: str) -> str:
    stemmed = stem(word)
    return _CONCEPTS.get(stemmed, stemmed)


def _concepts(**groups: str) -> dict[str, str]:
    return {stem(word): concept for concept, words in groups.items() for word in words.split()}


# The events of a contract's life a date or period belongs to.
_EVENTS = frozenset({"made", "start", END, "renew", "notice", "pay"})
# Words that say the same of a contract's dates and terms; everything else is compared as its stem.
_CONCEPTS = _concepts(
    agreement="agreement contract",
    party="party parties",
    made="made make entered enter executed execute signed sign dated concluded",
    start="effective effect commence commences commenced commencement begin begins began beginning start starts started"
    " force",
    end="expire expires expired expiration expiry end ends ended ending until terminate terminates terminated"
    " termination through",
    renew="renew renews renewed renewal renewals extend extends extended extension successive",
    notice="notice notify notifies notified notification",
    pay="pay pays paid paying payment payments payable invoice invoices invoiced",
)


def _agrees(value: Value, other: Value) -> bool:
    """Whether the document's value `other` bears out the claim's `value`: a claim may say less than the
    document ("December 31" where it says "December 31, 2014"), never more."""
    if value.kind != other.kind:
        return False
    if value.amount == other.amount:
        return True
    return value.kind == "date" and _within(value.amount, other.amount)


def _within(vaguer: str, exact: str) -> bool:
    """ "--12-31" (a day of no year) and "2014-12" (a month) hold "2014-12-31"."""
    return (vaguer.startswith("--") and exact.endswith(vaguer[1:])) or (len(vaguer) == 7 and exact.startswith(vaguer))


def _vaguer(value: Value, other: Value) -> bool:
    """The document's date says less than the claim's and does not deny it ("January 2018" beside a claim's
    "January 16, 2018"): it neither bears the claim out nor contradicts it."""
    return value.kind == other.kind == "date" and _within(other.amount, value.amount)


def _comparable(value: Value, other: Value) -> bool:
    if value.kind != other.kind:
        return False
    if value.kind != "number":
        return True
    mine, theirs = value.context.split("|"), other.context.split("|")
    return any(a and a == b for a, b in zip(mine, theirs, strict=True))


@dataclass(frozen=True)
class _Said:
    """A value of the document's that a claim's value may be compared with, and where it stands."""

    passage: str
    value: Value
    normalisations: tuple[str, ...]
    near: frozenset[str]  # the words around it
    beside: tuple[Value, ...]  # the values next to it
    sentence: str  # the sentence that gives it


@dataclass(frozen=True)
class _Read:
    """A document as the values check reads it: how rare each word is, and every statement with a value."""

    rarity: dict[str, float]
    unknown: float  # the weight of a word the document never uses
    valued: list[tuple[str, Statement]]

    @cached_property
    def effective(self) -> date | None:
        """The first date the document says something starts on: when it takes effect."""
        return next(
            (d for _, st in self.valued for v, near in zip(st.values, st.around, strict=True)
             if v.kind == "date" and START in near and (d := iso(v.amount)) is not None),
            None,
        )  # fmt: skip

    def first_of(self, event: str) -> _Said | None:
        """The first date the document gives for an event of the agreement's own ("THIS AGREEMENT is made as
        of [March 14, 2011]", "effective as of [June 1]"): its preamble or definitions, which decide the
        agreement's dates where later statements give others (a signature's "Dated:", another contract's)."""
        for pid, st in self.valued:
            for v, near, beside in zip(st.values, st.around, st.beside, strict=True):
                # the preamble's one date is the agreement's, whichever words of its sentence stand next to it
                making = event == "made" and event in st.stems and len(st.values) == 1
                if v.kind == "date" and (event in near or making) and AGREEMENT in st.stems:
                    return _Said(pid, v, st.normalisations, near, beside, st.sentence)
        return None

    @cached_property
    def ends(self) -> dict[date, tuple[str, str]]:
        """When the term ends, where the document gives its length from a start (term_end.py)."""
        return term_ends(
            [(pid, st.stems, list(zip(st.values, st.around, strict=True))) for pid, st in self.valued], self.effective
        )


_MAY_HOLD_A_VALUE = re.compile(rf"\d|\b(?:{'|'.join(sorted(_NUMBER_WORDS))})\b", re.IGNORECASE)


@lru_cache(maxsize=16)  # a document is read once for every claim about it
def _read(document: Document) -> _Read:
    held: dict[str, int] = {}
    valued = []
    for passage in document.passages:
        for word in {_concept(w) for w in document.content[passage.id]}:
            held[word] = held.get(word, 0) + 1
        if _MAY_HOLD_A_VALUE.search(passage.text):
            valued += [(passage.id, st) for st in statements(passage.text) if st.values]
    n = len(document.passages)
    rarity = {w: math.log(1 + n / k) for w, k in held.items()}
    # a word the document never uses weighs as a typical word of it: a paraphrase is not a different duty
    return _Read(rarity, statistics.median(rarity.values()) if rarity else 1.0, valued)


def read_document_values(document: Document) -> None:
    """Read every value a document states now, not on the first claim about it (a merger agreement's thousand
    statements take 0.8 s on two cores): each passage's are remembered by its text (`statements`) for every claim
    about it in this process, however its document is read again."""
    _read(document)


def forget_document_values() -> None:
    """Forget every value read in this process: bench/verifier_speed.py times each pass as a new process makes it."""
    _read.cache_clear()
    statements.cache_clear()


def _same_duty(
    context: frozenset[str], theirs: list[tuple[str, Statement]], read: _Read
) -> tuple[list[tuple[str, Statement]], list[tuple[str, Statement]]]:
    """The statements that state the duty `context` describes: each holds at least SAME_DUTY of its words
    (weighed by rarity), and is within TIE of the one that holds most; and those that may (within MAY_BE_DUTY)."""
    weights = {s: read.rarity.get(s, read.unknown) for s in context}
    total = sum(weights.values())
    if not total:
        return [], []
    events = context & _EVENTS
    if events:  # a date of the agreement's end is never read from a statement of its start, nor the reverse
        theirs = [(pid, st) for pid, st in theirs if st.stems & events]
    shares = [(sum(w for s, w in weights.items() if s in st.stems) / total, pid, st) for pid, st in theirs]
    best = max((share for share, _, _ in shares), default=0.0)
    maybe = [(pid, st) for share, pid, st in shares if share >= max(MAY_BE_DUTY, best - MAY_BE_DUTY)]
    if best < SAME_DUTY:
        return [], maybe
    return [(pid, st) for share, pid, st in shares if share >= best - TIE], maybe


def _nearest(said: list[_Said], near: frozenset[str], read: _Read) -> list[_Said]:
    """Of the values the statements of the duty give, those with most of the words around the claim's value
    around them too, where that tells them apart: "ending on [May 31]" for a claim of when it ends."""
    if len(said) < 2 or not near:
        return said
    weights = {w: read.rarity.get(w, read.unknown) for w in near}
    scores = [sum(w for word, w in weights.items() if word in s.near) for s in said]
    best = max(scores)
    return [s for s, score in zip(said, scores, strict=True) if score == best] if best > 0 else said


def _same_row(said: list[_Said], others: tuple[Value, ...]) -> list[_Said]:
    """Of the values, those beside the claim's other values, where some are: the row of a table the claim
    reads ("7,501 - 10,000 subscribers: 7.00%" is the rate of that tier, not of the tiers around it)."""
    rows = [sum(1 for o in others if any(_agrees(o, b) for b in s.beside)) for s in said]
    best = max(rows, default=0)
    return [s for s, row in zip(said, rows, strict=True) if row == best] if best else said


def check_values(
    claim: str, passages: list[str], document: Document, out: Outcome, decided: frozenset[str] = frozenset()
) -> set[str]:
    """Each value in the claim against the statement of the same duty, wherever the document makes it; where
    none is, against the passages the claim is about. Returns the values it decided (agreed, flagged or found
    competing), by their surface; those in `decided` are left alone."""
    done: set[str] = set()
    read = _read(document)
    nearby = [(pid, st) for pid in passages for st in statements(document.by_id[pid].text)]
    notes = tuple(read_values(claim).normalisations)
    claimed = [v for st in statements(claim) for v in st.values]
    claimed_in_order = [v for st in statements(claim) for v in st.in_order]
    for mine in statements(claim):
        for value in mine.values:
            if value.surface in decided or value.surface in done:
                continue
            theirs = [(pid, st) for pid, st in read.valued if any(_comparable(value, v) for v in st.values)]
            duty, maybe = _same_duty(mine.stems, theirs, read)
            said = [
                _Said(pid, v, st.normalisations, near, beside, st.sentence)
                for pid, st in duty
                for v, near, beside in zip(st.values, st.around, st.beside, strict=True)
                if _comparable(value, v)
            ]
            others = tuple(v for v in claimed if v != value)  # the claim's other values: its row of a table
            said = _nearest(_same_row(said, others), mine.near(value), read)
            said = [s for s in said if not _vaguer(value, s.value)]
            by_duty = bool(said)
            if not said:  # no statement of that duty: the passages' own value decides, if they state one
                said = [
                    _Said(pid, v, st.normalisations, near, beside, st.sentence)
                    for pid, st in nearby
                    for v, near, beside in zip(st.values, st.around, st.beside, strict=True)
                    if _comparable(value, v)
                ]
                said = [s for s in _same_row(said, others) if not _vaguer(value, s.value)]
                if len({s.value.amount for s in said}) > 1 and not any(_agrees(value, s.value) for s in said):
                    said = []  # several values, none the claim's, none known to be of its duty: unchecked
            agreeing = [s for s in said if _agrees(value, s.value)]
            if value.kind == "date" and END in mine.stems and not (agreeing and len(agreeing) == len(said)):
                end = read.ends.get(iso(value.amount) or date.min)
                if end is not None:  # the end the term's length gives, though no statement writes it
                    length, pid = end
                    out.checked.append(f"{value.surface} is when the term of {length} ends ({pid})")
                    out.read.append((value.surface, pid, document.by_id[pid].text))
                    done.add(value.surface)
                    continue
                sources = set(read.ends.values())
                if not said and len(sources) == 1:  # one term, one length, one start: its end is not the claim's
                    (length, pid), last = sources.pop(), max(read.ends)
                    said = [
                        _Said(
                            pid,
                            Value(
                                "date",
                                last.isoformat(),
                                f"{last:%B} {last.day}, {last.year} (the end of the term of {length})",
                                "",
                            ),
                            (),
                            frozenset(),
                            (),
                            document.by_id[pid].text,
                        )
                    ]
            elsewhere = _same_event(value, mine, read)
            if not by_duty and elsewhere and value.kind == "date":
                said = agreeing = elsewhere  # no statement of its duty; a statement of its event gives that date
                by_duty = True
            preamble = None if said else _first_of_event(value, mine, read, agreeing=False)
            if preamble is not None and not _vaguer(value, preamble.value):
                said, by_duty = [preamble], True  # no statement of its duty: the preamble's date of its event decides
                agreeing = [preamble] if _agrees(value, preamble.value) else []
            if not said:
                continue  # nothing to compare it with: unchecked, never called verified
            preamble = _first_of_event(value, mine, read)
            if preamble is not None and not all(_agrees(value, s.value) for s in said):
                said = agreeing = [preamble]  # the preamble's date of the claim's event decides over the others
            if agreeing and len(agreeing) == len(said):
                out.checked.append(f"{value.surface} agrees with the document ({agreeing[0].passage})")
                if by_duty:
                    out.read.append((value.surface, agreeing[0].passage, agreeing[0].sentence))
            elif agreeing:
                rivals = ", ".join(dict.fromkeys(s.value.surface for s in said))
                out.doubts.append(Reason("competing_values", value.surface, rivals, said[0].passage, notes))
            elif (
                elsewhere
                or _written(value, read)
                or (by_duty and any(_agrees(value, v) for st in maybe if st not in duty for v in st[1].values))
            ):
                # the document also gives the claim's value for the same event ("Dated: December 14, 2015" under
                # the signatures, "dated as of November 1, 2015" above them), writes its date elsewhere, or gives
                # it in a statement nearly as close to its duty: the values compete, neither is a contradiction
                rivals = ", ".join(dict.fromkeys(s.value.surface for s in said))
                out.doubts.append(Reason("competing_values", value.surface, rivals, said[0].passage, notes))
            else:
                _flag(value, said, notes, out)
            done.add(value.surface)
    _check_row(claimed_in_order, passages, document, notes, out, done | decided)
    return done


def _written(value: Value, read: _Read) -> bool:
    """Whether the document writes the claim's very date, for whatever event. Which event a date is, the
    rules read from the words around it, and they misread it more often than an answer invents the date: on
    CUAD's dates of cuad-067..295, 11 of 35 false alarms wrote a date the contract gives, 7 of 344 caught
    errors did. Such a date competes with the duty's; it is not contradicted."""
    return value.kind == "date" and any(
        v.kind == "date" and v.amount == value.amount for _, st in read.valued for v in st.values
    )


def _first_of_event(value: Value, mine: Statement, read: _Read, agreeing: bool = True) -> _Said | None:
    """The document's first date for the making or start of the agreement, where the claim speaks of that
    event of the agreement: the one that gives the claim's date (`agreeing`), else the first."""
    if value.kind != "date" or AGREEMENT not in mine.stems:
        return None
    firsts = [f for event in sorted(mine.near(value) & {"made", START}) if (f := read.first_of(event)) is not None]
    return next((f for f in firsts if not agreeing or _agrees(value, f.value)), None)


def _same_event(value: Value, mine: Statement, read: _Read) -> list[_Said]:
    """Where the document gives the claim's date or period for the same event of the contract's life (made,
    start, end, renewal, notice, payment): the words right around it name that event."""
    events = mine.stems & _EVENTS
    if not events or value.kind not in ("date", "period"):
        return []
    return [
        _Said(pid, v, st.normalisations, near, beside, st.sentence)
        for pid, st in read.valued
        for v, near, beside in zip(st.values, st.around, st.beside, strict=True)
        if near & events and _agrees(value, v)
    ]


MIN_ROW = 3  # values a claim gives in a row of a table ("7,501 - 10,000 subscribers: 7.00%")


def _check_row(
    claimed: list[Value], passages: list[str], document: Document, notes: tuple[str, ...], out: Outcome, done: set[str]
) -> None:
    """A row of a table read as a row: the claim's values in their order against every run of as many values
    of the same kinds in a passage's statements. Where the closest run differs in one value only, that value
    is contradicted ("5,001 - 7,501 subscribers: 6.75%" where the schedule says 5001 - 7500 6.75%)."""
    if len(claimed) < MIN_ROW:
        return
    kinds = [v.kind for v in claimed]
    best: tuple[int, str, tuple[Value, ...]] | None = None
    for pid in passages:
        for st in statements(document.by_id[pid].text):
            run = st.in_order
            for at in range(len(run) - len(claimed) + 1):
                window = run[at : at + len(claimed)]
                if [v.kind for v in window] != kinds:
                    continue
                same = sum(_agrees(mine, theirs) for mine, theirs in zip(claimed, window, strict=True))
                if best is None or same > best[0]:
                    best = (same, pid, window)
    if best is None or best[0] != len(claimed) - 1:
        return
    _, pid, window = best
    for mine, theirs in zip(claimed, window, strict=True):
        if not _agrees(mine, theirs) and mine.surface not in done:
            out.flags.append(Reason("value_mismatch", mine.surface, theirs.surface, pid, notes))


def _flag(value: Value, said: list[_Said], notes: tuple[str, ...], out: Outcome) -> None:
    normalised = tuple(dict.fromkeys(notes + tuple(n for s in said for n in s.normalisations)))
    shown = ", ".join(dict.fromkeys(s.value.surface for s in said))
    out.flags.append(Reason("value_mismatch", value.surface, shown, said[0].passage, normalised))

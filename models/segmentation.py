"""Deterministic segmentation of an answer into data points ("segment once, tag many").

Every assertion of an answer becomes a data point: each sentence of a paragraph, each list item
(bullets of any kind, numbered, lettered or roman items, Markdown), each short line that states a
verdict ("Yes."), a fact ("Term: During the License Term"), a date or an amount. Lines that only
introduce what follows carry no assertion of their own: a lead-in ("Specifically, it includes (but is
not limited to):"), a section title ("1. Term and Expiration") or a Markdown heading becomes the
*context* of the points under it, so that "Know-how" is read, and judged, as "[the definition]
includes ...: Know-how". Quoted contract text stays inside the sentence that quotes it. All spans are
exact offsets into the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CONTEXT_MAX_WORDS = 60  # a longer "lead-in" is a statement of its own, not a context

# The segmentation is stored with each answer under this version (storage/answers.py) and an answer
# stored under another is segmented again when next read: raise it with every change to what
# segment_answer returns. 2: a sentence ending on a section number, and a lead-in that grants, obliges
# or forbids is a point of its own (issue 63); 1: before.
SEGMENTER_VERSION = 2


@dataclass(frozen=True)
class Segment:
    """A data point of an answer: its span and, when a lead-in introduces it, the lead-in's span."""

    start: int
    end: int
    text: str
    context_start: int | None = None
    context_end: int | None = None
    context: str = ""  # the lead-in's text (answer[context_start:context_end]); "" when none


# A line's marker: a Markdown heading, a bullet (ASCII, typographic or Unicode), a block quote,
# or an enumerator (1. 1.1. 2) (3) a. b) (c) iv. (ii) A.).
_MARKER = re.compile(
    r"(?P<heading>#{1,6})[^\S\n]+"
    r"|(?P<bullet>[-*+>•‣◦▪▫●○·∙⁃–—‑‐■□►▸▹➢➤✓✔❖])[^\S\n]+"
    r"|(?P<enum>\d{1,3}(?:\.\d{1,3})*[.)]|\(\d{1,3}\)|[A-Za-z][.)]|\([A-Za-z]\)"
    r"|(?i:[ivxlcdm]{1,7})[.)]|\((?i:[ivxlcdm]{1,7})\))[^\S\n]+"
)
_BOLD_LINE = re.compile(r"(\*\*|__)(?P<inner>[^*_\n].*?)\1:?$")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?P<close>[\"”’)*_]*)[^\S\n]+(?=[\"“‘(*_]*[A-Z0-9])")
_WORDS = (
    r"Inc|Ltd|Corp|Co|Nos|Sec|Secs|Art|Para|para|cl|pp?|vs|v|Mr|Mrs|Ms|Dr|St|etc|approx|Jan|Feb|Mar|Apr"
    r"|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_WORD_ABBREVIATION = re.compile(rf"\b(?:{_WORDS})\.$")
_ABBREVIATIONS = re.compile(rf"(?:\b(?:{_WORDS})|\b(?:[A-Za-z]\.){{1,3}}[A-Za-z]?)\.$")
# A number ends a sentence ("as protective as Section 10. If ...") unless a number follows ("Section 2. 3").
_NUMBER_BEFORE_NUMBER = re.compile(r"\d\.$")
_NUMBER_SIGN = re.compile(r"\bNo\.$")  # "No. 5" abbreviates; "No." ending a verdict does not
_PAIRS = {"“": "”", '"': '"', "(": ")"}
_CLOSERS = "\"”’')]*_ "
_WRAPPED_LINE = 50  # characters: a line this long that stops mid-sentence was wrapped, it is no title
_MIN_WORDS = 4  # a shorter piece after a sentence ("(¶ 2).") belongs to that sentence
_CITATION_WORDS = 8  # a line that is only a short parenthesis, "(Context, ¶1)", cites the point above


@dataclass
class _Unit:
    """One line of the answer (or a paragraph of wrapped lines), and where it sits in the outline."""

    start: int  # the marker, or the text when there is none
    body: int  # the text after the marker
    end: int
    indent: int
    kind: str  # plain | item | heading
    level: int = 0  # a heading's level: 1-6 for "#", 7 for a bold line
    gap_before: bool = False  # a blank line separates it from the unit before
    parent: _Unit | None = None
    children: list[_Unit] = field(default_factory=list)
    enumerated: bool = False  # "1." or "(a)": letters and digits that belong to the point


def segment_answer(answer: str) -> list[Segment]:
    """The data points of an answer, in answer order, each a span of the answer's own text."""
    units = _outline(answer)
    chains: dict[int, list[tuple[int, int]]] = {}  # id(unit) -> its lead-in, after the lead-ins it continues
    segments: list[Segment] = []
    leads: list[tuple[int, int]] = []
    for unit in units:
        pieces = _sentences(answer, unit.body, unit.end)
        if unit.enumerated and pieces:
            pieces[0] = (unit.start, pieces[0][1])
        chain = _chain_of(unit, chains)
        context = (chain[0][0], chain[-1][1]) if chain else None
        if unit.children and pieces and _introduces(answer, unit, pieces[-1]):
            lead = _unwrap(answer, *pieces.pop())
            chains[id(unit)] = _nested(answer, chain, lead)
            leads.append(lead)
            if _asserts(answer[lead[0] : lead[1]]):  # "... permits the Receiving Party to obtain ... if it is:"
                pieces.append(lead)  # a point of its own too, so that a reviewer can tag what it says
        for s, e in pieces:
            s, e = _unwrap(answer, s, e)
            last = segments[-1] if segments else None
            if last is not None and (_is_fragment(answer, s, e, unit, last) or _is_citation(answer, s, e, unit, last)):
                segments[-1] = _segment(answer, last.start, e, (last.context_start, last.context_end))
            else:
                segments.append(_segment(answer, s, e, context))
    return _orphans_as_points(answer, segments, leads)


def _orphans_as_points(answer: str, segments: list[Segment], leads: list[tuple[int, int]]) -> list[Segment]:
    """A lead-in that no point carries (too long to read with the ones below it) is a point itself."""
    covered = bytearray(len(answer))
    for s in segments:
        for a, b in ((s.start, s.end), (s.context_start, s.context_end)):
            if a is not None and b is not None:
                covered[a:b] = b"\x01" * (b - a)
    extra = [
        _segment(answer, a, b, None)
        for a, b in leads
        if any(ch.isalnum() and not covered[a + i] for i, ch in enumerate(answer[a:b]))
    ]
    return sorted(segments + extra, key=lambda s: s.start) if extra else segments


@dataclass(frozen=True)
class Line:
    """How one line of an answer is laid out: where its text starts after the marker, and its role."""

    start: int  # the marker ("•", "1.", "###"), or the text when there is none
    body: int  # the text after the marker
    end: int
    indent: int  # columns of leading whitespace
    heading: int  # 1-6 for a Markdown heading, 7 for a line in bold alone, 0 otherwise
    gap_before: bool  # a blank line comes before it


def answer_lines(answer: str) -> list[Line]:
    """The non-empty lines of an answer, as the segmentation reads them (for showing the answer)."""
    lines, gap = [], False
    for line in re.finditer(r"^[^\n]*", answer, re.MULTILINE):
        start, end = strip_span(answer, line.start(), line.end())
        if start >= end:
            gap = True
            continue
        unit = _unit(answer, line.start(), start, end, gap)
        lines.append(Line(unit.start, unit.body, unit.end, unit.indent, unit.level, gap))
        gap = False
    return lines


def coverage(answer: str, segments: list[Segment]) -> float:
    """Share of the answer's letters and digits inside a data point or its context (1.0 if none)."""
    covered = bytearray(len(answer))
    for s in segments:
        covered[s.start : s.end] = b"\x01" * (s.end - s.start)
        if s.context_start is not None and s.context_end is not None:
            covered[s.context_start : s.context_end] = b"\x01" * (s.context_end - s.context_start)
    total = sum(1 for ch in answer if ch.isalnum())
    return sum(1 for i, ch in enumerate(answer) if ch.isalnum() and covered[i]) / total if total else 1.0


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the whitespace at its ends."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# ---------------------------------------------------------------- the outline


def _outline(answer: str) -> list[_Unit]:
    """The answer's non-empty lines as units, each linked to the unit it sits under."""
    units: list[_Unit] = []
    gap = False
    for line in re.finditer(r"^[^\n]*", answer, re.MULTILINE):
        start, end = strip_span(answer, line.start(), line.end())
        if not any(ch.isalnum() for ch in answer[start:end]):  # blank, a rule (---), a table border
            gap = gap or start >= end
            continue
        unit = _unit(answer, line.start(), start, end, gap)
        gap = False
        previous = units[-1] if units else None
        if previous is not None and _continues(answer, previous, unit):
            previous.end = unit.end
            continue
        parent = previous  # None when previous is: the first unit has no parent
        while previous is not None and parent is not None and not _under(answer, unit, parent, previous):
            parent = parent.parent
        unit.parent = parent
        if parent is not None:
            parent.children.append(unit)
        units.append(unit)
    return units


def _unit(answer: str, line_start: int, start: int, end: int, gap: bool) -> _Unit:
    indent = sum(4 if ch == "\t" else 1 for ch in answer[line_start:start])
    marker = _MARKER.match(answer, start, end)
    if marker is None:
        bold = _BOLD_LINE.fullmatch(answer, start, end)
        if bold is not None and not _ends_sentence(bold.group("inner")):
            return _Unit(start, start, end, indent, "heading", level=7, gap_before=gap)
        return _Unit(start, start, end, indent, "plain", gap_before=gap)
    body = marker.end()
    if marker.group("heading"):
        return _Unit(start, body, end, indent, "heading", level=len(marker.group("heading")), gap_before=gap)
    return _Unit(start, body, end, indent, "item", gap_before=gap, enumerated=bool(marker.group("enum")))


def _continues(answer: str, previous: _Unit, unit: _Unit) -> bool:
    """A wrapped line: plain, right under the text of a line that stops mid-sentence, and either in
    lower case or after a long line with no Markdown hard break (two trailing spaces), as a title has."""
    if unit.kind != "plain" or unit.gap_before or previous.kind == "heading":
        return False
    aligned = unit.indent == previous.indent + previous.body - previous.start  # under the text, not the bullet
    tail = answer[previous.start : previous.end].rstrip(_CLOSERS)
    if not aligned or tail.endswith((".", ":", "!", "?", ";")):
        return False
    hard_break = answer[previous.end : unit.start].startswith("  ")
    last_line = previous.end - answer.rfind("\n", 0, previous.end) - 1
    return answer[unit.start].islower() or (not hard_break and last_line >= _WRAPPED_LINE)


def _under(answer: str, unit: _Unit, parent: _Unit, previous: _Unit) -> bool:
    """Whether a unit belongs to the outline of a unit above it."""
    if parent.kind == "heading":
        return unit.kind != "heading" or unit.level > parent.level
    if unit.kind == "heading":
        return False
    if unit.indent != parent.indent:
        return unit.indent > parent.indent
    # Same indentation: a list may hang under a plain lead-in, the next line under a lead-in or title.
    if not _open(answer, parent):
        return False
    if unit.kind == "item":
        return parent.kind == "plain"
    if parent is not previous:  # the next lines of a block that hangs under it
        return previous.parent is parent and not unit.gap_before
    return not unit.gap_before or (parent.kind == "plain" and _title(answer, parent))


def _open(answer: str, unit: _Unit) -> bool:
    """A line that announces more: it ends with a colon or mid-sentence ("that", ","), or is a title."""
    text = answer[unit.body : unit.end]
    if text.startswith("|"):  # a table row
        return False
    return text.rstrip(_CLOSERS).endswith(":") or text[-1].islower() or text[-1] in ",—–" or _title(answer, unit)


def _title(answer: str, unit: _Unit) -> bool:
    """A short line that names what follows; not a sentence, a "Label: value" fact or a table row."""
    text = answer[unit.body : unit.end].strip("*_# ")
    label_value = re.search(r":\S*\s+\S", text) is not None
    return (
        len(text.split()) <= 8
        and not text[:1].islower()
        and not text.rstrip(_CLOSERS).endswith((".", "!", "?", ";", ","))
        and not label_value
        and not text.startswith("|")
    )


def _introduces(answer: str, unit: _Unit, piece: tuple[int, int]) -> bool:
    """Whether the last sentence of a unit with items under it is their lead-in, not a statement."""
    text = answer[piece[0] : piece[1]]
    return unit.kind == "heading" or (not _ends_sentence(text) and len(text.split()) <= CONTEXT_MAX_WORDS)


# A lead-in that grants, obliges or forbids makes the answer's assertion; one that only announces a list
# ("Specifically, it includes (but is not limited to):") does not.
_ASSERTING = re.compile(
    r"\b(?:shall|must|may|cannot|(?:is|are) (?:not )?(?:entitled|required|permitted|allowed|"
    r"prohibited|obliged|obligated|bound)|(?:expressly |also )?(?:permits?|allows?|requires?|prohibits?|forbids?|"
    r"entitles?|obliges?|obligates?|grants?|restricts?|limits?|excludes?))\b",
    re.IGNORECASE,
)
_ASSERTING_WORDS = 8  # fewer words than this only announce what follows


def _asserts(text: str) -> bool:
    return len(text.split()) >= _ASSERTING_WORDS and _ASSERTING.search(text) is not None


def _nested(answer: str, outer: list[tuple[int, int]], inner: tuple[int, int]) -> list[tuple[int, int]]:
    """A lead-in right under another ("Based on the clause:" / "1. Term") reads with it, as one context
    of at most CONTEXT_MAX_WORDS words."""
    chain = [*outer, inner] if outer and not any(ch.isalnum() for ch in answer[outer[-1][1] : inner[0]]) else [inner]
    while len(chain) > 1 and len(answer[chain[0][0] : inner[1]].split()) > CONTEXT_MAX_WORDS:
        chain.pop(0)
    return chain


def _chain_of(unit: _Unit, chains: dict[int, list[tuple[int, int]]]) -> list[tuple[int, int]]:
    parent = unit.parent
    while parent is not None and id(parent) not in chains:
        parent = parent.parent
    return [] if parent is None else chains[id(parent)]


# ---------------------------------------------------------------- sentences


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans of a unit; never inside a quotation, never after an abbreviation."""
    quoted = _quotations(text, start, end)
    pieces, cursor = [], start
    for boundary in _SENTENCE_END.finditer(text, start, end):
        stop = boundary.end("close")
        if any(a < stop < b for a, b in quoted):
            continue
        candidate = text[cursor : boundary.start()]
        number_follows = text[boundary.end()].isdigit()
        if _ABBREVIATIONS.search(candidate) or (
            number_follows and (_NUMBER_SIGN.search(candidate) or _NUMBER_BEFORE_NUMBER.search(candidate))
        ):
            continue
        pieces.append(strip_span(text, cursor, stop))
        cursor = boundary.end()
    pieces.append(strip_span(text, cursor, end))
    return [(s, e) for s, e in pieces if e > s]


def _quotations(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of quoted (“…”, "…") or parenthesised text that close within the unit."""
    spans, i = [], start
    while i < end:
        close = _PAIRS.get(text[i])
        j = _closing(text, i, end, close) if close else -1
        if j > 0:
            spans.append((i, j))
            i = j
        i += 1
    return spans


def _closing(text: str, i: int, end: int, close: str) -> int:
    if close != ")":
        return text.find(close, i + 1, end)
    depth = 0
    for j in range(i, end):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
    return -1


def _ends_sentence(text: str) -> bool:
    text = text.rstrip(_CLOSERS)
    return text.endswith((".", "!", "?")) and not _WORD_ABBREVIATION.search(text)


def _unwrap(answer: str, start: int, end: int) -> tuple[int, int]:
    """A span without the emphasis markers that wrap it whole ("**Conclusion**")."""
    for mark in ("**", "__"):
        if answer.startswith(mark, start) and answer[start:end].rstrip(":").endswith(mark) and end - start > 4:
            inner_end = start + answer[start:end].rstrip(":").rfind(mark)
            return strip_span(answer, start + len(mark), inner_end)
    return start, end


def _is_fragment(answer: str, start: int, end: int, unit: _Unit, last: Segment) -> bool:
    """A short piece after a sentence of the same line ("(¶ 2).") is part of that sentence."""
    return start > unit.body and last.end >= unit.body and len(answer[start:end].split()) < _MIN_WORDS


def _is_citation(answer: str, start: int, end: int, unit: _Unit, last: Segment) -> bool:
    """A line that only cites, "(Context, ¶1)", right under a point, belongs to that point."""
    text = answer[start:end].rstrip(".")
    return (
        start == unit.body
        and not unit.gap_before
        and text.startswith("(")
        and text.endswith(")")
        and len(text.split()) <= _CITATION_WORDS
        and answer.count("\n", last.end, unit.start) == 1
    )


def _segment(answer: str, start: int, end: int, context: tuple[int | None, int | None] | None) -> Segment:
    cs, ce = context if context is not None else (None, None)
    return Segment(start, end, answer[start:end], cs, ce, answer[cs:ce] if cs is not None and ce is not None else "")

"""Typed values in a text: money, percentages, durations, dates and other numbers, each with the word
around it (HERMAN: "30 days' notice" is not the "30 days" of a payment term).

Number words become digits with text2num ("thirty (30) days" -> "30 days"), amounts are read by
price-parser and dates by dateutil; only the spotting of candidates is done with patterns here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

from dateutil import parser as dateparser
from price_parser import Price
from text_to_num import alpha2digit

from models.verifier.text import typographic


@dataclass(frozen=True)
class Value:
    kind: str  # money | percent | duration:days | duration:months | duration:business-days | date | number
    amount: str  # normalised: Decimal as text, or an ISO date
    surface: str  # as written (after number words became digits)
    context: str  # "word before|word after", for plain numbers

    def same(self, other: Value) -> bool:
        return self.kind == other.kind and self.amount == other.amount


@dataclass(frozen=True)
class Reading:
    values: list[Value]
    normalisations: list[str]


_HYPHENATED_UNIT = re.compile(r"(?<=[a-z0-9)])-(?=(?:year|month|week|day|business|calendar)s?\b)", re.I)
_REPEATED = re.compile(r"\b(\d[\d,.]*)\s*(%|percent)?\s*\(\s*\$?\s*(\d[\d,.]*)\s*(%|percent)?\s*\)", re.I)
_SCALE = r"(?:\s*(?:million|billion|thousand|m|bn)\b)?"
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCY = r"(?:US\s?\$|U\.S\.\s?\$|\$|USD|US dollars|EUR|€|£|GBP|CHF|C\$|CAD)"
_MONEY = re.compile(
    rf"{_CURRENCY}\s?(?:{_AMOUNT}){_SCALE}|(?:{_AMOUNT}){_SCALE}\s*(?:dollars|USD|euros|EUR|pounds)\b", re.I
)
_PERCENT = re.compile(rf"(?:{_AMOUNT})\s*(?:%|percent\b|per cent\b)", re.I)
_DURATION = re.compile(
    rf"(?P<n>{_AMOUNT})\s*(?P<q>business|calendar|working|banking)?\s*(?P<u>day|week|month|year|hour)s?\b", re.I
)
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_MONTHS_SHORT = r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_DATE = re.compile(
    rf"\b(?:(?:{_MONTHS}|{_MONTHS_SHORT})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?(?:{_MONTHS}),?\s+\d{{4}}"
    rf"|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}"
    rf"|(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?!,?\s*\d)"
    rf"|(?:{_MONTHS}),?\s+\d{{4}})",
    re.I,
)
_SPLIT_ORDINAL = re.compile(r"\b(\d{1,2})(s t|n d|r d|t h)\b")  # a scan's "the 15t h day of January"
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w%])")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\W*$")
_WORD_AFTER = re.compile(r"\W{0,3}([A-Za-z]+)")
_DIGIT_SCALE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(million|billion|thousand)\b", re.I)
_SCALES = {"million": 1_000_000, "m": 1_000_000, "billion": 1_000_000_000, "bn": 1_000_000_000, "thousand": 1000}


def digits(text: str) -> tuple[str, list[str]]:
    """Number words as digits, and "30 (30)" said once; what was changed is listed."""
    notes = []
    plain = _HYPHENATED_UNIT.sub(" ", typographic(text))
    joined = _SPLIT_ORDINAL.sub(lambda m: m.group(1) + m.group(2).replace(" ", ""), plain)
    if joined != plain:
        notes.append("an ordinal split by the scan read whole ('15t h' as '15th')")
        plain = joined
    scaled = _DIGIT_SCALE.sub(_multiply, plain)
    if scaled != plain:
        notes.append("'million'/'billion' multiplied out")
        plain = scaled
    converted = alpha2digit(plain, "en", threshold=0)
    if converted != plain:
        notes.append("number words read as digits (text2num)")
    collapsed = _REPEATED.sub(lambda m: _collapse(m, notes), converted)
    return collapsed, notes


def _multiply(match: re.Match[str]) -> str:
    number = Decimal(match.group(1).replace(",", "")) * _SCALES[match.group(2).lower()]
    return f"{number.normalize():,f}".removesuffix(".0")


def _collapse(match: re.Match[str], notes: list[str]) -> str:
    first, second = match.group(1).replace(",", ""), match.group(3).replace(",", "")
    if first != second:
        return match.group(0)  # "30 (60)" is a contradiction in the text itself: keep both
    note = f"'{match.group(0)}' read as one number"
    if note not in notes:
        notes.append(note)
    return match.group(1) + (match.group(2) or match.group(4) or "")


def read_values(text: str) -> Reading:
    """Every typed value of a text, money before percentages before durations before plain numbers,
    each stretch of text read once."""
    plain, notes = digits(text)
    taken: list[tuple[int, int]] = []
    values: list[Value] = []

    def free(m: re.Match[str]) -> bool:
        return all(m.end() <= s or m.start() >= e for s, e in taken)

    for m in _MONEY.finditer(plain):
        amount = _money(m.group(0))
        if amount is not None and free(m):
            taken.append(m.span())
            values.append(Value("money", amount, m.group(0), ""))
    for m in _PERCENT.finditer(plain):
        if free(m):
            taken.append(m.span())
            number = re.match(_AMOUNT, m.group(0))
            assert number is not None
            values.append(Value("percent", _decimal(number.group(0)), m.group(0), ""))
    for m in _DATE.finditer(plain):
        iso = _date(m.group(0))
        if iso is not None and free(m):
            taken.append(m.span())
            values.append(Value("date", iso, m.group(0), ""))
    for m in _DURATION.finditer(plain):
        if free(m):
            taken.append(m.span())
            values.append(_duration(m))
    for m in _NUMBER.finditer(plain):
        if free(m):
            before = _WORD_BEFORE.search(plain[max(0, m.start() - 30) : m.start()])
            after = _WORD_AFTER.match(plain, m.end())
            context = (before.group(1).lower() if before else "") + "|" + (after.group(1).lower() if after else "")
            values.append(Value("number", _decimal(m.group(0)), m.group(0), context))
    return Reading(values, notes)


def _decimal(text: str) -> str:
    try:
        return _plain(Decimal(text.replace(",", "")))
    except InvalidOperation:
        return text


def _plain(number: Decimal) -> str:
    return format(number.normalize(), "f")


def _money(surface: str) -> str | None:
    price = Price.fromstring(surface)
    if price.amount is None:
        return None
    scale = re.search(r"(million|billion|thousand|bn|m)\b", surface, re.I)
    amount = price.amount * _SCALES[scale.group(1).lower()] if scale else price.amount
    return _plain(amount)


def _duration(m: re.Match[str]) -> Value:
    unit = m.group("u").lower()
    amount = Decimal(m.group("n").replace(",", ""))
    if m.group("q") and m.group("q").lower() in ("business", "working", "banking"):
        kind = "duration:business-days"
    elif unit in ("month", "year"):
        kind, amount = "duration:months", amount * (12 if unit == "year" else 1)
    elif unit == "hour":
        kind = "duration:hours"
    else:
        kind, amount = "duration:days", amount * (7 if unit == "week" else 1)
    return Value(kind, _plain(amount), m.group(0), "")


def _date(surface: str) -> str | None:
    """ISO date; a date without a year keeps only month and day ("--12-31")."""
    cleaned = re.sub(r"\bday\s+of\b", "", surface, flags=re.I)
    has_year = re.search(r"\d{4}|/\d{2}$", cleaned) is not None
    try:
        parsed: datetime = dateparser.parse(cleaned, fuzzy=True, dayfirst=False)
    except (ValueError, OverflowError):
        return None
    if not has_year:
        return f"--{parsed.month:02d}-{parsed.day:02d}"
    if not re.search(r"\d{1,2}(?:st|nd|rd|th)?\b(?!\d)", re.sub(r"\d{4}", "", cleaned)):
        return f"{parsed.year:04d}-{parsed.month:02d}"  # "December 2014"
    return parsed.date().isoformat()

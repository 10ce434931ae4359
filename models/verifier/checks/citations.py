"""Citations: a cited section must exist, share something with the claim, carry the title the claim
gives it, and hold the quotations the claim attributes to it.

One rule for what a cited section is, in every check here and in the stress test's choice of supported
points: the section's own passages with every clause under it ("Section 10" is 10 and 10.1, 10.2…, as
`CitedRef.passages` resolves it), its heading the caption of its first passage ("10. Confidentiality"),
its clauses' captions beside it ("10.1 Use and Nondisclosure.")."""

from __future__ import annotations

import re

from models.verifier.checks import Outcome, Reason
from models.verifier.document import CitedRef, Document
from models.verifier.text import content_words, fragments, quotations, stem, typographic, words


def check_citations(
    claim: str, cited: list[CitedRef], best: tuple[str, float] | None, document: Document, out: Outcome
) -> None:
    """A citation must name a passage of the document, and one that shares something with the claim."""
    mine = content_words(without_citations(claim, cited))
    quoted = [(q.start, q.end) for q in quotations(claim, min_words=1)]

    for c in cited:
        if any(s <= c.start and c.end <= e for s, e in quoted):
            continue  # inside a quotation: the document's own words, checked as such
        if c.passages and _misnamed(claim, c, document, out):
            continue
        if c.passages and _quoted_elsewhere(claim, c, document, out):
            continue
        own_words = words(c.written)
        if not c.passages and len(own_words) > 1 and document.find_words(own_words):
            continue  # "paragraph 18 of this Agreement": the document's own cross-reference, repeated
        if not c.passages:
            out.flags.append(Reason("bad_citation", c.written, "the document has no such section or paragraph", None))
            continue
        known = [pid for pid in c.passages if document.content.get(pid)]  # not a "______" rule
        if len(mine) < 2 or not known or best is None or best[0] in c.passages:
            continue
        shared = max(len(mine & document.content[pid]) / len(mine) for pid in known)
        target = re.escape(re.sub(r"^\D*", "", typographic(c.written)).split("(")[0])
        mentioned = re.search(
            rf"(?:section|clause|paragraph|article|§)\s*{target}(?![\d]|\.\d)", document.by_id[best[0]].text, re.I
        )
        # ALCE's citation precision without a model: the cited passage must not be beaten by far.
        unrelated = shared == 0 if len(mine) < 4 else (shared < 0.25 and best[1] >= 0.4)
        unrelated = unrelated or (len(mine) >= 4 and shared < 0.5 * best[1] and best[1] >= 0.6)
        if unrelated and not mentioned:
            text = document.by_id[c.passages[0]].text[:300]
            out.flags.append(Reason("bad_citation", c.written, text, c.passages[0], ("case",)))
        else:
            out.checked.append(f"{c.written} resolves to a related passage")


# A title the answer gives the cited section: "Section 11 (License Grant)", "Section 3.05 (“Covenants”)",
# "Section 11.14 is titled “Specific Performance”".
_TITLE_AFTER = re.compile(
    r'\s*(?:\(\s*["“]([^"”]{3,60})["”]\s*\)'
    r"|\(([A-Z][\w\-]*(?: (?:[A-Z][\w\-]*|of|and|or|the|to|for|in))*)\)"
    r'|,?\s+(?:is|was)\s+(?:titled|entitled|headed|captioned)\s+["“]([^"”]{3,60})["”])'
)
# A caption after a passage's number: ended by a full stop, a colon, a line break or the passage itself
# ("10. Confidentiality" is a heading of its own, with no full stop).
_HEADING = re.compile(
    r"^\s*(?:(?i:section|article|clause|§)\s*)?(?:[\dIVX]+(?:\.\d+)*\.*|\([a-z0-9]{1,4}\))\s+"
    r"([A-Z][^.;:\n]{2,79}?)\s*(?:[.;:\n]|$)"
)
MAX_CAPTION_WORDS = 8  # a longer "caption" is a clause's first sentence, not its heading


def caption(text: str) -> str | None:
    """A passage's caption: "10. Confidentiality" -> "Confidentiality", "10.1. Use and Nondisclosure. …"
    -> "Use and Nondisclosure"; None for a passage that starts without one."""
    found = _HEADING.match(text)
    if found is None or len(found.group(1).split()) > MAX_CAPTION_WORDS:
        return None
    return found.group(1).strip()


def section_headings(c: CitedRef, document: Document) -> list[str]:
    """The cited section's own heading first (its first passage's caption), then its clauses' captions."""
    found = [caption(document.by_id[pid].text) for pid in c.passages if pid in document.by_id]
    return [h for h in found if h]


def _same_word(a: str, b: str) -> bool:
    """ "confidentiality" names what "confidential" does; "terminates" what "termination" does."""
    a, b = stem(a), stem(b)
    return a == b or (min(len(a), len(b)) >= 6 and (a.startswith(b) or b.startswith(a)))


def _misnamed(claim: str, c: CitedRef, document: Document, out: Outcome) -> bool:
    """A title written with the citation that shares no word with the cited section's heading or any of its
    clauses' captions."""
    title = _TITLE_AFTER.match(claim, c.end)
    if title is None:
        return False
    written = next(g for g in title.groups() if g)
    headings = section_headings(c, document)
    theirs = {w for h in headings for w in content_words(h)}
    mine = content_words(written)
    if not headings or not mine or any(_same_word(a, b) for a in mine for b in theirs):
        return False
    shown = "; ".join(dict.fromkeys(headings))[:200]
    out.flags.append(
        Reason("bad_citation", f"{c.written} ({written})", f"the cited section is headed: {shown}", c.passages[0])
    )
    return True


def _quoted_elsewhere(claim: str, c: CitedRef, document: Document, out: Outcome) -> bool:
    """A quotation the claim attributes to the cited section that the document has, but somewhere else."""
    texts = [document.by_id[pid].text for pid in c.passages if pid in document.by_id]
    inside = " " + " ".join(w for text in texts for w in words(text)) + " "
    title = _TITLE_AFTER.match(claim, c.end)
    for quotation in quotations(claim, min_words=5):
        if title and quotation.start < title.end() and title.start() < quotation.end:
            continue  # the section's title, not a quotation from it
        pieces = [p for p in fragments(quotation.text) if len(words(p)) >= 5]
        for piece in pieces:
            wanted = " " + " ".join(words(piece)) + " "
            where = document.find_words(words(piece))
            if where is None or wanted in inside:
                continue
            out.flags.append(
                Reason(
                    "bad_citation",
                    c.written,
                    f"the quotation is in {where}, not in the cited section",
                    where,
                    ("case", "whitespace and line breaks"),
                )
            )
            return True
    return False


def without_citations(claim: str, cited: list[CitedRef]) -> str:
    """The claim with the citations it writes blanked out (a section number is not a value)."""
    for c in sorted(cited, key=lambda c: -c.start):
        claim = claim[: c.start] + " " * (c.end - c.start) + claim[c.end :]
    return claim

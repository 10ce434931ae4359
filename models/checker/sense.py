"""Which way round a claim says a thing: "the recipient may reverse engineer" or "shall not"; "there is a
non-compete" or "the supplier is free to compete". Neither encoder tells them apart (the bi-encoder puts a
denial beside what it denies, and the cross-encoder finds both "supported" by the same clause), so the
statement reader (statements.py) and the kind reader (kinds.py) each weigh, in a small regression, the words
that turn a claim round (CUES) and how the claim stands to the wordings and the denials of the same thing that
other hands wrote (`pool_features`)."""

from __future__ import annotations

import re

import numpy as np

# Negation and modality. A claim read as an NDA statement is confirmed from it where it holds each of these exactly
# where the statement does (statements.said_alike): 3 in 200 of other hands' denials do, and 2 in 5 of their wordings.
ALIKE = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\b(?:not|no|never|none|nothing|nobody|no[\s-]one|neither|nor)\b|n't\b",
        r"\bwithout\b",
        r"\bun(?!der)[a-z]+(?:ed|able)\b|\bnon-",
        r"\b(?:prohibit\w*|forbid\w*|bar(?:s|red)?|restrict\w*|ban(?:s|ned)?|preclud\w*|prevent\w*)\b",
        r"\b(?:need not|not required|no obligation|not obliged|does not have to|do not have to|no duty|optional)\b",
        r"\b(?:may|can|free|allowed|permitted|permits?|entitled|at liberty|right to)\b",
        r"\b(?:shall|must|required|obliged|obligated|has to|have to|needs? to|duty)\b",
    )
]
# "may not", "shall not", "cannot" all forbid: one cue, whichever modal word says it
FORBIDS = re.compile(
    r"\b(?:may|shall|must|will|can|is|are)\s+not(?:\s+be\s+(?:permitted|allowed))?\b|\bcannot\b|\bcan't\b"
    r"|\bnot\s+(?:permitted|allowed)\b",
    re.IGNORECASE,
)

# The words that turn a claim round or narrow it, each one feature of cue_vector
CUES = [c.pattern for c in ALIKE] + [
    r"\b(?:only|solely|exclusively|except|outside|other than|beyond)\b",
    r"\b(?:any|all|every|whatever|anything)\b",
    r"\b(?:free|freely|unrestricted|unlimited|at will)\b",
    r"\b(?:limit\w*|confined|restrict\w*)\b",
    r"\b(?:even|still|also|too)\b",
    r"\b(?:no longer|ends?|ceases?|expires?)\b",
]
_CUES = [re.compile(pattern, re.IGNORECASE) for pattern in CUES]


def cue_vector(text: str) -> np.ndarray:
    """Which of CUES the text holds ("may not", "cannot" read as "prohibited")."""
    said = FORBIDS.sub(" prohibited ", text)
    return np.asarray([cue.search(said) is not None for cue in _CUES], dtype=float)


def pool_features(
    cues: np.ndarray,
    vector: np.ndarray,
    wordings: tuple[np.ndarray, np.ndarray],
    denials: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """How a claim (its cue_vector and bi-encoder vector) stands to the known wordings of what it may say and to
    their known denials (each: cue vectors and bi-encoder vectors): the closest of each by the cues they share, and
    by cosine plus the cues they share (the bi-encoder alone hardly tells a denial from what it denies). Held out
    by hand, they let the statement reader's sense model pass more wordings and fewer denials than cues alone."""

    def nearest(known: tuple[np.ndarray, np.ndarray]) -> tuple[float, float, float]:
        known_cues, vectors = known
        if not len(known_cues):
            return 0.0, 0.0, 0.0
        shared = 1.0 - np.abs(known_cues - cues).mean(axis=1)
        score = vectors @ vector + shared
        return float(shared.max()), float(score.max()), float(np.sort(score)[-3:].mean())

    (sw, bw, tw), (sd, bd, td) = nearest(wordings), nearest(denials)
    return np.asarray([sw, sd, bw, bd, tw, td, bw - bd, tw - td])


POOL_FEATURES = 8  # what pool_features returns

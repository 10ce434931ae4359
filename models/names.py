"""Names as people read them: one folding of the spellings that look alike, for clients and reviewers.

A wall names a client, and a signature names a reviewer, as a person typed them; a person reading
"ᴀcme", "ACME™" or "Αcme" (a Greek alpha) reads ACME, and "аlice" (a Cyrillic а), "alice\\u200b" (an
invisible space) or "Alice" reads alice. `fold` brings such spellings to one: compatibility forms
(NFKC), case, accents, Latin small capitals, look-alike Greek and Cyrillic letters, trademark signs
and invisible characters. Walls match clients by it (storage/matters.py `client_key`); reviewers are
one person by it (`reviewer_key`), and `reviewer_name_problem` refuses a new reviewer's name that
a reader could take for another's: invisible characters, letters of two scripts, or a name written
wholly in letters of another script drawn like Latin ones.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

# Letters of other scripts drawn like Latin ones (after casefolding): Greek and Cyrillic look-alikes.
LOOK_ALIKES = str.maketrans(
    {
        **dict(zip("αβεζηικμνορτυχϲϳ", "abezhikmnoptyxcj", strict=True)),
        **dict(zip("авеѐёѕіїјкмнорстухһԁԛԝӏ", "abeeesiijkmhopctyxhdqwl", strict=True)),
        "ı": "i",
        "ȷ": "j",
    }
)
# Signs written after a name that do not change whom it names (NFKC would make ™ the letters "tm").
_MARKS = frozenset("™®©℠℗")
_SMALL_CAPITAL = re.compile(r"LATIN (?:LETTER SMALL CAPITAL|SMALL CAPITAL LETTER) ([A-Z])$")
_SCRIPTS_TOGETHER = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK"}  # written together in one name


@cache
def _small_capitals() -> dict[int, str]:
    """Latin small capitals (ᴀ, ʙ, ꜱ…), which NFKC leaves as they are, to their letters."""
    found = {}
    for block in (range(0x0250, 0x02B0), range(0x1D00, 0x1D80), range(0xA720, 0xA800)):
        for code in block:
            if match := _SMALL_CAPITAL.match(unicodedata.name(chr(code), "")):
                found[code] = match.group(1).lower()
    return found


def invisible(character: str) -> bool:
    """A character that draws nothing a reader sees, or that is no character at all (format and
    control characters, a lone surrogate, private use, unassigned)."""
    return unicodedata.category(character) in ("Cf", "Cc", "Cs", "Co", "Cn")


def fold(name: str) -> str:
    """The name as a reader takes it: the spellings above folded to one (spaces as they are)."""
    kept = "".join(c for c in name if c not in _MARKS and not invisible(c))
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", kept).casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return folded.translate(_small_capitals()).translate(LOOK_ALIKES)


def reviewer_key(name: str) -> str:
    """What a reviewer's name comes to: `fold`, with runs of spaces as one and none at the ends."""
    return " ".join(fold(name).split())


def _script(character: str) -> str | None:
    """The script of a letter by its Unicode name's first word (LATIN, CYRILLIC, GREEK, CJK…)."""
    if not character.isalpha():
        return None
    word = unicodedata.name(character, "UNKNOWN").split(" ", 1)[0]
    return _SCRIPTS_TOGETHER.get(word, word)


def reviewer_name_problem(name: str) -> str | None:
    """Why a name cannot be a new reviewer's (None: it can): empty, an invisible character, letters of
    two scripts, or letters of another script that all look like Latin ones ("аlice", "асе")."""
    if not name.strip():
        return "a reviewer needs a name"
    if hidden := [c for c in name if invisible(c)]:
        return f"the reviewer name {name!r} holds an invisible character (U+{ord(hidden[0]):04X})"
    scripts = {s for c in unicodedata.normalize("NFKC", name) if (s := _script(c)) is not None}
    if len(scripts) > 1:
        return f"the reviewer name {name!r} mixes letters of {' and '.join(sorted(scripts))}, which can look alike"
    letters = [c for c in unicodedata.normalize("NFKC", name).casefold() if c.isalpha()]
    if scripts - {"LATIN"} and letters and all(c.translate(LOOK_ALIKES).isascii() for c in letters):
        return f"the reviewer name {name!r} is written in letters that look like Latin ones ({reviewer_key(name)!r})"
    return None

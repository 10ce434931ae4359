"""Raters as a person names them: `judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard` is shown as
"SmolLM2-135M (two-stage)", `jury:verifier+judge:…` as "Jury: Claim checker + SmolLM2-135M",
`verifier` (the rules and the learned claim checker) as "Claim checker"; people and imported labels
keep their names. The full name stays one hover away
(the window's tooltips); these are for column headers, tables and plot labels."""

from __future__ import annotations

import re

from models.verifier import INCORRECT, NEEDS_REVIEW, QUOTED, SUPPORTED, UNCONFIRMED, UNVERIFIABLE

VERIFIER = "verifier"  # app.judging.verification.VERIFIER, not imported: this module stays light
COMBINATIONS = ("majority", "rule", "both", "roles")  # app.judging.jury's ways of combining a jury
DEFAULT_STRICTNESS = "standard"
# A model file's quantisation and packaging, and the "instruct"/"chat" tuning: not how people say a model's name.
_MODEL_NOISE = re.compile(r"([.-](Q\d\w*|IQ\d\w*|f16|f32|bf16|gguf)|-GGUF|[-_](instruct|chat|it))+$", re.IGNORECASE)


def model_name(model: str) -> str:
    """A model's short name: its file's stem without the quantisation and the instruct suffix."""
    stem = model.rstrip("/").rsplit("/", 1)[-1]
    previous = None
    while previous != stem:  # "X-Instruct.Q4_1": both go, in either order
        previous, stem = stem, _MODEL_NOISE.sub("", stem)
    return stem or model


def _judge_parts(name: str) -> tuple[str, str | None, str | None] | None:
    """(model, mode, strictness) of a judge run's internal name; None if it is not one."""
    parts = name.split(":")
    if parts[0] != "judge" or len(parts) < 2:
        return None
    if len(parts) >= 4:  # judge:<model, maybe with ':'>:<mode>:<strictness>
        return ":".join(parts[1:-2]), parts[-2], parts[-1]
    return ":".join(parts[1:]), None, None


def _juror(name: str) -> str:
    """A juror inside a jury's name: the model alone, or the name."""
    judge = _judge_parts(name)
    return model_name(judge[0]) if judge else rater_name(name)


def rater_name(name: str) -> str:
    """How to show a rater: see the module's docstring. Unknown shapes are shown as they are."""
    if name == VERIFIER:
        return "Claim checker"
    if judge := _judge_parts(name):
        model, mode, strictness = judge
        notes = [note for note in (mode, strictness if strictness != DEFAULT_STRICTNESS else None) if note]
        return model_name(model) + (f" ({', '.join(notes)})" if notes else "")
    if name.startswith("jury:"):
        body = name.removeprefix("jury:")
        how, sep, rest = body.partition(":")
        if sep and how in COMBINATIONS:
            body = rest
        jurors = [_juror(juror) for juror in body.split("+") if juror]
        if how == "roles" and len(jurors) == 2:  # the default jury: each juror in its role
            return f"Jury by role: {jurors[1]}"
        return "Jury: " + " + ".join(jurors) if jurors else name
    return name


def rater_phrase(name: str) -> str:
    """A rater as a sentence names it, with its article and no colon: "the claim checker", "the judge
    SmolLM2-135M (two-stage)", "the jury of the claim checker and the judge …"; people and imported labels
    by their names."""
    if name == VERIFIER:
        return "the claim checker"
    if _judge_parts(name):
        return f"the judge {rater_name(name)}"
    if jurors := jurors_of(name):
        by_role = " by role" if name.startswith("jury:roles:") else ""
        return f"the jury{by_role} of " + " and ".join(rater_phrase(juror) for juror in jurors)
    return rater_name(name)


def sentence_start(phrase: str) -> str:
    """A phrase that opens a sentence: its first letter capital ("the claim checker" → "The claim checker")."""
    return phrase[:1].upper() + phrase[1:]


def role_name(name: str | None) -> str:
    """What a rater that tags answers is, in one word a column header or a sentence can use: "Claim
    checker" for the checker (never "Judge"), "Jury" for a jury, else "Judge"."""
    if name == VERIFIER:
        return "Claim checker"
    return "Jury" if name and name.startswith("jury:") else "Judge"


# The claim checker's verdicts and checks, as its stored rationale names them ("verifier incorrect:
# value_mismatch: …"), in a reader's words; the ids stay in what machines read (JSONL).
VERDICT_WORDS = {
    INCORRECT: "flagged",
    SUPPORTED: "found in the document",
    QUOTED: "quotation confirmed word for word",
    UNCONFIRMED: "not confirmed",
    NEEDS_REVIEW: "needs review",
    UNVERIFIABLE: "nothing in the document to check this against",
}
CHECK_WORDS = {
    "value_mismatch": "a different value",
    "competing_values": "values compete",
    "misquote": "not the document's words",
    "negation": "the document says the opposite",
    "modality": "may and must differ",
    "exclusivity": "only or exclusively differs",
    "swapped_roles": "the parties' roles swapped",
    "bad_citation": "the cited section does not say this",
    "exception": "an exception left out",
}
_CHECK = re.compile(r"\b(" + "|".join(CHECK_WORDS) + r")\b:")


def rationale_words(rationale: str) -> str:
    """A rater's stored rationale as a reader reads it: the claim checker's "verifier incorrect:
    value_mismatch: the answer says …" becomes "flagged — a different value: the answer says …"."""
    if not rationale.startswith(VERIFIER + " "):
        return rationale
    verdict, _, rest = rationale.removeprefix(VERIFIER + " ").partition(": ")
    words = VERDICT_WORDS.get(verdict, verdict.replace("_", " "))
    rest = checks_in_words(rest)
    return f"{words} — {rest}" if rest else words


# Where the claim checker gives no tag, its verdict in a table cell: never "—", which means "not checked".
ABSTENTION_CELLS = {
    QUOTED: "❝ quotation confirmed",
    NEEDS_REVIEW: "⚠ needs review",
    UNCONFIRMED: "○ not confirmed",
    SUPPORTED: "○ not confirmed",  # the rules' "supported" without the checker's probability: no tag
    UNVERIFIABLE: "○ nothing to check",
}


def abstention_cell(rationale: str | None) -> str | None:
    """What a table cell says for a point the claim checker read but did not tag ("⚠ needs review"); None
    for another rater's rationale."""
    if not rationale or not rationale.startswith(VERIFIER + " "):
        return None
    verdict = rationale.removeprefix(VERIFIER + " ").partition(":")[0]
    return ABSTENTION_CELLS.get(verdict)


def checks_in_words(text: str) -> str:
    """The claim checker's reasons with each check's id in words: "value_mismatch: …" → "a different value: …"."""
    return _CHECK.sub(lambda m: CHECK_WORDS[m.group(1)] + ":", text)


def jurors_of(name: str) -> list[str]:
    """The internal names of a jury's jurors, read from its name; [] for a rater that is no jury."""
    if not name.startswith("jury:"):
        return []
    body = name.removeprefix("jury:")
    how, sep, rest = body.partition(":")
    if sep and how in COMBINATIONS:
        body = rest
    return [juror for juror in body.split("+") if juror]

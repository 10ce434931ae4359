"""Claims about kinds of clause that six other hands wrote, and the two models of the kind reader learnt from
them (models/checker/kinds.py): the recogniser (which kind a claim is about) and the denial model (whether it
says the contract has no such clause). train_clause_kinds.py calls these and ships what they learn in kinds.json.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from models.checker.kinds import denial_features, negated, polarity_terms, recognition_text

from .paths import DATA, WORDINGS, overlapping_texts

# wordings and denials of every kind written apart by six hands: three with 14 wordings and 4 denials a kind
# (lawyers', an LLM's answers, plain English) and, since 30 Nov 2026, three with 8 and 8 (counsel's diligence
# bullets, a review tool's output and a buyer's chat; an AI assistant's hedged answer, a law student's and a
# non-native speaker's email; a litigator's submission, a board summary and a salesman's reply)
HANDS = sorted(WORDINGS.parent.glob("kind_wordings_hand_*.json"))
OTHER_KINDS = WORDINGS.parent / "kind_claims_other_kinds.json"
DENIAL_C = 0.3  # the denial model's inverse regularisation
# The denial model reads the claim's words too (kinds.polarity_terms), each used by two texts at least: held out by
# hand, with them it caught 5 to 29 more of each hand's denials (of 132 or 264) than the cues and the known wordings
# alone, at as many of their wordings read as denials (43 of 2,178 either way)
POLARITY_MIN_DF = 2
# A wording read as a denial flips its verdict (a clause there is "contradicted"), so the denial model reads a claim
# as one only where, held out by hand, at most this share of the hands' wordings would be (`negated` alone: 1 in 100)
DENIALS_MISREAD = 0.02
# From this probability to the threshold a claim may deny the clause it names: where the contract has the clause,
# the kind reading gives no verdict (held out by hand, about 30 of each hand's 132 denials fall here, which would
# be "found", and 23, 35, 56 of its 462 wordings, which lose their "supported"); where it has none, the claim is
# flagged as never made, as a claim that the clause is there would be. Not flagging it there (tried 30 Nov 2026) took
# 16 false alarms off a fifth hand's 518 true denials, but 43 of 525 never-made flags off CUAD's held-out kinds
# (wordings 3-5) and 36 of 447 off kinds nobody trained on: the doubt is too wide to keep an assertion from its flag
DENIAL_DOUBT = 0.5


# 0.92 had read sentences of the sample's answers as kinds ("This prohibits the Marketing Affiliate from transferring
# its rights" as a licence to the licensee's affiliates); at 0.95 CUAD's wordings 3-5 lost nothing on the held-out
# contracts, the hands' wordings 7 to 9 in 100 of their recognition
RECOGNISED_RIGHT = 0.95


def hand_texts(category_of: dict[str, str]) -> list[tuple[str, str, bool, str]]:
    """The hands' wordings and denials of each kind: text, the kind's category, whether it denies, the hand;
    less the texts held_out_overlap.py lists. `category_of`: each kind's key's category."""
    out = []
    for path in HANDS:
        hand = json.loads(path.read_text())
        for part, denies in (("wordings", False), ("denials", True)):
            out += [(t, category_of[k], denies, hand["hand"]) for k, ts in hand[part].items() for t in ts]
    dropped = overlapping_texts([t for t, _, _, _ in out])
    print(f"{len(dropped)} hand-written claims overlap measurement documents: dropped", flush=True)
    return [h for h in out if h[0] not in dropped]


def recogniser(
    examples: list[tuple[np.ndarray, bool, str]], seed: int
) -> tuple[tuple[np.ndarray, float], float, dict[str, Any]]:
    """The recogniser's weights and bias, and its threshold: the lowest probability at which, out of fold (each
    group of examples scored by a regression that never saw it), the claims recognised are of the right kind at
    least RECOGNISED_RIGHT of the time (a claim of no kind recognised is wrong)."""
    from sklearn.linear_model import LogisticRegression

    x = np.asarray([e[0] for e in examples])
    y = np.asarray([e[1] for e in examples])
    group = np.asarray([e[2] for e in examples])

    def fit(keep: np.ndarray) -> tuple[np.ndarray, float]:
        model = LogisticRegression(C=1.0, max_iter=5000, random_state=seed).fit(x[keep], y[keep])
        return model.coef_[0], float(model.intercept_[0])

    hand = np.asarray([g.split(",")[0] for g in group])  # a hand's claims held out together, its kind seen or not
    p = np.zeros(len(y))
    for g in np.unique(hand):
        w, b = fit(hand != g)
        p[hand == g] = 1.0 / (1.0 + np.exp(-(x[hand == g] @ w + b)))
    # the claims of an unseen kind teach the regression what such a claim looks like, but do not choose the
    # threshold: each hand's claims are there once as of a kind seen, once unseen, where a user's mostly are of
    # the kinds Assay knows
    seen = ~np.char.endswith(group.astype(str), "unseen")
    threshold = min((float(t) for t in np.sort(p[seen]) if y[seen & (p >= t)].mean() >= RECOGNISED_RIGHT), default=1.0)
    card = {
        f"held_out_{g}".replace(" ", "_"): {
            "claims": int((group == g).sum()),
            "recognised": round(float((p[group == g] >= threshold).mean()), 3),
            "right_kind": round(float(y[(group == g) & (p >= threshold)].mean()), 3)
            if ((group == g) & (p >= threshold)).any()
            else None,
        }
        for g in np.unique(group)
    }
    return fit(np.ones(len(y), dtype=bool)), threshold, card


def denial_model(
    hands: tuple[tuple[str, str, bool, str], ...],
    protos: np.ndarray,
    owner: np.ndarray,
    categories: list[str],
    learnable: list[tuple[str, str]],
    embed: Any,
    seed: int,
) -> dict[str, Any]:
    """The denial model (kinds.KindReader.denies), learnt from the hands' wordings and denials and the learnable
    CUAD wordings (`learnable`: text, category), each read without its own hand's texts; held out by hand, beside
    `negated` alone. The hands' texts are the last prototypes (train_clause_kinds.prototypes)."""
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from models.checker.sense import cue_vector

    rows = np.arange(len(protos) - len(hands), len(protos))
    cues = np.asarray([cue_vector(t) for t, _, _, _ in hands])
    denies = np.asarray([d for _, _, d, _ in hands])
    writer = np.asarray([h for _, _, _, h in hands])
    texts = [t for t, _, _, _ in hands] + [t for t, _ in learnable]
    kinds = [categories.index(c) for _, c, _, _ in hands] + [categories.index(c) for _, c in learnable]
    y = np.concatenate([denies, np.zeros(len(learnable), dtype=bool)])
    hand = np.concatenate([writer, np.full(len(learnable), "")])
    vectors = embed([recognition_text(t) for t in texts])

    def features(j: int) -> np.ndarray:
        pool = (owner[rows] == kinds[j]) & (writer != hand[j] if hand[j] else np.ones(len(rows), dtype=bool))
        said, denied = pool & ~denies, pool & denies
        return denial_features(
            texts[j], vectors[j], (cues[said], protos[rows[said]]), (cues[denied], protos[rows[denied]])
        )

    x = np.asarray([features(j) for j in range(len(texts))])

    def read(chosen: np.ndarray, words: Any) -> Any:
        """The chosen texts' features beside their words' TF-IDF."""
        said = words.transform([texts[j] for j in np.flatnonzero(chosen)])
        return sparse.hstack([sparse.csr_matrix(x[chosen]), said]).tocsr()

    def fit(keep: np.ndarray) -> tuple[Any, Any]:
        """The regression over the features and the words (their TF-IDF learnt from the texts kept alone)."""
        words = TfidfVectorizer(analyzer=polarity_terms, min_df=POLARITY_MIN_DF, sublinear_tf=True)
        words.fit([texts[j] for j in np.flatnonzero(keep)])
        model = LogisticRegression(C=DENIAL_C, max_iter=5000, class_weight="balanced", random_state=seed)
        return model.fit(read(keep, words), y[keep]), words

    def probability(fitted: tuple[Any, Any], chosen: np.ndarray) -> np.ndarray:
        model, words = fitted
        return np.asarray(model.predict_proba(read(chosen, words))[:, 1])

    card: dict[str, Any] = {
        "learnt_from": {"denials": int(y.sum()), "wordings": int((~y).sum())},
        "held_out_by_hand": {},
    }
    p = np.zeros(len(y))
    for h in sorted(set(writer)):
        p[hand == h] = probability(fit(hand != h), hand == h)
    # the lowest threshold at which, held out by hand, at most DENIALS_MISREAD of the wordings read as denials
    written = hand != ""
    threshold = min(
        (float(t) for t in np.sort(p[written]) if (p[written & ~y] >= t).mean() <= DENIALS_MISREAD), default=1.0
    )
    card["threshold"] = round(threshold, 6)
    for h in sorted(set(writer)):
        mine = hand == h
        said = p[mine] >= threshold
        rule = np.asarray([negated(t) for t, m in zip(texts, mine, strict=True) if m])
        card["held_out_by_hand"][h] = {
            "denials": int(y[mine].sum()),
            "denials_caught": int((said & y[mine]).sum()),
            "wordings_read_as_denials": int((said & ~y[mine]).sum()),
            "by_negated_alone": {"caught": int((rule & y[mine]).sum()), "wordings": int((rule & ~y[mine]).sum())},
        }
    model, words = fit(np.ones(len(y), dtype=bool))
    return {
        "weights": _rounded(model.coef_[0][: x.shape[1]]),
        "bias": round(float(model.intercept_[0]), 6),
        "terms": [str(t) for t in words.get_feature_names_out()],
        "idf": _rounded(words.idf_),
        "term_weights": _rounded(model.coef_[0][x.shape[1] :]),
        "threshold": round(threshold, 6),
        "doubt": min(DENIAL_DOUBT, round(threshold, 6)),
        "rows": [int(r) for r in rows],
        "denies": [bool(d) for d in denies],
        "texts": [t for t, _, _, _ in hands],
        "card": card,
    }


def answer_sentences(encoders: Any) -> np.ndarray:
    """Sentences of LLM answers, of no kind of clause: the half of ragtruth-dev's answer sentences the statement
    reader learns from too (the other half is never learnt). An answer's "Below is a summary of the licences
    granted to MA" was read as a kind of clause; these teach the recogniser what such prose looks like."""
    from .train_statements import sentences

    spoken = sentences(DATA)
    return np.asarray(encoders.embed([recognition_text(t) for t in spoken[: len(spoken) // 2]]))


def nda_hands(encoders: Any) -> np.ndarray:
    """Claims of no CUAD kind of clause written by other hands: the NDA statements' wordings in
    nda_wordings_hand_*.json, less those of the two statements that are CUAD kinds (nda-15: no licence is granted;
    nda-18: no soliciting of employees)."""
    texts = []
    for path in sorted(WORDINGS.parent.glob("nda_wordings_hand_*.json")):
        hand = json.loads(path.read_text())["statements"]
        texts += [t for key, ts in hand.items() if key not in ("nda-15", "nda-18") for t in ts]
    return np.asarray(encoders.embed([recognition_text(t) for t in texts]))


def other_kinds(encoders: Any) -> tuple[np.ndarray, list[int]]:
    """Claims about other subjects of a contract (notices, taxes, service levels ...), none of the 33 kinds nor the
    eight bench/unseen_kinds.py measures, written by another hand (kind_claims_other_kinds.json), less the texts
    held_out_overlap.py lists; and each one's fold, its subject's place mod 3 (a subject held out whole). With six
    hands the recogniser read more claims of other kinds as the nearest known kind; these teach it what such a
    claim looks like (bench/unseen_kinds.py: false alarms 63 -> 59 of 433)."""
    subjects = json.loads(OTHER_KINDS.read_text())["claims"]
    texts = [(t, j % 3) for j, (_, ts) in enumerate(sorted(subjects.items())) for t in ts]
    dropped = overlapping_texts([t for t, _ in texts])
    kept = [(t, fold) for t, fold in texts if t not in dropped]
    return np.asarray(encoders.embed([recognition_text(t) for t, _ in kept])), [fold for _, fold in kept]


def _rounded(a: Any) -> list[Any]:
    return np.round(np.asarray(a, dtype=np.float64), 5).tolist()

"""Measure the rapidfuzz threshold that makes two raters' points one point (models/identity.py).

On a dataset's answers (default: the shared set), every segment of an answer is compared with
variants a rater would produce of the same point (whitespace, punctuation, quotes, case, a dropped
or changed character or two, a trailing citation mark) and with every other segment of the same
answer (distinct points). A good threshold sits above every distinct pair and below every variant.

    .venv/bin/python bench/point_identity.py [QA_JSONL]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

DEFAULT = Path("/work/shared/datasets/legalbench_rag_qa/qa.jsonl")


def variants(text: str, rng: random.Random) -> list[str]:
    """What another rater (or an import) writes for the same point."""
    words = text.split()
    out = [
        "  ".join(words),  # whitespace
        text.rstrip(".;:,") if text[-1:] in ".;:," else text + ".",  # end punctuation
        text.replace("“", '"').replace("”", '"').replace("’", "'"),  # straight quotes
        text.lower(),
        f"- {text}",  # a bullet kept
        text + " (ibid.)" if len(text) > 60 else text,  # a citation mark kept (numbers differ: see below)
    ]
    for _ in range(2):  # one or two characters changed or dropped (a typo fixed, a plural)
        chars = list(text)
        for _ in range(rng.choice((1, 2))):
            letters = [k for k, c in enumerate(chars) if c.isalpha()]  # a changed number is another point
            if not letters:
                break
            i = rng.choice(letters)
            if rng.random() < 0.5:
                del chars[i]
            else:
                chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
        out.append("".join(chars))
    return out


def main(path: Path) -> None:
    from models.identity import MATCH_THRESHOLD, similarity
    from models.segmentation import segment_answer

    rng = random.Random(1)
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    same, distinct, edited = [], [], []
    segments_total = 0
    for row in rows:
        segments = [s.text for s in segment_answer(row["answer"]) if len(s.text) >= 12]
        segments_total += len(segments)
        for i, a in enumerate(segments):
            same += [(similarity(a, v), a, v) for v in variants(a, rng)]
            distinct += [(similarity(a, b), a, b) for b in segments[i + 1 :] if b != a]
            words = a.split()
            if len(words) >= 4:  # a split half, and the point merged with the next: other points
                edited += [(similarity(a, " ".join(words[: len(words) // 2])), a, "half")]
            if i + 1 < len(segments):
                edited += [(similarity(a, f"{a} {segments[i + 1]}"), a, "merged")]
    same.sort()
    distinct.sort(reverse=True)
    edited.sort(reverse=True)
    low_same, high_distinct = same[0][0], distinct[0][0]
    print(f"{len(rows)} answers, {segments_total} segments, {len(same)} variant pairs, {len(distinct)} distinct pairs")
    print(f"lowest variant score   {low_same:.1f}   e.g. {same[0][1][:60]!r} ~ {same[0][2][:60]!r}")
    print(f"highest distinct score {high_distinct:.1f}   e.g. {distinct[0][1][:60]!r} ~ {distinct[0][2][:60]!r}")
    print(f"highest split/merge score {edited[0][0]:.1f} (a reviewer's split or merge makes another point)")
    print("near-duplicate sentences of one answer (distinct spans, so distinct points of the answer):")
    for score, a, b in distinct[:4]:
        print(f"  {score:.1f} {a[:50]!r} ~ {b[:50]!r}")
    import math

    print(f"lowest whole threshold that keeps every split/merge apart: {math.floor(edited[0][0]) + 1}")
    print(f"models/identity.py uses MATCH_THRESHOLD = {MATCH_THRESHOLD}")
    for threshold in (80, 85, 88, 90, 92, 94, 95, 96):
        missed = sum(s < threshold for s, _, _ in same) / len(same)
        merged = sum(s >= threshold for s, _, _ in distinct) / len(distinct)
        split = sum(s >= threshold for s, _, _ in edited) / len(edited)
        print(
            f"threshold {threshold:5.1f}: variants missed {missed:.4f}, distinct sentences alike {merged:.4f}, "
            f"split/merged taken for the same {split:.4f}"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)

"""The statement reader (models/checker/statements.py) on the wordings three other hands wrote apart:
packaging/training/data/nda_wordings_hand_*.json, each 14 wordings and 4 denials of each of ContractNLI's 17
NDA statements (an LLM's answers, lawyers', plain English). For each hand: wordings read as their statement
(and as another), denials read as the statement they deny, and of those how many the engine could confirm
(`Recognised.alike`); beside reading nothing. The reader has learnt these since 29 Nov 2026 (afternoon): what
this reads is its training data; held out by hand, the figures are statements.json's card.

    .venv/bin/python bench/statement_hands.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from models.checker.encoder import shipped_encoders  # noqa: E402
from models.checker.statements import shipped_statements  # noqa: E402

HANDS = sorted((ROOT / "packaging" / "training" / "data").glob("nda_wordings_hand_*.json"))


def main() -> int:
    encoders = shipped_encoders()
    if isinstance(encoders, str):
        raise SystemExit(encoders)
    reader = shipped_statements(encoders.memory)
    if isinstance(reader, str):
        raise SystemExit(reader)
    for path in HANDS:
        hand = json.loads(path.read_text())
        for part in ("statements", "denials"):
            claims = [(text, key) for key, texts in hand[part].items() for text in texts]
            found = reader.recognise([t for t, _ in claims], encoders.embed([t for t, _ in claims]), encoders.judge)
            read = [(r, t, k) for r, (t, k) in zip(found, claims, strict=True) if r is not None]
            own = [(r, t) for r, t, k in read if r.key == k]
            alike = sum(r.alike for r, _ in own)
            what = "wordings" if part == "statements" else "denials"
            print(
                f"{hand['hand']:>13} {what:>8}: {len(claims)}, read {len(read)} (as their own statement {len(own)},"
                f" of which said alike, so confirmable: {alike}); reading nothing reads 0"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

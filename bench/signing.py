"""What signatures cost: signing and verifying sign-offs, and `assay audit verify` on a long log.

    .venv/bin/python bench/signing.py [--signoffs 10000] [--entries 100000]

1. Sign-offs: each of N sign-off records of a real one's size is written canonically and signed
   with an Ed25519 key, then verified the way `audit verify` does (storage.reviewer_keys); then N
   sign-offs made through storage.signoffs.sign on the sample project (its answers, reviewers
   enough to reach N) and every one checked by check_signoffs, as `assay audit verify` checks them
   (record against the review stored now, audit entry, signature).
2. The audit log: a SQLite project with N entries (chained as append_audit chains them, written in
   bulk), a signed head every 100 entries, then `verify_audit` timed as `assay audit verify` runs it
   (the chain, the heads, guidelines and keys), warm (second run: the file in the page cache).
3. The alternative not taken: an Ed25519 signature on every entry, verified: its cost on N entries
   is what signed heads save.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import insert

from storage.audit import GENESIS, audit_hash, head_message, verify_audit
from storage.db import open_project, url_for_path
from storage.reviewer_keys import b64, register_key, signature_valid
from storage.schema import AuditHeadRow, AuditRow, utcnow
from storage.signoffs import canonical

HEAD_EVERY = 100


def _record(n: int) -> dict:
    """A sign-off record of the size a real one has (an answer of 8 points, comments, citations)."""
    return {
        "format": "assay-signoff/1",
        "answer": {"id": f"answer-{n}", "sha256": f"{n:064x}"},
        "document": {"name": "NDA.txt", "sha256": "a" * 64, "text_sha256": "b" * 64},
        "points": [
            {
                "text": f"Point {i} of answer {n}: the receiving party shall keep the information confidential.",
                "span": [i * 90, i * 90 + 85],
                "tag": "correct",
                "comment": "clause 3 says so" if i == 0 else None,
                "citations": [f"par_{i + 3}"],
            }
            for i in range(8)
        ],
        "review": {"comment": None, "holistic_correctness": 5, "holistic_relevance": 5},
        "guidelines": {"version": 1, "sha256": "c" * 64},
        "reviewer": "ana",
        "signed_at": "2026-11-25T20:00:00+00:00",
        "key": "d" * 64,
        "audit_head": {"entry": n, "hash": "e" * 64},
    }


def bench_signoffs(count: int) -> None:
    key = Ed25519PrivateKey.generate()
    public = b64(key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    records = [_record(n) for n in range(count)]
    start = time.perf_counter()
    signatures = [b64(key.sign(canonical(r).encode())) for r in records]
    signed = time.perf_counter() - start
    start = time.perf_counter()
    valid = sum(signature_valid(public, canonical(r).encode(), s) for r, s in zip(records, signatures, strict=True))
    verified = time.perf_counter() - start
    assert valid == count
    print(
        f"{count:,} sign-offs: signed in {signed:.2f} s ({signed / count * 1e6:.0f} µs each), "
        f"verified in {verified:.2f} s ({verified / count * 1e6:.0f} µs each)"
    )


def bench_project_signoffs(count: int, folder: Path) -> None:
    import shutil

    from app.ingest.datasets import import_dataset
    from app.project import SAMPLE_DATASET
    from models.vocabulary import RaterKind
    from storage import raters
    from storage.reviewer_keys import Signer
    from storage.schema import AnswerRow
    from storage.signoff_checks import check_signoffs
    from storage.signoffs import sign

    path = folder / "signoffs.assay"
    sessions = open_project(url_for_path(path))
    import_dataset(sessions, SAMPLE_DATASET)
    with sessions() as session:
        answers = [a for (a,) in session.execute(AnswerRow.__table__.select().with_only_columns(AnswerRow.id))]
    start = time.perf_counter()
    made = 0
    with sessions.begin() as session:
        for n in range(count // len(answers) + 1):
            name = f"reviewer{n}"  # each with a key of their own
            rater = raters.add_rater(session, name, RaterKind.HUMAN, {}, name)
            key = Ed25519PrivateKey.generate()
            raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            registered, _ = register_key(session, name, raw, name)
            signer = Signer(name, registered.fingerprint, key.sign)
            for answer_id in answers[: count - made]:
                sign(session, answer_id, rater.id, name, signer)
                made += 1
    signed = time.perf_counter() - start
    start = time.perf_counter()
    with sessions() as session:
        checks = check_signoffs(session)
    checked = time.perf_counter() - start
    assert len(checks) == made and all(c.matches for c in checks), [c.problem for c in checks if not c.matches][:3]
    print(
        f"{made:,} sign-offs through storage on the sample ({len(answers)} answers): signed in {signed:.1f} s, "
        f"all checked (record, audit entry, signature) in {checked:.1f} s"
    )
    sessions.kw["bind"].dispose()
    shutil.rmtree(folder / "keys", ignore_errors=True)


def bench_audit(entries: int, folder: Path) -> None:
    path = folder / "audit.assay"
    sessions = open_project(url_for_path(path))
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    with sessions.begin() as session:
        registered, _ = register_key(session, "ana", raw, "ana")
    with sessions() as session:
        prev = session.scalar(AuditRow.__table__.select().with_only_columns(AuditRow.hash).order_by(AuditRow.id.desc()))
        first = session.scalar(AuditRow.__table__.select().with_only_columns(AuditRow.id).order_by(AuditRow.id.desc()))
    prev, next_id = prev or GENESIS, (first or 0) + 1
    start = time.perf_counter()
    rows, heads = [], []
    for n in range(entries - next_id + 1):
        at = utcnow()
        payload = {"digest": f"{n:064x}", "reviewer": "ana", "point": n % 17}
        digest = audit_hash(prev, at, "ana", "review.tagged", "answer", f"answer-{n % 5000}", payload)
        rows.append(
            {
                "id": next_id + n,
                "at": at,
                "actor": "ana",
                "action": "review.tagged",
                "entity": "answer",
                "entity_id": f"answer-{n % 5000}",
                "payload": payload,
                "prev_hash": prev,
                "hash": digest,
            }
        )
        prev = digest
        if (next_id + n) % HEAD_EVERY == 0:
            message = head_message(next_id + n, digest, registered.fingerprint)
            signature = base64.b64encode(key.sign(message)).decode()
            heads.append(
                {
                    "entry_id": next_id + n,
                    "entry_hash": digest,
                    "fingerprint": registered.fingerprint,
                    "signed_at": at,
                    "signature": signature,
                }
            )
    with sessions.begin() as session:
        for i in range(0, len(rows), 20000):
            session.execute(insert(AuditRow), rows[i : i + 20000])
        session.execute(insert(AuditHeadRow), heads)
    print(f"wrote {entries:,} audit entries and {len(heads):,} signed heads in {time.perf_counter() - start:.1f} s")
    for run in ("cold", "warm"):
        start = time.perf_counter()
        with sessions() as session:
            count, problems = verify_audit(session)
        took = time.perf_counter() - start
        assert not problems, problems[:3]
        print(f"audit verify ({run}): {count:,} entries, {len(heads):,} heads, intact, in {took:.2f} s")
    start = time.perf_counter()
    every = [(r["hash"], b64(key.sign(r["hash"].encode()))) for r in rows]
    signed = time.perf_counter() - start
    public = b64(raw)
    start = time.perf_counter()
    assert all(signature_valid(public, h.encode(), s) for h, s in every)
    verified = time.perf_counter() - start
    print(
        f"the alternative, a signature on every entry: {signed:.2f} s to sign {len(every):,}, "
        f"{verified:.2f} s more to verify them"
    )
    sessions.kw["bind"].dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signoffs", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=100_000)
    args = parser.parse_args()
    bench_signoffs(args.signoffs)
    with tempfile.TemporaryDirectory() as folder:
        bench_project_signoffs(args.signoffs, Path(folder))
    with tempfile.TemporaryDirectory() as folder:
        bench_audit(args.entries, Path(folder))
    print(json.dumps({"signoffs": args.signoffs, "entries": args.entries}))


if __name__ == "__main__":
    main()

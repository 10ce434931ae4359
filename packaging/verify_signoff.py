#!/usr/bin/env python3
"""Check an Assay sign-off certificate without Assay: `python verify_signoff.py CERT.json`.

Needs only Python 3 and the `cryptography` package (pip install cryptography). Exit status 0 when
the certificate is valid, 1 when it is not (the reason is printed), 2 when the file cannot be read.

What is checked: the file is the certificate written canonically (as Assay writes it, so that no
byte of it can change unnoticed) with exactly its fields; the record's SHA-256 (of its canonical
JSON: keys sorted, separators ',' and ':', non-ASCII characters as they are, UTF-8) is the one
given; the public key's SHA-256 is the fingerprint given, and the one the record names; and the
Ed25519 signature over the canonical record verifies with that public key. Whether the key is the
reviewer's is for you to check: compare the fingerprint with the one the reviewer gave you (`assay
keys` prints it).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import stat
import sys

FORMAT = "assay-signoff-certificate/1"
ABOUT = (
    "A reviewer's sign-off of an answer, made with Assay. 'signature' is the Ed25519 signature (base64) "
    "of the UTF-8 bytes of 'record' written as canonical JSON (keys sorted, separators ',' and ':', "
    "non-ASCII as is); 'public_key' is the raw 32-byte Ed25519 key (base64) and 'fingerprint' its "
    "SHA-256 (hex), which 'record.key' names; 'sha256' is the SHA-256 of the canonical record. The "
    "file itself is this object as canonical JSON and a newline. Check it with "
    "packaging/verify_signoff.py CERT, or any Ed25519 library."
)
LIMIT = 1_000_000  # bytes: a certificate is a few KB
FIELDS = {"format", "about", "record", "sha256", "signature", "public_key", "fingerprint", "algorithm"}


def canonical(record: object) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def problems(cert: dict, raw: bytes | None = None) -> list[str]:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if cert.get("format") != FORMAT:
        return [f"not an Assay sign-off certificate (format {cert.get('format')!r}, expected {FORMAT!r})"]
    record = cert.get("record")
    if not isinstance(record, dict):
        return ["the certificate has no record"]
    found = []
    if set(cert) != FIELDS or cert.get("algorithm") != "ed25519" or cert.get("about") != ABOUT:
        found.append(f"its fields are not a certificate's ({', '.join(sorted(set(cert) ^ FIELDS)) or 'algorithm'})")
    if raw is not None and raw != canonical(cert) + b"\n":
        found.append("the file is not the certificate as written (it was edited)")
    if hashlib.sha256(canonical(record)).hexdigest() != cert.get("sha256"):
        found.append("the record does not match its SHA-256")
    try:
        public = base64.b64decode(str(cert.get("public_key")), validate=True)
        signature = base64.b64decode(str(cert.get("signature")), validate=True)
    except (binascii.Error, ValueError):
        return [*found, "the public key or the signature is not base64"]
    if base64.b64encode(public).decode() != cert.get("public_key") or base64.b64encode(signature).decode() != cert.get(
        "signature"
    ):
        found.append("the public key or the signature is not written as Assay writes it (it was edited)")
    if hashlib.sha256(public).hexdigest() != cert.get("fingerprint"):
        found.append("the public key does not match its fingerprint")
    if record.get("key") != cert.get("fingerprint"):
        found.append("the record names another key than the certificate's")
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, canonical(record))
    except (InvalidSignature, ValueError):
        found.append("the signature does not verify with the public key (the record or signature was changed)")
    return found


def read_bounded(name: str) -> bytes:
    """The file's bytes: a regular file of at most LIMIT bytes (a device or a pipe such as /dev/zero
    would never end), read no further than that; ValueError says why not."""
    not_a_file = "it is not a regular file (a device, a pipe or a folder): give a certificate file"
    if not stat.S_ISREG(os.stat(name).st_mode):
        raise ValueError(not_a_file)
    # Without blocking: a pipe put in its place after the check would wait for a writer.
    descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(descriptor, "rb", buffering=0) as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ValueError(not_a_file)
        pieces, total = [], 0
        while total <= LIMIT and (piece := file.read(LIMIT + 1 - total)):
            pieces.append(piece)
            total += len(piece)
    if total > LIMIT:
        raise ValueError(f"it is over {LIMIT:,} bytes: a certificate is a few KB")
    return b"".join(pieces)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: verify_signoff.py CERT.json", file=sys.stderr)
        return 2
    try:
        raw = read_bounded(argv[1])
    except OSError as exc:
        print(f"{argv[1]}: cannot be read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"{argv[1]}: cannot be read: {exc}", file=sys.stderr)
        return 2
    try:
        cert = json.loads(raw.decode("utf-8"))
    except ValueError:
        print(f"{argv[1]}: NOT VALID: it is not JSON (it was damaged or edited)")
        return 1
    except RecursionError:  # thousands of nested brackets: no certificate is written so
        print(f"{argv[1]}: NOT VALID: it is not a certificate (its JSON is nested too deeply)")
        return 1
    if not isinstance(cert, dict):
        print(f"{argv[1]}: NOT VALID: not an Assay sign-off certificate")
        return 1
    try:
        found = problems(cert, raw)
    except RecursionError:
        found = ["its JSON is nested too deeply to be a certificate"]
    if found:
        print(f"{argv[1]}: NOT VALID: " + "; ".join(found))
        return 1
    record = cert["record"]
    answer = (record.get("answer") or {}).get("id")
    print(
        f"{argv[1]}: valid. {record.get('reviewer')} signed off answer {answer} at {record.get('signed_at')} "
        f"with key {cert['fingerprint']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

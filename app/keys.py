"""Reviewers' signing keys on this computer: making one, unlocking it, signing with it.

A reviewer's key pair is Ed25519 (the `cryptography` package). The private key never enters a
project: it is kept in the OS keyring (`keyring`) or, where there is none (a headless server, a
container), in a passphrase-encrypted PKCS#8 file (mode 600) in the user data folder; scripts give
that passphrase in ASSAY_KEY_PASSPHRASE. Beside it a small JSON file says whose key it is and
where its private half lives; the public key is registered in each project the reviewer signs in
(storage/reviewer_keys.py, audited). Every failure is one sentence (KeyProblem, exit 2).

In a project a reviewer signs with one key: their first is registered on trust; another is made
only as a rotation, signed with their key in force there, which this computer must hold (`new_key`),
and that key is then retired. A retired key signs nothing, so a reviewer whose keys in a project are
all retired, or whose key in force is on another computer, is refused rather than given a new one.

Retiring a key is signed (`retire`): by the key itself, on the computer that holds it (its passphrase
proves it), or by a lead with the lead's own key in force in the project. A reviewer who lost their
key (a computer gone, a passphrase forgotten) asks a lead to retire it: after a lead's retirement
their next key is registered as a first key, on their next sign-off or `assay keys create`.

The anchor, this computer's witness of each log's newest entry, is kept beside the keys (app/anchors.py).
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.errors import AssayError
from storage.audit import AuditHead
from storage.reviewer_keys import (
    RegisteredKey,
    Retirement,
    Rotation,
    Signer,
    b64,
    fingerprint_of,
    fresh_start,
    register_key,
    registered_keys,
    retire_key,
    retirement_message,
    rotation_message,
    unb64,
)

KEY_DIR_ENV = "ASSAY_KEY_DIR"  # tests and portable installs point it elsewhere
PASSPHRASE_ENV = "ASSAY_KEY_PASSPHRASE"  # scripts; people are asked
KEYRING_SERVICE = "Assay reviewer key"
KEYRING, FILE = "keyring", "file"

AskKeyPassphrase = Callable[[str, bool], "str | None"]  # (what for, making a new key?) -> passphrase or None


class KeyProblem(AssayError):
    """A signing key cannot be made, found or unlocked; the message says which and why."""


@dataclass(frozen=True)
class LocalKey:
    """A reviewer's key whose private half this computer holds."""

    fingerprint: str
    reviewer: str
    created_at: str
    store: str  # "keyring" or "file"
    public_key: str  # base64 of the raw 32 bytes


def key_folder() -> Path:
    if folder := os.environ.get(KEY_DIR_ENV):
        return Path(folder)
    from platformdirs import user_data_path

    return user_data_path("Assay", appauthor=False) / "keys"


def _ask_in_terminal(what: str, new: bool) -> str | None:
    if not sys.stdin.isatty():
        return None
    first = getpass.getpass(f"Passphrase for {what}: ")
    if new and first and getpass.getpass("The same passphrase again: ") != first:
        raise KeyProblem("the two passphrases differ: nothing was made")
    return first or None


_asker: AskKeyPassphrase = _ask_in_terminal
_unlocked: dict[str, Ed25519PrivateKey] = {}  # this process's unlocked keys, by fingerprint
_unlocked_reports: dict[str, ec.EllipticCurvePrivateKey] = {}
PrivateKey = Any  # what cryptography's PEM loader returns


def set_passphrase_asker(ask: AskKeyPassphrase) -> None:
    """How a passphrase is asked when ASSAY_KEY_PASSPHRASE is not set (the window passes a dialog)."""
    global _asker
    _asker = ask


def _passphrase(what: str, new: bool) -> str:
    passphrase = os.environ.get(PASSPHRASE_ENV) or _asker(what, new)
    if not passphrase:
        raise KeyProblem(
            f"{what} is kept in a passphrase-encrypted file (there is no OS keyring here): "
            f"set {PASSPHRASE_ENV} or enter its passphrase"
        )
    return passphrase


# ---------------------------------------------------------------- this computer's keys


def local_keys(reviewer: str | None = None) -> list[LocalKey]:
    """The keys this computer holds, oldest first, or one reviewer's."""
    folder = key_folder()
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if path.name == "anchors.json":
            continue
        try:
            key = LocalKey(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue  # not one of ours
        if reviewer is None or key.reviewer == reviewer:
            found.append(key)
    return sorted(found, key=lambda k: k.created_at)


def _keyring_set(fingerprint: str, pem: str) -> bool:
    """Keep the private key in the OS keyring; False when there is none that works."""
    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, fingerprint, pem)
    except Exception:  # no backend, or its own failure (D-Bus gone, a locked collection): no keyring
        return False
    return True


def _keep(entry: str, private: PrivateKey, store: str | None, what: str) -> str:
    """Keep a private key: in the keyring (store None: when there is one), else in `entry`.pem,
    encrypted with the passphrase. Returns where it went."""
    plain = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    if store != FILE and _keyring_set(entry, plain):
        return KEYRING
    if store == KEYRING:
        raise KeyProblem(f"{what} goes to the OS keyring, which is not available here")
    folder = key_folder()
    passphrase = _passphrase(what, store is None)  # asked before anything is written
    encrypted = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(passphrase.encode()),
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_private(folder / f"{entry}.pem", encrypted)
    except OSError as exc:
        raise KeyProblem(f"cannot keep {what} in {folder}: {exc.strerror or exc}") from exc
    return FILE


def _fetch(entry: str, store: str, what: str) -> PrivateKey | None:
    """A private key kept by `_keep`; None when the keyring or the folder does not have it."""
    if store == KEYRING:
        try:
            import keyring

            pem = keyring.get_password(KEYRING_SERVICE, entry)
        except Exception as exc:  # no backend, D-Bus gone, locked: the key is out of reach either way
            raise KeyProblem(f"{what} is kept in the OS keyring, which is not available here ({exc})") from exc
        if pem is None:
            return None
        try:
            return serialization.load_pem_private_key(pem.encode(), password=None)
        except (ValueError, TypeError) as exc:
            raise KeyProblem(
                f"{what} in the OS keyring is damaged (not a readable private key): nothing was signed"
            ) from exc
    path = key_folder() / f"{entry}.pem"
    if not path.exists():
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KeyProblem(f"{what}: its private key file {path} cannot be read ({exc.strerror or exc})") from exc
    if b"-----BEGIN ENCRYPTED PRIVATE KEY-----" not in data:
        raise KeyProblem(
            f"{what}: its private key file {path} is damaged (not an encrypted PEM key): nothing was signed"
        )
    try:
        return serialization.load_pem_private_key(data, password=_passphrase(what, False).encode())
    except (ValueError, TypeError) as exc:
        raise KeyProblem(f"wrong passphrase for {what} (nothing was signed)") from exc


def create_key(reviewer: str) -> LocalKey:
    """Make a key pair for the reviewer; its private half goes to the keyring, else to a file
    encrypted with a passphrase (ASSAY_KEY_PASSPHRASE, or asked)."""
    if not reviewer.strip():
        raise KeyProblem("a key needs a reviewer's name")
    private = Ed25519PrivateKey.generate()
    public_raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    fingerprint = fingerprint_of(public_raw)
    store = _keep(fingerprint, private, None, f"{reviewer}'s new signing key")
    key = LocalKey(fingerprint, reviewer, datetime.now(UTC).isoformat(), store, b64(public_raw))
    try:
        key_folder().mkdir(parents=True, exist_ok=True)
        (key_folder() / f"{fingerprint}.json").write_text(json.dumps(asdict(key), indent=1), encoding="utf-8")
    except OSError as exc:
        raise KeyProblem(f"cannot keep the new key in {key_folder()}: {exc.strerror or exc}") from exc
    _unlocked[fingerprint] = private
    return key


def report_key(key: LocalKey) -> ec.EllipticCurvePrivateKey:
    """The reviewer's key for signing PDF reports (ECDSA P-256, which PDF readers and poppler
    validate; Ed25519 is poorly supported there), kept beside their Ed25519 key and made on first use."""
    entry, what = f"{key.fingerprint}.pdf", f"{key.reviewer}'s report-signing key"
    if entry in _unlocked_reports:
        return _unlocked_reports[entry]
    found = _fetch(entry, key.store, what)
    if found is None:
        private_key(key)  # the passphrase proven on the reviewer's key first: a wrong one makes nothing
        found = ec.generate_private_key(ec.SECP256R1())
        _keep(entry, found, key.store, what)
    if not isinstance(found, ec.EllipticCurvePrivateKey):
        raise KeyProblem(f"{what} is not an ECDSA key")
    _unlocked_reports[entry] = found
    return found


def _write_private(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


def private_key(key: LocalKey) -> Ed25519PrivateKey:
    """The key's private half, unlocked (once a process): from the keyring, or its file and passphrase."""
    if key.fingerprint in _unlocked:
        return _unlocked[key.fingerprint]
    name = f"{key.reviewer}'s signing key {key.fingerprint[:16]}"
    loaded = _fetch(key.fingerprint, key.store, name)
    if loaded is None:
        where = "the OS keyring" if key.store == KEYRING else str(key_folder())
        raise KeyProblem(f"{name} is no longer in {where}: make a new one with `assay keys create`")
    if not isinstance(loaded, Ed25519PrivateKey):
        raise KeyProblem(f"{name} is not an Ed25519 key")
    _unlocked[key.fingerprint] = loaded
    return loaded


def signer(key: LocalKey) -> Signer:
    private = private_key(key)
    return Signer(key.reviewer, key.fingerprint, private.sign)


# ---------------------------------------------------------------- keys in a project


def signing_key(session: Any, reviewer: str, *, create: bool = True, actor: str | None = None) -> tuple[Signer, bool]:
    """The reviewer's signer for this project: their key in force here, which this computer holds; when
    the project has no key of theirs, a key this computer holds (with `create`, a new one) registered
    here as their first. The flag says whether a key was made. KeyProblem when they have keys here
    but none this computer can sign with: another key is made only by `new_key`, a signed rotation."""
    theirs = registered_keys(session, reviewer)
    if theirs and not fresh_start(session, reviewer):
        return signer(_key_in_force(reviewer, theirs)), False
    registered = {k.fingerprint for k in theirs}  # after a lost key, one of this computer's not retired here
    usable = [k for k in local_keys(reviewer) if k.fingerprint not in registered]
    created = False
    if not usable:
        if not create:
            raise KeyProblem(f"{reviewer} has no signing key on this computer: `assay keys create --reviewer NAME`")
        usable, created = [create_key(reviewer)], True
    key = usable[-1]
    sign = signer(key)  # unlocked before anything is written: a wrong passphrase changes nothing
    try:
        register_key(session, reviewer, _raw(key), actor or reviewer)
    except ValueError as exc:
        raise KeyProblem(str(exc)) from exc
    return sign, created


def held_signer(session: Any, reviewer: str) -> Signer | None:
    """The reviewer's key in force in this project when this computer holds it (to sign the log's head
    after an action that needs no signature of its own), else None."""
    theirs = registered_keys(session, reviewer)
    in_force = {k.fingerprint for k in theirs if k.retired_at is None}
    held = [k for k in local_keys(reviewer) if k.fingerprint in in_force]
    return signer(held[-1]) if held else None


def retired_fingerprints(session: Any, reviewer: str) -> set[str]:
    """The reviewer's keys this project retired: they sign nothing more in it."""
    return {k.fingerprint for k in registered_keys(session, reviewer) if k.retired_at is not None}


def _key_in_force(reviewer: str, theirs: list[RegisteredKey]) -> LocalKey:
    """The newest of the reviewer's keys in force here that this computer holds; KeyProblem if none."""
    in_force = [k for k in theirs if k.retired_at is None]
    held = {k.fingerprint: k for k in local_keys(reviewer)}
    mine = [held[k.fingerprint] for k in in_force if k.fingerprint in held]
    if mine:
        return mine[-1]
    if not in_force:
        raise KeyProblem(
            f"every signing key of {reviewer} in this project is retired, and a retired key signs nothing: "
            "no new key of theirs can be registered here (rotate with `assay keys create` before retiring)"
        )
    raise KeyProblem(
        f"{reviewer}'s signing key in this project ({in_force[-1].fingerprint[:16]}) is not on this computer: "
        "sign on the computer that holds it (another key of theirs needs a rotation signed with it)"
    )


def new_key(session: Any, reviewer: str, actor: str | None = None) -> tuple[LocalKey, Signer, str | None]:
    """Make a key for the reviewer and register it here: their first key, or a rotation signed with
    their key in force here (which this computer must hold), which the new key replaces (it is retired).
    Returns the key, its signer and the fingerprint of the key it replaced (None for a first key)."""
    theirs = [] if fresh_start(session, reviewer) else registered_keys(session, reviewer)
    old = signer(_key_in_force(reviewer, theirs)) if theirs else None  # unlocked before anything is made
    made = create_key(reviewer)
    rotation = None
    if old is not None:
        message = rotation_message(reviewer, old.fingerprint, made.fingerprint)
        rotation = Rotation(old.fingerprint, b64(old.sign(message)))
    try:
        register_key(session, reviewer, _raw(made), actor or reviewer, rotation=rotation)
    except ValueError as exc:
        raise KeyProblem(str(exc)) from exc
    return made, signer(made), None if old is None else old.fingerprint


def _raw(key: LocalKey) -> bytes:
    try:
        raw = unb64(key.public_key)
    except ValueError:
        raw = b""
    if fingerprint_of(raw) != key.fingerprint:
        raise KeyProblem(f"{key.reviewer}'s key file {key.fingerprint[:16]}.json is damaged (its public key)")
    return raw


def find_key(session: Any, fingerprint: str) -> RegisteredKey:
    """A registered key by its fingerprint or a unique beginning of it (KeyProblem when unknown)."""
    wanted = fingerprint.strip().lower()
    found = [k for k in registered_keys(session) if k.fingerprint.startswith(wanted)] if wanted else []
    if len(found) != 1:
        problem = "no key" if not found else f"{len(found)} keys"
        raise KeyProblem(f"{problem} in this project has the fingerprint {fingerprint!r}: `assay keys` lists them")
    return found[0]


def retire(session: Any, fingerprint: str, actor: str, *, lead: bool) -> RegisteredKey:
    """Retire a key with a signature: the key's own when this computer holds it (unlocked: a wrong
    passphrase retires nothing), else, when the actor is a lead (`lead`), the actor's own key in force
    here. KeyProblem when neither can sign."""
    key = find_key(session, fingerprint)
    if key.retired_at is not None:
        raise KeyProblem(f"{key.reviewer}'s key {key.fingerprint[:16]} was retired already")
    held = [k for k in local_keys(key.reviewer) if k.fingerprint == key.fingerprint]
    name = f"{key.reviewer}'s key {key.fingerprint[:16]}"
    if held:
        by = signer(held[0])
    elif not lead:
        raise KeyProblem(
            f"{name} is not on this computer: it is retired with its own signature, on the computer that holds "
            "it, or by a lead (a reviewer who lost their key asks a lead)"
        )
    else:
        lead_signer = held_signer(session, actor)
        if lead_signer is None or lead_signer.fingerprint == key.fingerprint:
            raise KeyProblem(
                f"{name} is not on this computer, and a lead retires it with the lead's own key in force in this "
                f"project: {actor} has none here (`assay keys create --reviewer {actor}`)"
            )
        by = lead_signer
    signature = b64(by.sign(retirement_message(key.reviewer, key.fingerprint, by.fingerprint)))
    vouch = Retirement(by.fingerprint, signature, None if by.fingerprint == key.fingerprint else by.reviewer)
    try:
        retired = retire_key(session, key.fingerprint, actor, vouch)
    except ValueError as exc:
        raise KeyProblem(str(exc)) from exc
    assert retired is not None
    return retired


# ---------------------------------------------------------------- heads and the anchor


def remember_head(project_url: str, head: AuditHead | None) -> None:
    """Nothing left to do: every commit that appends to the log, a signed head's among them, has
    anchored its newest entry already (app/anchors.py)."""

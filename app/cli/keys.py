"""`assay keys`: reviewers' signing keys. `list` (the default) shows the project's registered keys and
which of them this computer holds; `create` makes one and registers it; `export` writes a key's
public part (PEM); `retire` retires one (audited: it signs nothing more, what it signed still verifies),
signed by the key itself on the computer that holds it, or by a lead's own key in force (a lost key)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app import keys
from app.cli.output import print_summary, writing
from app.errors import AssayError, InvalidInput
from app.project import Project
from app.review import roles
from storage import audit
from storage.reviewer_keys import RegisteredKey, registered_keys, unb64


def _key_dict(key: RegisteredKey, here: set[str]) -> dict[str, Any]:
    return {
        "fingerprint": key.fingerprint,
        "reviewer": key.reviewer,
        "algorithm": key.algorithm,
        "public_key": key.public_key,
        "created_at": key.created_at.isoformat(),
        "retired_at": None if key.retired_at is None else key.retired_at.isoformat(),
        "retired_by": key.retired_by,
        "on_this_computer": key.fingerprint in here,
    }


def _keys(project: Project, args: argparse.Namespace) -> int:
    if args.action in ("list", "create") and (args.key or args.out):
        raise AssayError(f"keys {args.action} takes no fingerprint or file")
    if args.action in ("export", "retire") and not args.key:
        # "keys", not "assay keys": the message is printed after "assay: " already
        raise InvalidInput("keys", f"{args.action}: give the key's fingerprint (`assay keys` lists them)")
    here = {k.fingerprint for k in keys.local_keys()}
    if args.action == "create":
        reviewer = roles.default_reviewer(project, args.reviewer)
        with project.sessions.begin() as session:
            made, signer, replaced = keys.new_key(session, reviewer)  # another key only as a rotation signed by theirs
            head = audit.sign_head(session, signer)
        keys.remember_head(project.url, head)
        folder = keys.key_folder()
        where = "the OS keyring" if made.store == keys.KEYRING else f"a passphrase-encrypted file in {folder}"
        where += f"\nit replaces {replaced[:16]}, which signed the rotation and is now retired" if replaced else ""
        print_summary(
            {"fingerprint": made.fingerprint, "reviewer": reviewer, "store": made.store, "replaces": replaced},
            args.json,
            lambda: f"made a signing key for {reviewer}: {made.fingerprint}\nits private key is kept in {where}",
        )
        return 0
    if args.action == "export":
        with project.sessions() as session:
            key = keys.find_key(session, args.key)
        pem = Ed25519PublicKey.from_public_bytes(unb64(key.public_key)).public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        if args.out is None:
            print(pem.decode(), end="")
            return 0
        with writing(args.out, project=project, kind="text"), args.out.open("wb") as handle:
            handle.write(pem)
        print(f"wrote {args.out}: {key.reviewer}'s public key {key.fingerprint}")
        return 0
    if args.action == "retire":
        actor = roles.default_reviewer(project, args.reviewer)
        with project.sessions.begin() as session:
            owner = keys.find_key(session, args.key).reviewer
            lead = "lead" in roles.roles_of(project)
            if owner != actor and roles.database_login(project) is not None and not lead:
                raise InvalidInput("keys retire", f"the key is {owner}'s: only they or a lead may retire it")
            retired = keys.retire(session, args.key, actor, lead=lead)
            other = keys.held_signer(session, actor)
            head = audit.sign_head(session, other) if other is not None else None
        keys.remember_head(project.url, head)
        print(f"retired {retired.reviewer}'s key {retired.fingerprint}: it signs nothing more")
        return 0
    with project.sessions() as session:
        found = registered_keys(session)
    if args.json:
        print(json.dumps([_key_dict(k, here) for k in found], ensure_ascii=False))
        return 0
    if not found:
        print("no signing keys in this project yet: the first sign-off makes one (or `assay keys create`)")
    for k in found:
        state = f"retired {k.retired_at:%Y-%m-%d}" if k.retired_at else "active"
        print(
            f"{k.fingerprint}  {k.reviewer}  {k.algorithm}  {k.created_at:%Y-%m-%d %H:%M}  {state}"
            + ("  (on this computer)" if k.fingerprint in here else "")
        )
    return 0


COMMANDS = {"keys": _keys}

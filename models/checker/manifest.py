"""What ships of the claim checker, in one manifest: resources/claim_checker/manifest.json pins the SHA-256
of every artefact (the words-only checker's model.json and the encoder files in encoder/), by its path
there. Training writes it (`pin`); Assay checks each file against it before loading it (`checked`), so a
missing or altered file is refused with one sentence naming it. The held-out figures stay, as structured
entries, in the artefacts that were measured (model.json, encoder/contract_checker.json), and the whole
engine's in engine_held_out.json (bench/engine_card.py), which names the artefacts it was measured with
(`artefacts_sha256`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

RESOURCES = Path(__file__).resolve().parent.parent.parent / "resources" / "claim_checker"
MANIFEST = RESOURCES / "manifest.json"
REINSTALL = "reinstall Assay with `make install`"
ENGINE_CARD = "engine_held_out.json"  # pinned like the rest, but what it measured is everything else


class ArtefactUnavailable(Exception):
    """A shipped file is missing or altered: one sentence naming it and how to reinstall."""


def pinned() -> dict[str, str]:
    """Each artefact's path (under resources/claim_checker) and SHA-256."""
    try:
        return dict(json.loads(MANIFEST.read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArtefactUnavailable(f"{MANIFEST} is missing or unreadable: {REINSTALL}") from exc


def checked(relative: str, error: type[ArtefactUnavailable] = ArtefactUnavailable) -> bytes:
    """The bytes of resources/claim_checker/<relative>, refused unless the manifest pins exactly them."""
    path = RESOURCES / relative
    if not path.exists():
        raise error(f"{path} is missing: {REINSTALL}")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != pinned().get(relative):
        raise error(f"{path} is altered (its SHA-256 differs from {MANIFEST.name}): {REINSTALL}")
    return data


def artefacts_sha256(path: Path | None = None) -> str:
    """The SHA-256 of the manifest (`path`, else the shipped one) as pin writes it, without the engine card's
    own line: the artefacts the engine card's figures were measured with. Pinning the card after it is
    written changes the manifest, not what decides a verdict; before it is pinned this is the manifest
    file's own SHA-256."""
    path = path or MANIFEST
    try:
        manifest = json.loads(path.read_text())
        manifest["files"].pop(ENGINE_CARD, None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ArtefactUnavailable(f"{path} is missing or unreadable: {REINSTALL}") from exc
    return hashlib.sha256(_text(manifest).encode()).hexdigest()


def _text(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def pin(*paths: Path, seed: int | None = None) -> None:
    """Write these files' SHA-256 into the manifest (training, after writing them)."""
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {"files": {}}
    for path in paths:
        relative = path.resolve().relative_to(RESOURCES).as_posix()
        manifest["files"][relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    if seed is not None:
        manifest["seed"] = seed
    MANIFEST.write_text(_text(manifest))

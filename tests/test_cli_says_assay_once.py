"""The command line says "assay:" once before a refusal: `assay keys export` without a fingerprint
printed "assay: assay keys: export: …" (issue 66)."""

from __future__ import annotations

import pytest

from app.project import Project

from .key_helpers import cli
from .key_helpers import key_folder as key_folder  # autouse: a key folder of each test's own


@pytest.mark.parametrize("action", ["export", "retire"])
def test_keys_without_a_fingerprint_says_assay_once(
    action: str, capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    status, said = cli(capsys, sample_project, "keys", action)
    assert status != 0
    assert said.startswith(f"assay: keys: {action}: give the key's fingerprint"), said
    assert "assay: assay" not in said

"""Shared fixtures: a fresh project file, and the bundled sample dataset imported once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from storage.db import url_for_path


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.open(url_for_path(tmp_path / "project.assay"))


@pytest.fixture(scope="session")
def _sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sample") / "sample.assay"
    project = Project.open(url_for_path(path))
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()  # the copies below must hold everything, write-ahead log included
    return path


@pytest.fixture
def sample_project(_sample_file: Path, tmp_path: Path) -> Project:
    """The sample dataset imported into a project of this test's own."""
    path = tmp_path / "sample.assay"
    shutil.copy(_sample_file, path)
    return Project.open(url_for_path(path))


@pytest.fixture
def dataset_copy(tmp_path: Path) -> Path:
    """A writable copy of the sample dataset folder, to break on purpose."""
    target = tmp_path / "dataset"
    shutil.copytree(SAMPLE_DATASET, target)
    for path in target.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    return target

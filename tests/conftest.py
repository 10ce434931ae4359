"""Shared fixtures: a fresh project, and the bundled sample dataset imported once.

Modules marked `every_store` run each test on a SQLite file and on a real PostgreSQL server
(`make test` starts one and names it in ASSAY_TEST_POSTGRES; without it those runs are skipped).
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from storage.db import url_for_path

POSTGRES = os.environ.get("ASSAY_TEST_POSTGRES")


def _own_folder(variable: str, prefix: str) -> None:
    """Point `variable` at a new temporary folder, removed when the test run ends."""
    folder = tempfile.mkdtemp(prefix=prefix)
    os.environ[variable] = folder
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


# Tests (and the processes they start) keep their settings away from the user's own.
_own_folder("ASSAY_CONFIG_DIR", "assay-test-settings-")
_own_folder("ASSAY_BACKUP_DIR", "assay-test-backups-")  # and their backups
_own_folder("ASSAY_JUDGE_STATE_DIR", "assay-test-judge-state-")  # and what judges read
_own_folder("ASSAY_MODELS_DIR", "assay-test-models-")  # and the models Assay installs
# Reviewers' signing keys: a folder of the tests' own, no OS keyring (a headless machine's case), a passphrase.
_own_folder("ASSAY_KEY_DIR", "assay-test-keys-")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
os.environ.setdefault("ASSAY_KEY_PASSPHRASE", "test passphrase")
_database_numbers = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "every_store: run on SQLite and on PostgreSQL")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" in metafunc.fixturenames:
        stores = ["sqlite", "postgresql"] if metafunc.definition.get_closest_marker("every_store") else ["sqlite"]
        metafunc.parametrize("store", stores, indirect=True)


@pytest.fixture
def store(request: pytest.FixtureRequest) -> str:
    if request.param == "postgresql" and not POSTGRES:
        pytest.skip("no PostgreSQL server: run through `make test`, or set ASSAY_TEST_POSTGRES")
    return request.param


def _postgres_admin():
    return create_engine(POSTGRES, isolation_level="AUTOCOMMIT")


def _new_postgres_database(template: str | None = None) -> str:
    name = f"assay_test_{os.getpid()}_{next(_database_numbers)}"
    admin = _postgres_admin()
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    admin.dispose()
    return POSTGRES.replace("/postgres?", f"/{name}?")


@pytest.fixture
def new_project_url(store: str, tmp_path: Path) -> Callable[[str], str]:
    """A URL for an empty project of this test's store, one per name."""

    def make(name: str) -> str:
        return _new_postgres_database() if store == "postgresql" else url_for_path(tmp_path / f"{name}.assay")

    return make


@pytest.fixture
def project(new_project_url: Callable[[str], str]) -> Iterator[Project]:
    opened = Project.open(new_project_url("project"))
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def _sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sample") / "sample.assay"
    project = Project.open(url_for_path(path))
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()  # the copies below must hold everything, write-ahead log included
    return path


@pytest.fixture(scope="session")
def _sample_postgres_template() -> str:
    url = _new_postgres_database()
    project = Project.open(url)
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()  # a template database must have no connections
    return url.split("?")[0].rsplit("/", 1)[1]


@pytest.fixture
def sample_project(store: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Project]:
    """The sample dataset imported into a project of this test's own."""
    if store == "postgresql":
        url = _new_postgres_database(template=request.getfixturevalue("_sample_postgres_template"))
    else:
        path = tmp_path / "sample.assay"
        shutil.copy(request.getfixturevalue("_sample_file"), path)
        url = url_for_path(path)
    opened = Project.open(url)
    yield opened
    opened.close()


@pytest.fixture
def dataset_copy(tmp_path: Path) -> Path:
    """A writable copy of the sample dataset folder, to break on purpose."""
    target = tmp_path / "dataset"
    shutil.copytree(SAMPLE_DATASET, target)
    for path in target.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    return target

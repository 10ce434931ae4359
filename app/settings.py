"""What Assay remembers between runs: recent projects, reviewer name, judge model, triage thresholds.

One JSON file in the user's configuration folder, carrying its schema version. An older file is
migrated step by step on load; a file that cannot be read is set aside (never deleted) and the
defaults are used, so a damaged settings file can never stop the application from starting.
Writes go to a temporary file first and replace the old one in one step.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app import limits
from app.errors import InvalidInput

SETTINGS_VERSION = 2
MAX_RECENT = 10
CONFIG_DIR_ENV = "ASSAY_CONFIG_DIR"  # tests and portable installs point it elsewhere


@dataclass
class ModelChoice:
    """Which judge model the user picked: the embedded one, a GGUF file, or an API endpoint."""

    kind: str = "embedded"  # embedded | gguf | openai | anthropic
    model: str | None = None  # GGUF path, or the API's model name
    base_url: str | None = None
    gpu_layers: int | None = None  # None: all layers when the build can offload


@dataclass
class Settings:
    version: int = SETTINGS_VERSION
    recent_projects: list[str] = field(default_factory=list)
    reviewer: str | None = None
    model: ModelChoice = field(default_factory=ModelChoice)
    min_correctness: float = 1.0  # LeMAJ's triage rule: cleared when both thresholds are met
    min_relevance: float = 0.8
    backup_folder: str | None = None  # None: "backups" in the user data folder
    backup_minutes: float = 15  # while a project is open, a backup this often if anything changed
    model_folders: list[str] = field(default_factory=list)  # where else to look for GGUF models
    model_servers: list[str] = field(default_factory=list)  # model servers on the network, added by URL
    export_format: str | None = None  # the last export's format and folder: the export dialog's first choice
    export_folder: str | None = None
    last_answers: dict[str, str] = field(default_factory=dict)  # where each reviewer was (app/review/last_answer.py)

    def remember_project(self, path: str | Path) -> None:
        path = str(Path(path).expanduser().resolve())
        self.recent_projects = [path, *(p for p in self.recent_projects if p != path)][:MAX_RECENT]


def settings_path() -> Path:
    if folder := os.environ.get(CONFIG_DIR_ENV):
        return Path(folder) / "settings.json"
    from platformdirs import user_config_path

    return user_config_path("Assay", appauthor=False) / "settings.json"


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 kept the model as a flat path and one 'threshold' for relevance."""
    data = dict(data)
    path = data.pop("model_path", None)
    data["model"] = {"kind": "gguf", "model": path} if path else {}
    if "threshold" in data:
        data["min_relevance"] = data.pop("threshold")
    data["version"] = 2
    return data


MIGRATIONS = {1: _from_v1}  # version -> the step that brings it to version + 1


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    version = data.get("version", 1)
    if version > SETTINGS_VERSION:
        raise ValueError(f"settings version {version} is newer than this Assay ({SETTINGS_VERSION})")
    while version < SETTINGS_VERSION:
        data = MIGRATIONS[version](data)
        version = data["version"]
    return data


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}  # keys of a newer minor release are ignored


def load_settings(path: Path | None = None) -> Settings:
    path = path or settings_path()
    if not path.exists():
        return Settings()
    try:
        data = migrate(json.loads(limits.read_bounded(path, limits.SETTINGS, "the settings file")))
        model = ModelChoice(**_known(ModelChoice, data.get("model") or {}))
        return Settings(**{**_known(Settings, data), "model": model, "version": SETTINGS_VERSION})
    except (InvalidInput, OSError, ValueError, TypeError, AttributeError) as exc:
        aside = path.with_suffix(".unreadable.json")
        path.replace(aside)
        print(f"assay: the settings file could not be read ({exc}); kept as {aside}, using defaults")
        return Settings()


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as handle:
        json.dump(asdict(settings), handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    Path(handle.name).replace(path)
    return path

"""Settings survive restarts, old files are migrated, a damaged file never stops the app."""

from __future__ import annotations

import json
from pathlib import Path

from app.settings import MAX_RECENT, SETTINGS_VERSION, ModelChoice, Settings, load_settings, save_settings


def test_settings_round_trip_and_recent_projects_stay_unique_newest_first(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = Settings(reviewer="ana", model=ModelChoice("gguf", "/models/qwen.gguf", gpu_layers=20))
    for i in range(MAX_RECENT + 3):
        settings.remember_project(tmp_path / f"p{i}.assay")
    settings.remember_project(tmp_path / "p5.assay")
    save_settings(settings, path)
    loaded = load_settings(path)
    assert loaded == settings
    assert loaded.recent_projects[0].endswith("p5.assay") and len(loaded.recent_projects) == MAX_RECENT
    assert len(set(loaded.recent_projects)) == MAX_RECENT


def test_a_first_version_settings_file_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "reviewer": "ben", "model_path": "/m.gguf", "threshold": 0.7}))
    loaded = load_settings(path)
    assert (loaded.reviewer, loaded.model.kind, loaded.model.model, loaded.min_relevance) == (
        "ben",
        "gguf",
        "/m.gguf",
        0.7,
    )
    save_settings(loaded, path)
    assert json.loads(path.read_text())["version"] == SETTINGS_VERSION


def test_a_damaged_or_newer_settings_file_is_set_aside_not_lost(tmp_path: Path, capsys) -> None:
    for content in ("{not json", json.dumps({"version": SETTINGS_VERSION + 1, "reviewer": "future"})):
        path = tmp_path / "settings.json"
        path.write_text(content)
        assert load_settings(path) == Settings()
        assert (tmp_path / "settings.unreadable.json").read_text() == content
        assert "using defaults" in capsys.readouterr().out

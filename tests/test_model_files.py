"""The user's own GGUF model: what the file says it is, whether it fits, and the models used before."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import main
from app.errors import InvalidInput
from app.judging.model_files import check_fit, describe, read_model_info, recent_models
from app.project import Project
from models.backends.llama_local import embedded_model_path, gpu_offload_supported

NDA = "DoiT-ICN-NonDisclosure-Agreement.txt"


@pytest.fixture(scope="module")
def smollm2_info():
    return read_model_info(embedded_model_path())


def test_gguf_metadata_names_the_model_its_quantisation_context_and_template(smollm2_info) -> None:
    assert smollm2_info.architecture == "llama" and smollm2_info.name.lower().startswith("smollm2 135m")
    assert (smollm2_info.quantisation, smollm2_info.context_length, smollm2_info.layers) == ("Q4_1", 8192, 30)
    assert smollm2_info.chat_template == "ChatML"
    line = describe(smollm2_info)
    assert "Q4_1" in line and "context 8,192 tokens" in line and "chat template: ChatML" in line
    # Read once: the header (seconds for a large tokenizer) is kept beside the settings.
    cache = json.loads((Path(os.environ["ASSAY_CONFIG_DIR"]) / "models.json").read_text())
    assert any(entry["quantisation"] == "Q4_1" for entry in cache["info"].values())


def test_a_file_that_is_not_gguf_is_named(tmp_path: Path) -> None:
    fake = tmp_path / "weights.gguf"
    fake.write_bytes(b"PK\x03\x04 this is a zip file")
    with pytest.raises(InvalidInput, match=r"weights\.gguf: not a GGUF model file"):
        read_model_info(fake)


def test_memory_estimate_for_the_embedded_model_matches_what_was_measured(smollm2_info) -> None:
    fit = check_fit(smollm2_info, 8192)
    # notes/llama_cpp.md measured 0.45-0.55 GB for this model with a 4-6k-token context.
    assert 0.35 * 2**30 < fit.needed_bytes < 0.6 * 2**30
    assert fit.fits and "fits" in fit.sentence()
    huge = check_fit(replace(smollm2_info, size_bytes=fit.ram_free_bytes * 4), 8192)
    assert not huge.fits and "does not fit" in huge.sentence()


def test_judge_refuses_a_model_too_big_for_this_computer_before_loading_it(
    sample_project: Project, tmp_path: Path, capsys
) -> None:
    big = tmp_path / "big-model.gguf"
    shutil.copyfile(embedded_model_path(), big)
    os.truncate(big, 2**42)  # a 4 TB file (sparse): the real header, far more weights than any laptop holds
    path = sample_project.url.removeprefix("sqlite:///")
    [answer] = [a.id for a in sample_project.answers() if a.document == NDA][:1]
    sample_project.close()
    assert main(["--project", path, "judge", "--model", str(big), "--answers", answer]) == 2
    err = capsys.readouterr().err
    assert re.search(r"big-model\.gguf: needs about 4\d{3}\.\d GB; [\d.]+ GB of memory free.* does not fit", err)


def test_models_lists_the_models_used_with_their_last_measured_speed(tmp_path: Path, capsys) -> None:
    dataset = tmp_path / "set"
    (dataset / "documents").mkdir(parents=True)
    (dataset / "documents" / "lease.txt").write_text(
        "1. Rent. The tenant pays 900 euros on the first day of each month.\n"
    )
    row = {"id": "a1", "document": "lease.txt", "question": "When is rent due?", "answer": "On the first day (1)."}
    (dataset / "qa.jsonl").write_text(json.dumps(row) + "\n")
    project = ["--project", str(tmp_path / "p.assay")]
    assert main([*project, "import", str(dataset)]) == 0
    model = str(embedded_model_path())
    assert main([*project, "judge", "--model", model, "--context", "2048", "--no-missing"]) == 0
    # The run says where it runs: this build's device and how many layers went to a GPU.
    where = "layers offloaded to the GPU" if gpu_offload_supported() else "runs on the processor (CPU): no layers"
    assert f"judge: {Path(model).name} " in (err := capsys.readouterr().err) and where in err
    assert main([*project, "models", "--json"]) == 0
    [listed] = [m for m in json.loads(capsys.readouterr().out) if m["path"] == str(Path(model).resolve())]
    assert listed["tokens_per_second"] > 0 and "Q4_1" in listed["about"]
    assert recent_models()[0]["path"] == listed["path"]  # most recent first
    assert main([*project, "models"]) == 0
    assert "tokens/s (judge run of" in capsys.readouterr().out


def test_picker_takes_a_dropped_gguf_and_shows_what_it_is_and_whether_it_fits(qtbot) -> None:
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    from app.judging.model_files import remember_model
    from ui.model_picker import ModelPicker

    model = embedded_model_path()
    remember_model(model)
    read_model_info(model)
    picker = ModelPicker()
    qtbot.addWidget(picker)
    # Used before, and suggested by whether it fits the memory free now.
    assert picker.recent.isVisibleTo(picker) and picker.recent.findText(f"{model.name} — fits") > 0
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(model))])
    drop = QDropEvent(
        QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    picker.dropEvent(drop)
    assert picker.kind == "gguf" and picker.model.text() == str(model)
    qtbot.waitUntil(lambda: "Memory:" in picker.about.text(), timeout=60_000)
    assert "Q4_1" in picker.about.text() and "chat template: ChatML" in picker.about.text()
    assert "— fits" in picker.about.text()

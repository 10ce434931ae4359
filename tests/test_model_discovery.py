"""Models already on the computer (Ollama's and LM Studio's real folder layouts in a temporary home, the
embedded GGUF as their file), servers running on it (a real llama_cpp.server; servers that answer
garbage or hang), and "Check this model" on the embedded model."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import main
from app.errors import InvalidInput
from app.judging import model_discovery
from app.judging.model_discovery import detect_servers, find_models, resolve_model
from app.project import Project
from models.backends.llama_local import embedded_model_path

from .judge_helpers import free_port, llama_cpp_server

OLLAMA_NAME = "smollm2:135m"
LM_STUDIO_NAME = "bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_1.gguf"


def _link(target: Path, link: Path) -> None:
    """The model file where a program would keep it: a hard link as Ollama's blobs are files, else a symlink."""
    link.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(target, link)
    except OSError:  # another file system
        link.symlink_to(target)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with Ollama's store (a manifest naming the blob) and LM Studio's models folder."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ASSAY_CONFIG_DIR", str(tmp_path / "config"))
    for name in ("OLLAMA_MODELS", "HF_HOME", "HF_HUB_CACHE", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(model_discovery, "ollama_roots", lambda: [home / ".ollama" / "models"])  # not /usr/share
    model = embedded_model_path()
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    store = home / ".ollama" / "models"
    _link(model, store / "blobs" / f"sha256-{digest}")
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:00", "size": 2},
        "layers": [
            {
                "mediaType": "application/vnd.ollama.image.model",
                "digest": f"sha256:{digest}",
                "size": model.stat().st_size,
            },
            {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:11", "size": 40},
        ],
    }
    tags = store / "manifests" / "registry.ollama.ai" / "library" / "smollm2"
    tags.mkdir(parents=True)
    (tags / "135m").write_text(json.dumps(manifest))
    adapter = store / "manifests" / "registry.ollama.ai" / "library" / "lora-only"
    adapter.mkdir(parents=True)  # a manifest with no model layer: not a model
    (adapter / "latest").write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.adapter"}]}))
    lm_studio = home / ".lmstudio" / "models" / "bartowski" / "SmolLM2-135M-Instruct-GGUF"
    _link(model, lm_studio / "SmolLM2-135M-Instruct-Q4_1.gguf")
    (lm_studio / "mmproj-SmolLM2-f16.gguf").write_bytes(b"GGUF")  # a vision adapter beside it: not a model
    return home


def test_ollama_and_lm_studio_models_are_found_by_name_with_what_they_are(home: Path) -> None:
    found = {m.name: m for m in find_models()}
    assert set(found) == {OLLAMA_NAME, LM_STUDIO_NAME}
    ollama, lm_studio = found[OLLAMA_NAME], found[LM_STUDIO_NAME]
    assert ollama.source == "Ollama" and Path(ollama.path).parent.name == "blobs"
    assert lm_studio.source == "LM Studio"
    for model in (ollama, lm_studio):
        assert (model.quantisation, model.context_length, model.fits) == ("Q4_1", 8192, True)
        assert model.size_bytes == embedded_model_path().stat().st_size
    assert ollama.line().startswith("smollm2:135m · Ollama · ") and "Q4_1 · context 8,192 · fits" in ollama.line()
    assert resolve_model("ollama:smollm2:135m") == ollama.path  # what `assay judge --model` takes
    with pytest.raises(InvalidInput, match="no Ollama model named 'llama3:latest': Ollama has smollm2:135m"):
        resolve_model("ollama:llama3")
    cache = json.loads((home.parent / "config" / "found_models.json").read_text())
    assert set(cache["files"]) == {ollama.path, lm_studio.path}  # what each file is, kept by size and time


def test_a_folder_the_user_adds_is_looked_through_and_remembered(home: Path, tmp_path: Path, capsys) -> None:
    mine = tmp_path / "my models" / "judges"
    _link(embedded_model_path(), mine / "contracts-judge.gguf")
    project = str(tmp_path / "p.assay")
    assert main(["--project", project, "init"]) == 0  # only init and import make a project
    capsys.readouterr()
    assert main(["--project", project, "models", "--add-folder", str(tmp_path / "my models"), "--found", "--json"]) == 0
    found = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert found["judges/contracts-judge.gguf"]["source"] == str(tmp_path / "my models")
    assert found[OLLAMA_NAME]["judge_with"] == "ollama:smollm2:135m"
    assert main(["--project", project, "models", "--found"]) == 0  # remembered: no --add-folder this time
    assert "contracts-judge.gguf" in capsys.readouterr().out
    assert main(["--project", project, "models", "--add-folder", str(tmp_path / "nowhere")]) == 2
    assert "nowhere: not a folder" in capsys.readouterr().err


def _short_answer(project: Project) -> str:
    """A short answer about one of the sample's shortest contracts: judged in seconds."""
    return "cnli-0488-nda-10"


def test_judge_with_an_ollama_model_by_its_name(home: Path, sample_project: Project, capsys) -> None:
    answer = _short_answer(sample_project)
    path = sample_project.url.removeprefix("sqlite:///")
    args = ["--project", path, "judge", "--model", "ollama:smollm2:135m", "--answers", answer, "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rater"] == "judge:smollm2:135m:two-stage:standard" and summary["judged"] == 1
    assert sample_project.data_points(answer)["judge:smollm2:135m:two-stage:standard"]
    assert main([*args[:4], "ollama:mistral:7b", *args[5:]]) == 2
    assert "no Ollama model named 'mistral:7b'" in capsys.readouterr().err


def test_looking_through_hundreds_of_unchanged_files_takes_under_a_second(home: Path) -> None:
    import gguf

    folder = home / ".lmstudio" / "models" / "many" / "quantised"
    folder.mkdir(parents=True)
    for i in range(300):
        writer = gguf.GGUFWriter(folder / f"m{i:03}.gguf", "llama")
        writer.add_context_length(4096)
        writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.close()
    assert len(find_models()) == 302  # the first look reads each header
    started = time.perf_counter()
    again = find_models()
    assert time.perf_counter() - started < 1.0 and len(again) == 302
    assert {m.quantisation for m in again if m.source == "LM Studio"} >= {"Q4_0"}


# ---------------------------------------------------------------- servers


@contextmanager
def bad_server(kind: str) -> Iterator[int]:
    """A socket server on loopback that accepts and then answers garbage, or never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(connection)
            if kind == "garbage":
                connection.sendall(b"\x00\xffSSH-2.0-not a web server\r\n\r\n")
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in held:
            connection.close()
        listener.close()


def test_a_server_that_answers_garbage_or_hangs_ends_in_a_clear_line_within_two_seconds() -> None:
    with bad_server("garbage") as garbage, bad_server("hang") as hang:
        started = time.perf_counter()
        found = detect_servers(ports={garbage: "llama-server", hang: "vLLM", free_port(): "Ollama"})
        took = time.perf_counter() - started
    assert took < 2.0
    lines = sorted(server.line() for server in found)  # the port nobody listens on is left out
    assert lines == [
        f"llama-server at 127.0.0.1:{garbage}: answered, but not in HTTP: no model server listens there",
        f"vLLM at 127.0.0.1:{hang}: did not answer within 1.5 s",
    ]


def test_a_real_server_on_this_computer_is_found_and_judged_through_with_no_url_typed(
    qtbot, monkeypatch: pytest.MonkeyPatch, sample_project: Project, tmp_path: Path
) -> None:
    from app.judging.runs import make_backend, run_judge
    from ui.judge_dialog import JudgeDialog

    monkeypatch.setenv("ASSAY_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(model_discovery, "find_models", lambda _folders=(): [])  # only the server matters here
    answer = _short_answer(sample_project)
    with llama_cpp_server(str(embedded_model_path()), alias="smollm2") as base_url:
        port = int(base_url.rsplit(":", 1)[1].split("/")[0])
        monkeypatch.setattr(model_discovery, "USUAL_PORTS", {port: "llama-server"})
        dialog = JudgeDialog(selected_answer=answer)
        qtbot.addWidget(dialog)
        found = dialog.picker.found
        qtbot.waitUntil(lambda: found.list.count() == 1, timeout=5000)
        item = found.list.item(0)
        assert item.text() == f"smollm2 — llama-server at 127.0.0.1:{port} (this computer)"
        found.list.itemClicked.emit(item)  # one click
        picker = dialog.picker
        assert picker.choice().base_url == base_url and picker.choice().model == "smollm2"
        assert "A server on this computer" in picker.where.text() and not picker.allow.isHidden()
        assert not dialog.run_button.isEnabled()  # asked for like any server: a local port can forward anywhere
        picker.allow.setChecked(True)
        assert dialog.run_button.isEnabled()
        settings = dialog.settings()
        assert settings.allow_network
        backend = make_backend(replace(settings, structured="json_object"))  # what llama_cpp.server supports
        try:
            summary = run_judge(sample_project.sessions, settings.judge(backend), "served", answer_ids=[answer])
        finally:
            backend.close()
    assert summary.judged == 1 and sample_project.data_points(answer)["served"]


def test_the_picker_stays_responsive_while_servers_are_asked(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from ui.model_picker import ModelPicker

    monkeypatch.setenv("ASSAY_CONFIG_DIR", str(tmp_path / "config"))
    with bad_server("hang") as hang, bad_server("garbage") as garbage:
        monkeypatch.setattr(model_discovery, "USUAL_PORTS", {hang: "Ollama", garbage: "LM Studio"})
        started = time.perf_counter()
        picker = ModelPicker()
        qtbot.addWidget(picker)
        assert time.perf_counter() - started < 0.5  # the window opens at once: the asking is on a pool thread
        picker.kind_box.setCurrentIndex(1)  # the user works meanwhile
        assert picker.kind == "gguf" and "Looking" in picker.found.status.text()
        with qtbot.waitSignal(picker.found.looked, timeout=2500):
            pass
    texts = [picker.found.list.item(i).text() for i in range(picker.found.list.count())]
    assert f"Ollama at 127.0.0.1:{hang}: did not answer within 1.5 s" in texts
    assert any(f"LM Studio at 127.0.0.1:{garbage}: answered, but not in HTTP" in t for t in texts)
    assert (
        picker.found.status.text() == "0 model files · 0 servers running · 2 servers not usable · click one to use it"
    )

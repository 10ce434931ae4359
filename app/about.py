"""What this installation is made of, for the About box and for support: versions, GPU, the model."""

from __future__ import annotations

import platform
import sqlite3
from importlib import metadata
from pathlib import Path

from app.errors import JudgeUnavailable
from app.settings import ModelChoice


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:  # a frozen build may leave metadata out
        return "unknown"


def gpu_offload() -> str:
    """Whether this llama.cpp build can offload layers to a GPU, in words a user can act on."""
    from models.backends.llama_local import gpu_offload_supported

    if gpu_offload_supported():
        return (
            "available: a local model's layers go to the graphics card (every layer that fits, or the number "
            "set below); the run names the device and counts the layers offloaded"
        )
    return (
        "not in this installation: a local model runs on the processor (fine for small models, slow for large "
        "ones); an installation built for your graphics card runs large models faster: ask whoever installed Assay"
    )


def describe_model(choice: ModelChoice) -> str:
    if choice.kind == "embedded":
        from models.backends.llama_local import EMBEDDED_MODEL_FILE, embedded_model_path

        try:
            size = embedded_model_path().stat().st_size / 2**20
        except JudgeUnavailable:  # the model package is missing: say so in the About box
            return f"{EMBEDDED_MODEL_FILE} (embedded; not installed)"
        return f"{EMBEDDED_MODEL_FILE} (embedded, {size:.0f} MiB)"
    if choice.kind == "gguf":
        path = Path(choice.model or "")
        found = f"{path.stat().st_size / 2**20:.0f} MiB" if path.is_file() else "file not found"
        return f"{path.name} ({found})"
    return f"{choice.model or '(no model named)'} at {choice.base_url or 'the provider'}"


def versions(choice: ModelChoice) -> list[tuple[str, str]]:
    import llama_cpp

    return [
        ("Assay", _version("assay")),
        ("llama-cpp-python", llama_cpp.__version__),
        ("llama.cpp system", llama_cpp.llama_print_system_info().decode(errors="replace").strip()),
        ("GPU offload", gpu_offload()),
        ("Judge model", describe_model(choice)),
        ("Python", platform.python_version()),
        ("SQLite", sqlite3.sqlite_version),
        ("System", f"{platform.system()} {platform.release()} ({platform.machine()})"),
    ]

"""Which device runs a llama.cpp model, and how many of its layers were offloaded there.

llama-cpp-python exposes no device API, but llama.cpp says both while it loads a model
("using device Vulkan0 (llvmpipe …) - 7950 MiB free", "layer 3 assigned to device Vulkan0",
"offloaded 31/31 layers to GPU"); its log is captured for the duration of the load.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_LOCK = threading.Lock()  # llama.cpp has one log callback for the whole process


@dataclass(frozen=True)
class Offload:
    device: str  # "Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits))", or "CPU"
    layers: int  # offloaded to the GPU
    total: int  # the model's layers (llama.cpp counts the output layer too)

    def sentence(self) -> str:
        if self.layers == 0:
            return "runs on the processor (CPU): no layers offloaded to a GPU"
        return f"runs on {self.device}: {self.layers}/{self.total} layers offloaded to the GPU"


@contextmanager
def captured_load_log() -> Iterator[list[str]]:
    """Collect what llama.cpp logs inside the block (with llama-cpp-python's own logging restored after)."""
    import llama_cpp
    from llama_cpp import _logger

    lines: list[str] = []

    @llama_cpp.llama_log_callback
    def collect(_level: int, text: bytes, _user: ctypes.c_void_p) -> None:
        lines.append(text.decode("utf-8", errors="replace"))

    with _LOCK:
        llama_cpp.llama_log_set(collect, ctypes.c_void_p(0))
        try:
            yield lines
        finally:
            llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


def parse_offload(log: str) -> Offload:
    """The device and offloaded layers a load log reports."""
    devices = re.findall(r"using device (\S+) \((.*)\) - \d+ MiB free", log)
    assigned = re.findall(r"layer\s+\d+ assigned to device (\S+?),", log)
    summary = re.search(r"offloaded (\d+)/(\d+) layers to GPU", log)
    if summary:
        layers, total = int(summary.group(1)), int(summary.group(2))
    else:
        layers, total = sum(d != "CPU" for d in assigned), len(assigned)
    gpu = next((f"{name} ({what.removesuffix(') (unknown id')})" for name, what in devices), None)
    if gpu is None:
        gpu = next((d for d in assigned if d != "CPU"), "CPU")
    return Offload(gpu if layers else "CPU", layers, total)

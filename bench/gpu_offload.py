"""GPU offload, proved without a GPU: the same short judge run on the CPU build and on a Vulkan build
with every layer offloaded (through lavapipe, Mesa's Vulkan driver that runs on the processor, as
llama.cpp's own CI does), side by side; the tags must be equal (greedy, seed 0).

    # once, ~25-50 min on 2 busy cores: a Vulkan build of llama-cpp-python in its own folder
    CMAKE_ARGS="-DGGML_VULKAN=on -DVulkan_INCLUDE_DIR=/path/to/vulkan-1.4/include" \\
        nice -n 19 .venv/bin/pip install --no-binary llama-cpp-python --no-deps \\
        --target /work/vk-llama llama-cpp-python==0.3.36
    .venv/bin/python bench/gpu_offload.py --vulkan /work/vk-llama

Prints, per build: the device llama.cpp reports, the layers offloaded, the judge's tokens/s, the
wall time, and whether the tags equal the CPU build's. Lavapipe proves the offload code path, not
speed: expect it to be far slower than the CPU build. CUDA and Metal cannot be run here.

Measured 2026-11-23 on the shared 2-core machine (load ~10), llama-cpp-python 0.3.36, SmolLM2-135M Q4_1:
    cpu                  22.0 tokens/s   25.8 s  tags = CPU's  runs on the processor (CPU)
    vulkan (lavapipe)     1.0 tokens/s  370.0 s  yes           Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)):
                                                               31/31 layers offloaded to the GPU
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATASET = Path("/work/shared/datasets/legalbench_rag_qa")
CONTRACT = "DoiT-ICN-NonDisclosure-Agreement.txt"
ANSWER = "No. The agreement grants no license under any patent or copyright (Section 2)."


def excerpt() -> str:
    """Clause 2 of a real NDA (LegalBench-RAG), about 110 words: a short prompt for a slow device."""
    text = (DATASET / "documents" / CONTRACT).read_text()
    return text[text.index("\n2.") + 1 : text.index("\n3.")].strip()


def assay(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from app.cli import main; raise SystemExit(main())", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=REPO)


def judge_with(build: str, pythonpath: str, gpu_layers: int, dataset: Path, folder: Path) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": pythonpath,
        "GGML_VK_VISIBLE_DEVICES": "0",  # llama.cpp skips CPU-type Vulkan devices unless named
        "ASSAY_CONFIG_DIR": str(folder / "config"),
    }
    project = ["--project", str(folder / f"{build}.assay")]
    assert assay(env, *project, "import", str(dataset)).returncode == 0
    start = time.perf_counter()
    run = assay(env, *project, "judge", "--context", "2048", "--no-missing", "--gpu-layers", str(gpu_layers))
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{build}: the judge failed: {run.stderr[-800:]}")
    shown = json.loads(assay(env, *project, "show", "nda-2", "--json").stdout)
    [points] = shown["raters"].values()
    where = re.search(r"judge: \S+ (.*)", run.stderr)
    speeds = re.findall(r"([\d.]+) tok/s", run.stderr)
    return {
        "build": build,
        "device": where.group(1) if where else "?",
        "tokens_per_second": float(speeds[-1]) if speeds else 0.0,
        "seconds": seconds,
        "tags": [(p["text"], p["tag"]) for p in points],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vulkan", type=Path, required=True, help="folder holding the Vulkan build of llama_cpp")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-gpu-") as tmp:
        folder = Path(tmp)
        dataset = folder / "set"
        (dataset / "documents").mkdir(parents=True)
        (dataset / "documents" / "nda-clause-2.txt").write_text(excerpt() + "\n")
        rows = [json.loads(line) for line in (DATASET / "qa.jsonl").read_text().splitlines()]
        question = next(r["question"] for r in rows if r["id"] == "contractnli-028")
        row = {"id": "nda-2", "document": "nda-clause-2.txt", "question": question, "answer": ANSWER}
        (dataset / "qa.jsonl").write_text(json.dumps(row) + "\n")
        cpu = judge_with("cpu", str(REPO), 0, dataset, folder)
        vulkan = judge_with("vulkan (lavapipe)", f"{args.vulkan}{os.pathsep}{REPO}", -1, dataset, folder)
    print(f"one answer ({len(ANSWER)} chars) over clause 2 of {CONTRACT} ({len(excerpt().split())} words)")
    print(f"{'build':18} {'tokens/s':>9} {'seconds':>8}  tags = CPU's  device")
    for result in (cpu, vulkan):
        same = "yes" if result["tags"] == cpu["tags"] else "NO"
        speed = f"{result['tokens_per_second']:9.1f} {result['seconds']:8.1f}"
        print(f"{result['build']:18} {speed}  {same:11}  {result['device']}")
    print("tags:", cpu["tags"])
    if vulkan["tags"] != cpu["tags"]:
        print("vulkan tags:", vulkan["tags"])
        raise SystemExit(1)


if __name__ == "__main__":
    main()

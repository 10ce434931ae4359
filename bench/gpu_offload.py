"""GPU offload: the same short judge run on the CPU build and on a GPU build with every layer offloaded,
side by side; the tags must be equal (greedy, seed 0). Also plain decode speed (128 tokens) per build.

    # a GPU build in its own folder (or installed by `make run GPU=cuda`: leave out --gpu-build)
    CMAKE_ARGS="-DGGML_VULKAN=on -DVulkan_INCLUDE_DIR=/path/to/vulkan-1.4/include" \\
        nice -n 19 .venv/bin/pip install --no-binary llama-cpp-python --no-deps \\
        --target /work/vk-llama llama-cpp-python==0.3.36
    .venv/bin/python bench/gpu_offload.py --gpu-build /work/vk-llama
    .venv/bin/python bench/gpu_offload.py --cpu-build /path/cpu-llama --name cuda   # CUDA installed

Prints, per build: the device llama.cpp reports, the layers offloaded, the judge's tokens/s, the
wall time, decode tokens/s, and whether the tags equal the CPU build's. Without a GPU, Vulkan runs
through lavapipe (Mesa's Vulkan driver on the processor, as llama.cpp's own CI does): it proves the
offload code path, not speed. Metal has not been run.

Measured 2026-11-23 on the shared 2-core machine (load ~10), llama-cpp-python 0.3.36, SmolLM2-135M Q4_1:
    cpu                  22.0 tokens/s   25.8 s  tags = CPU's  runs on the processor (CPU)
    vulkan (lavapipe)     1.0 tokens/s  370.0 s  yes           Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)):
                                                               31/31 layers offloaded to the GPU
Measured 2026-11-23 on one NVIDIA H100 80GB HBM3 (16 cores, CUDA 13.0, driver 580.159.04), the CUDA
build made by `make gpu-backend` (detected GPU=cuda), the CPU build from the same sdist:
    build   judge tok/s  seconds  decode tok/s  tags = CPU's  device
    cpu           185.0      5.4         316.7  yes           runs on the processor (CPU)
    cuda          267.0      5.7         675.3  yes           CUDA0 (NVIDIA H100 80GB HBM3): 31/31 layers offloaded
A 135M model on one short answer is dominated by load and prompt set-up: the GPU gain shows in decode.
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
DATASET = Path(os.environ.get("ASSAY_LEGALBENCH", "/work/shared/datasets/legalbench_rag_qa"))
CONTRACT = "DoiT-ICN-NonDisclosure-Agreement.txt"
ANSWER = "No. The agreement grants no license under any patent or copyright (Section 2)."


def excerpt() -> str:
    """Clause 2 of a real NDA (LegalBench-RAG), about 110 words: a short prompt for a slow device."""
    text = (DATASET / "documents" / CONTRACT).read_text()
    return text[text.index("\n2.") + 1 : text.index("\n3.")].strip()


def assay(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from app.cli import main; raise SystemExit(main())", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=REPO)


def with_path(folder: Path | None) -> str:
    """PYTHONPATH for one build: its folder (None: the environment's llama_cpp) before the repo."""
    parts = [str(folder)] if folder else []
    return os.pathsep.join([*parts, str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])


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
        "decode": decode_speed(env, gpu_layers),
        "tags": [(p["text"], p["tag"]) for p in points],
    }


# Plain generation speed, apart from the judge's short answers: 128 tokens, greedy, after loading.
DECODE = """
import sys, time
from llama_cpp import Llama
from models.backends.llama_local import embedded_model_path
llm = Llama(str(embedded_model_path()), n_ctx=2048, n_gpu_layers=int(sys.argv[1]), seed=0, verbose=False)
llm("Explain what a non-disclosure agreement is.", max_tokens=8, temperature=0)  # warm-up
start = time.perf_counter()
out = llm("Explain what a non-disclosure agreement is.", max_tokens=128, temperature=0)
print(out["usage"]["completion_tokens"] / (time.perf_counter() - start))
"""


def decode_speed(env: dict[str, str], gpu_layers: int) -> float:
    run = subprocess.run(
        [sys.executable, "-c", DECODE, str(gpu_layers)], env=env, capture_output=True, text=True, check=False
    )
    return float(run.stdout.split()[-1]) if run.returncode == 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu-build", type=Path, help="folder holding the GPU build of llama_cpp (default: installed)")
    parser.add_argument("--cpu-build", type=Path, help="folder holding the CPU build of llama_cpp (default: installed)")
    parser.add_argument("--name", default="vulkan (lavapipe)", help="the GPU build's name in the table")
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
        cpu = judge_with("cpu", with_path(args.cpu_build), 0, dataset, folder)
        gpu = judge_with(args.name, with_path(args.gpu_build), -1, dataset, folder)
    print(f"one answer ({len(ANSWER)} chars) over clause 2 of {CONTRACT} ({len(excerpt().split())} words)")
    print(f"{'build':18} {'judge tok/s':>11} {'seconds':>8} {'decode tok/s':>12}  tags = CPU's  device")
    for result in (cpu, gpu):
        same = "yes" if result["tags"] == cpu["tags"] else "NO"
        speed = f"{result['tokens_per_second']:11.1f} {result['seconds']:8.1f} {result['decode']:12.1f}"
        print(f"{result['build']:18} {speed}  {same:11}  {result['device']}")
    print("tags:", cpu["tags"])
    if gpu["tags"] != cpu["tags"]:
        print(f"{args.name} tags:", gpu["tags"])
        raise SystemExit(1)


if __name__ == "__main__":
    main()

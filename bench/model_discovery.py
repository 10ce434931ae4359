"""How long the model picker takes to find the models already on a computer, first and then again.

    .venv/bin/python bench/model_discovery.py [--files N]

Builds a temporary home with N GGUF files (default 300) spread as the programs keep them: Ollama's
store (a manifest per model naming its blob), LM Studio's publisher/repo folders, GPT4All's and
Jan's folders and the Hugging Face cache (snapshots linking to blobs). Each file is a small real GGUF
header (architecture, context length, file type) with one real tokenizer's vocabulary (49,152 tokens,
as the embedded SmolLM2's), since the vocabulary is what makes a header slow to read. Then times
`find_models` cold (no cache: every header read) and cached (nothing changed: a `stat` a file), a few
times each, and prints them side by side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

VOCABULARY = 49_152
PLACES = ("ollama", "lmstudio", "gpt4all", "jan", "huggingface")


def _write_gguf(path: Path, index: int, tokens: list[str]) -> None:
    import gguf

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name(f"bench model {index}")
    writer.add_context_length(4096 * (1 + index % 4))
    writer.add_block_count(24)
    writer.add_embedding_length(2048)
    writer.add_head_count(16)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.add_token_list(tokens)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()


def build_home(home: Path, files: int) -> None:
    tokens = [f"tok{i}" for i in range(VOCABULARY)]
    for i in range(files):
        place = PLACES[i % len(PLACES)]
        if place == "ollama":
            blob_name = hashlib.sha256(str(i).encode()).hexdigest()
            blob = home / ".ollama" / "models" / "blobs" / f"sha256-{blob_name}"
            _write_gguf(blob, i, tokens)
            manifest = home / ".ollama" / "models" / "manifests" / "registry.ollama.ai" / "library" / f"m{i}" / "latest"
            manifest.parent.mkdir(parents=True, exist_ok=True)
            layer = {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{blob_name}"}
            manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [layer]}))
        elif place == "lmstudio":
            _write_gguf(
                home / ".lmstudio" / "models" / f"pub{i % 7}" / f"repo{i}-GGUF" / f"m{i}-Q4_K_M.gguf", i, tokens
            )
        elif place == "gpt4all":
            _write_gguf(home / ".local" / "share" / "nomic.ai" / "GPT4All" / f"m{i}.gguf", i, tokens)
        elif place == "jan":
            _write_gguf(home / "jan" / "models" / f"m{i}" / f"m{i}.gguf", i, tokens)
        else:
            repo = home / ".cache" / "huggingface" / "hub" / f"models--org--m{i}-GGUF"
            blob = repo / "blobs" / hashlib.sha256(str(i).encode()).hexdigest()
            _write_gguf(blob, i, tokens)
            link = repo / "snapshots" / "abc123" / f"m{i}.Q4_K_M.gguf"
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        os.environ["HOME"] = str(home)
        os.environ["ASSAY_CONFIG_DIR"] = str(Path(folder) / "config")
        for name in ("OLLAMA_MODELS", "HF_HOME", "HF_HUB_CACHE", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
            os.environ.pop(name, None)
        build_home(home, args.files)

        from app.judging import model_discovery
        from app.judging.model_discovery import find_models

        model_discovery.ollama_roots = lambda: [home / ".ollama" / "models"]  # the temporary home's only
        cache = Path(folder) / "config" / "found_models.json"
        cold, cached = [], []
        for _ in range(args.repeat):
            cache.unlink(missing_ok=True)
            for store in Path(folder, "config").glob("models.json"):  # the header cache of model_files too
                store.unlink()
            started = time.perf_counter()
            found = find_models()
            cold.append(time.perf_counter() - started)
            started = time.perf_counter()
            again = find_models()
            cached.append(time.perf_counter() - started)
            assert len(found) == len(again) == args.files, (len(found), len(again))
        by_source: dict[str, int] = {}
        for model in found:
            by_source[model.source] = by_source.get(model.source, 0) + 1
    print(f"{args.files} GGUF files ({', '.join(f'{n} {s}' for s, n in sorted(by_source.items()))})")
    print(f"{'':8}{'cold (headers read)':>22}{'cached (unchanged)':>22}")
    print(f"{'median':8}{statistics.median(cold):>20.2f} s{statistics.median(cached):>20.3f} s")
    print(f"{'worst':8}{max(cold):>20.2f} s{max(cached):>20.3f} s")


if __name__ == "__main__":
    main()

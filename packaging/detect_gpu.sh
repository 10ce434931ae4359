#!/bin/sh
# Which GPU backend llama.cpp should be built with on this machine: cuda, metal, vulkan or cpu.
# A toolkit alone is not enough: CUDA needs an NVIDIA driver, Vulkan a GPU-type device
# (lavapipe, the processor's Vulkan driver, is left to an explicit GPU=vulkan).
if [ "$(uname -s)" = Darwin ]; then
	echo metal
elif { command -v nvcc || [ -x /usr/local/cuda/bin/nvcc ]; } >/dev/null 2>&1 && { command -v nvidia-smi >/dev/null 2>&1 || [ -e /proc/driver/nvidia/version ]; }; then
	echo cuda
elif command -v glslc >/dev/null 2>&1 && command -v vulkaninfo >/dev/null 2>&1 \
	&& vulkaninfo --summary 2>/dev/null | grep -Eq "deviceType += PHYSICAL_DEVICE_TYPE_(DISCRETE|INTEGRATED)_GPU"; then
	echo vulkan
else
	echo cpu
fi

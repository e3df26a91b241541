# Developer entry points. `make demo` and `make test` set everything up on a fresh
# Debian machine with Python 3.11 (system packages via apt-get when missing, Python
# packages in .venv) and then do their job.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The exact version of every Python package installed here and in bench/.venv-peers.
CONSTRAINTS := constraints.txt
# make demo: its model is fetched from PyPI into this cache folder (never committed).
DEMO := examples/sine_cortex_m4
DEMO_CACHE := .cache/demo
# Debian packages the project needs: the host C compiler; the Arm toolchain, newlib and
# QEMU of the Cortex-M targets (firmware built and run by `kiln verify --target cortex-m4`).
APT_PACKAGES := gcc make cmake gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross valgrind

.PHONY: setup demo test test-slow bench bench-quick tflite-converted constraints clean

$(BIN)/kiln: pyproject.toml $(CONSTRAINTS)
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip -c $(CONSTRAINTS)
	$(BIN)/pip install -q -e '.[test]' -c $(CONSTRAINTS)
	@touch $@

setup: $(BIN)/kiln

# The main job (examples/sine_cortex_m4): TFLite Micro's trained sine model, fetched from the
# tflite-micro package on PyPI into .cache/demo, compiled into a firmware project for the emulated
# mps2-an386 board (Cortex-M4F), built and run in QEMU over one period of x (it draws the sine it
# computes); then verified against the reference runtime in QEMU and its instructions counted.
demo: setup
	$(MAKE) -C $(DEMO) run size verify profile KILN=$(abspath $(BIN)/kiln) PYTHON=$(abspath $(BIN)/python) \
	  CACHE=$(abspath $(DEMO_CACHE)) PIP_FLAGS="-c $(abspath $(CONSTRAINTS))"

test: setup
	$(BIN)/python -m pytest -q -n auto

test-slow: setup
	$(BIN)/python -m pytest -q -m slow

# Kiln next to TFLite Micro, onnxruntime and emx-onnx-cgen on the MLPerf Tiny models: bench/RESULTS.md
bench: setup
	$(BIN)/python -m bench

bench-quick: setup
	$(BIN)/python -m bench --quick

# Writes again the converter-built models of tests/tflite_converted/ (Keras + TFLite's converter,
# fixed seeds) from the benchmark's own virtual environment, which it creates when missing.
TFLITE_VENV := bench/.venv-tflite
tflite-converted:
	@test -x $(TFLITE_VENV)/bin/python || $(PYTHON) -m venv $(TFLITE_VENV)
	$(TFLITE_VENV)/bin/pip install -q -r tests/tflite_converted/requirements.txt
	$(TFLITE_VENV)/bin/python tests/tflite_converted/generate.py

# Deliberately refresh constraints.txt: the newest versions the registry serves of everything
# .venv and bench/.venv-peers install, resolved together (pip's dry run, nothing installed).
# Then `make test` and commit constraints.txt.
constraints: setup
	$(BIN)/pip install -q --dry-run --ignore-installed --report $(VENV)/resolution.json pip '.[test]' -r bench/requirements.txt
	$(BIN)/python tools/refresh_constraints.py $(VENV)/resolution.json $(CONSTRAINTS)

clean:
	rm -rf out examples/*/build

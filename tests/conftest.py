"""Shared test fixtures: paths to the bundled models and a helper to compile small graphs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Test utilities (helpers.py, onnx_models.py, tflite_models.py) are imported by plain name.
sys.path.insert(0, str(Path(__file__).resolve().parent))
MODELS = ROOT.parent / "shared" / "models" / "mlperf_tiny"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    if not MODELS.is_dir():
        pytest.skip(f"MLPerf Tiny models not found beside the checkout ({MODELS})")
    return MODELS

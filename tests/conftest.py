"""Shared test fixtures: paths to the bundled models and a helper to compile small graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models" / "mlperf_tiny"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    if not MODELS.is_dir():
        pytest.skip(f"MLPerf Tiny models not found beside the checkout ({MODELS})")
    return MODELS

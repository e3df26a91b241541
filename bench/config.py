"""What the benchmark measures and with which flags: paths, the model list, compiler flags.

Every C code generator (Kiln, emx-onnx-cgen) is compiled with the same code-generation flags,
so that instruction counts compare the generated code and not the build: `-std=c99 -O2` on
the host, and Kiln's cortex-m4 target flags (board mps2-an386) for the Cortex-M4F. Warning
flags differ (Kiln's output must pass DESIGN.md's -Werror set, a peer's need not); they do not
change the code.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
WORK = BENCH / ".work"  # build folder, reused across runs (gitignored)
PEERS_VENV = BENCH / ".venv-peers"  # TensorFlow + tf2onnx + emx-onnx-cgen (requirements.txt)
HARNESS = BENCH / "harness"
MODELS_TOML = BENCH / "models.toml"
SHARED_MODELS = ROOT.parent / "shared" / "models"

HOST_CC = "gcc"
HOST_CFLAGS = ("-std=c99", "-O2")
M4_TARGET = "cortex-m4"  # Kiln target whose flags and board (mps2-an386) the Cortex-M figures use
SEED = 0  # random inputs: codegen.verify.samples.random_samples(..., seed=SEED)
ONNX_OPSET = 17


@dataclass(frozen=True)
class Model:
    label: str  # short name in the tables: "KWS int8"
    path: Path
    quick: bool

    @property
    def stem(self) -> str:
        return self.path.stem


@dataclass(frozen=True)
class Mode:
    """How much effort a run spends: --quick (minutes) or the full run."""

    name: str
    samples: int  # random inputs for the correctness comparison
    latency_budget_s: float  # wall time spent timing each tool on each model
    latency_rounds: int  # interleaved rounds (each tool timed in turn, drift spreads evenly)


QUICK = Mode("quick", samples=5, latency_budget_s=0.4, latency_rounds=3)
FULL = Mode("full", samples=50, latency_budget_s=3.0, latency_rounds=7)


def load_models(path: Path = MODELS_TOML) -> list[Model]:
    data = tomllib.loads(path.read_text())
    models = []
    for entry in data.get("model", []):
        p = Path(entry["file"])
        models.append(Model(entry["label"], p if p.is_absolute() else (ROOT / p).resolve(),
                            bool(entry.get("quick", False))))
    return models

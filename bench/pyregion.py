"""Callgrind instruction counts of runtimes driven from Python (TFLite Micro, onnxruntime).

`python -m bench.pyregion LIB RUNTIME MODEL INPUT.npy` runs under valgrind: it loads the model,
makes one inference to warm up, then makes one more inside bench_region() of LIB
(harness/region.c), the only code callgrind collects. RUNTIME `none` makes the same call with
an empty callback: the instructions of the ctypes callback itself, subtracted from the others.
What remains is the runtime's inference call as Python makes it (for the interpreter, about
3,000 instructions of Python binding on top of MicroInterpreter::Invoke).
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np

from bench.cbuild import callgrind_total, run
from bench.config import HARNESS, ROOT


def build_region_lib(out_dir: Path) -> Path:
    so = out_dir / "libregion.so"
    out_dir.mkdir(parents=True, exist_ok=True)
    run(["gcc", "-O2", "-shared", "-fPIC", HARNESS / "region.c", "-o", so], out_dir)
    return so


def count(lib: Path, runtime: str, model: Path | None, sample_npy: Path | None, work: Path) -> int:
    cmd = [sys.executable, "-m", "bench.pyregion", str(lib), runtime, str(model or "-"), str(sample_npy or "-")]
    return callgrind_total(cmd, ROOT, work / f"callgrind.{runtime}.out")


def _main(lib: str, runtime: str, model: str, sample: str) -> int:
    region = ctypes.CDLL(lib)
    if runtime == "tflm":
        from bench.peers.tflm import prepared_invoke

        call = prepared_invoke(Path(model), np.load(sample))
    elif runtime == "ort":
        from bench.peers.ort import prepared_run

        call = prepared_run(Path(model), np.load(sample))
    else:
        def call():
            return None
    callback = ctypes.CFUNCTYPE(None)(lambda: call() and None)
    region.bench_region(callback)
    return 0


if __name__ == "__main__":
    sys.exit(_main(*sys.argv[1:5]))

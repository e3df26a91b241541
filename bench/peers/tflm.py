"""The TFLite Micro interpreter (Python package `tflite-micro`, reference kernels).

RAM: the interpreter's allocation printout (`print_allocations`, printed from C++ to the
process's stderr) gives the arena's head (activations, model I/O, scratch) and tail
(persistent data). That total is not always an arena that runs (for AD it is too small:
allocation needs temporary space the printout does not count), so the smallest `arena_size`
that allocates and invokes is also found, by bisection. Both run in a child process
(`python -m bench.peers.tflm MODEL`): its stderr is the printout, and a crash of the
interpreter on a too-small arena cannot take the benchmark down.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench.config import ROOT

MAX_ARENA = 64 * 1024 * 1024
ALLOC_RE = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")


def interpreter(model: Path, arena_size: int | None = None):
    from tflite_micro.python.tflite_micro import runtime

    if arena_size is None:
        return runtime.Interpreter.from_file(str(model))
    return runtime.Interpreter.from_file(str(model), arena_size=arena_size)


def prepared_invoke(model: Path, sample: np.ndarray):
    """An interpreter with `sample` set as its input; returns its invoke (for timing)."""
    interp = interpreter(model)
    d = interp.get_input_details(0)
    interp.set_input(np.asarray(sample).reshape(d["shape"]).astype(d["dtype"]), 0)
    interp.invoke()
    return interp.invoke


def _runs(model: Path, arena_size: int) -> bool:
    try:
        interp = interpreter(model, arena_size)
        d = interp.get_input_details(0)
        interp.set_input(np.zeros(d["shape"], d["dtype"]), 0)
        interp.invoke()
        return True
    except RuntimeError:
        return False


def smallest_arena(model: Path, start: int) -> int:
    """The smallest arena_size (bytes) with which the interpreter allocates and invokes."""
    lo, hi = 0, max(start, 16)
    while not _runs(model, hi):
        lo, hi = hi, hi * 2
        if hi > MAX_ARENA:
            raise RuntimeError(f"no arena up to {MAX_ARENA} bytes runs the model")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _runs(model, mid):
            hi = mid
        else:
            lo = mid
    return hi


def allocations(model: Path, timeout: float = 900) -> dict[str, int]:
    """{'total', 'head', 'tail'} as printed, and 'smallest_running' (bisection)."""
    proc = subprocess.run([sys.executable, "-m", "bench.peers.tflm", str(model)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    text = proc.stdout + proc.stderr
    figures = {}
    for kind, value in ALLOC_RE.findall(text):
        figures.setdefault(kind, int(value))
    m = re.search(r"^bench-smallest-arena (\d+)$", proc.stdout, re.M)
    if proc.returncode != 0 or m is None or "total" not in figures:
        raise RuntimeError(f"the interpreter cannot run the model: {_reason(text)}")
    figures["smallest_running"] = int(m.group(1))
    return figures


def _reason(text: str) -> str:
    """The interpreter's own explanation among its messages, else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for needle in ("not supported", "failed to prepare", "Didn't find op"):
        for line in lines:
            if needle in line:
                return line.split(".cc ")[-1]
    return lines[-1] if lines else "no output"


def _main(model: Path) -> int:
    interpreter(model).print_allocations()  # from C++, to stderr (stdout in some versions)
    sys.stderr.flush()
    print(f"bench-smallest-arena {smallest_arena(model, 1024)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(Path(sys.argv[1])))

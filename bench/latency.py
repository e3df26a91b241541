"""Host latency of every tool on one model, in one process, as ratios.

Every tool is called the same way: a no-argument Python callable making one inference
(ctypes into the generated C's shared library; the interpreter's invoke(); onnxruntime's
run()), timed call by call. The clock is the calling thread's CPU time
(CLOCK_THREAD_CPUTIME_ID): every tool computes on the calling thread (onnxruntime too, with one
intra-op thread), and time the thread spends preempted by other processes does not count, so
a loaded machine distorts the ratios much less than wall time would. Tools take turns in
interleaved rounds so that drift of the machine's speed spreads over all of them; the median
per tool is kept. Absolute times depend on the machine and the moment, so only ratios within
one run are reported.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from pathlib import Path
from typing import Callable

import numpy as np


def ctypes_call(so: Path, sample: bytes, output_bytes: int) -> Callable[[], object]:
    """One call of bench_run() in a shared library, buffers prepared once."""
    lib = ctypes.CDLL(str(so))
    fn = lib.bench_run
    fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    fn.restype = ctypes.c_int
    inp = np.frombuffer(bytearray(sample), np.uint8)
    out = np.zeros(max(output_bytes, 1), np.uint8)
    pin, pout = inp.ctypes.data, out.ctypes.data
    keep = (lib, inp, out)  # the closure keeps the library and the buffers alive

    def call():
        return fn(pin, pout) if keep else None

    return call


def _one(call: Callable[[], object]) -> int:
    t0 = time.thread_time_ns()
    call()
    return time.thread_time_ns() - t0


def median_times(calls: dict[str, Callable[[], object]], budget_s: float, rounds: int) -> dict[str, float]:
    """Median seconds per call of each callable, about `budget_s` of calls each."""
    if not calls:
        return {}
    per_round = {}
    for name, call in calls.items():
        call()  # warm-up
        probe = min(_one(call) for _ in range(3))
        per_round[name] = max(3, min(5000, int(budget_s * 1e9 / max(probe, 1) / rounds)))
    samples: dict[str, list[int]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            samples[name] += [_one(call) for _ in range(per_round[name])]
    return {name: statistics.median(v) / 1e9 for name, v in samples.items()}

"""Runs INSIDE the emulated arm64 Python (bench/litert_xnnpack.py starts it under qemu-aarch64):
LiteRT's interpreter with its default XNNPACK delegate on one thread, `invoke()` bracketed by
Kiln's A64 profiling marker so that the counting plugin records the instructions of each
inference.

    python3.11 litert_invoke.py MODEL.tflite INVOKES OUT.npy

Per invoke it executes two marker pairs: an empty pair (marker; marker) whose difference is the
cost of calling the marker through ctypes, then marker; invoke(); marker. The host subtracts
the first from the second. The marker is the A64 hint 0xD5032FFF ("hint #127", a NOP on every
core; boards/cortex_a/kiln_profile.h) followed by RET, in an executable page of its own. The
first output of the last inference is saved to OUT.npy (the host compares it with Kiln's).
"""

import ctypes
import mmap
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter

MARKER_AND_RET = bytes.fromhex("ff2f03d5" "c0035fd6")  # hint #127; ret (little-endian words)


def marker_function():
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(MARKER_AND_RET)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return page, ctypes.CFUNCTYPE(None)(address)


def fixed_input(detail):
    """The same kind of fixed pseudo-random input Kiln's profile uses (seed 0)."""
    rng = np.random.default_rng(0)
    shape, dtype = detail["shape"], detail["dtype"]
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def main():
    model, invokes, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    _page, marker = marker_function()
    interpreter = Interpreter(model_path=model, num_threads=1)
    interpreter.allocate_tensors()
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], fixed_input(detail))
    for _ in range(invokes):
        marker()
        marker()
        marker()
        interpreter.invoke()
        marker()
    np.save(out, interpreter.get_tensor(interpreter.get_output_details()[0]["index"]))


if __name__ == "__main__":
    main()

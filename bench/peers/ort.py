"""onnxruntime, one thread, on the ONNX version of each model (tf2onnx's conversion, convert.py).

It is a desktop runtime: its RAM and flash are not an MCU deployment's and are not reported;
it is the host speed yardstick (latency ratios, callgrind instructions) and a second opinion on
numerics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def session(model: Path):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])


def _feeds(sess, sample: np.ndarray) -> dict[str, np.ndarray]:
    (inp,) = sess.get_inputs()
    shape = [d if isinstance(d, int) else 1 for d in inp.shape]
    dtype = {"tensor(int8)": np.int8, "tensor(uint8)": np.uint8, "tensor(float)": np.float32}[inp.type]
    return {inp.name: np.ascontiguousarray(np.asarray(sample).reshape(shape).astype(dtype))}


def prepared_run(model: Path, sample: np.ndarray):
    """A session with its feeds ready; returns a no-argument call of one inference."""
    sess = session(model)
    feeds = _feeds(sess, sample)
    names = [o.name for o in sess.get_outputs()]
    sess.run(names, feeds)
    return lambda: sess.run(names, feeds)


def outputs(model: Path, samples: list[np.ndarray]) -> list[np.ndarray]:
    sess = session(model)
    if len(sess.get_inputs()) != 1 or len(sess.get_outputs()) != 1:
        raise RuntimeError("the benchmark handles models with one input and one output")
    name = sess.get_outputs()[0].name
    return [np.asarray(sess.run([name], _feeds(sess, s))[0]) for s in samples]

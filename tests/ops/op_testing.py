"""Helpers of the operator tests: one-node ONNX models run in onnxruntime, and the
generated C of a one-op graph compared with the numpy interpreter."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from codegen.ir import Graph, GraphBuilder, run_graph
from helpers import run_c

_ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int8): TensorProto.INT8,
               np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64}


def run_onnx_node(op_type: str, inputs: dict[str, np.ndarray], attrs: dict | None = None,
                  initializers: dict[str, np.ndarray] | None = None, opset: int = 17) -> np.ndarray:
    """Output of a single ONNX node `op_type` in onnxruntime; `initializers` are constants."""
    initializers = initializers or {}
    names = list(inputs) + list(initializers)
    node = helper.make_node(op_type, names, ["y"], **(attrs or {}))
    graph = helper.make_graph(
        [node], "one_node",
        [helper.make_tensor_value_info(k, _ONNX_TYPES[v.dtype], v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", _ONNX_TYPES[next(iter(inputs.values())).dtype], None)],
        [onnx.numpy_helper.from_array(v, k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)[0]


def finish(b: GraphBuilder, out: str) -> Graph:
    """Make `out` the graph output and build the graph."""
    return b.output(out).build()


def assert_c_equals_reference(g: Graph, feeds: list[dict[str, np.ndarray]], rtol: float = 1e-5):
    """The generated C (ASan/UBSan build) gives the numpy interpreter's outputs: bit for bit
    on integers, within `rtol` of the largest magnitude on floats. Returns the C outputs."""
    got = run_c(g, feeds)
    for feed, out in zip(feeds, got):
        for name, expected in run_graph(g, feed).items():
            if np.issubdtype(expected.dtype, np.floating):
                scale = max(float(np.abs(expected).max()), 1e-30)
                assert np.abs(out[name] - expected).max() <= rtol * scale, name
            else:
                np.testing.assert_array_equal(out[name], expected, err_msg=name)
    return got


def graph_of_cases(name: str, cases) -> Graph:
    """One graph holding many independent test cases, so that one C build checks them all.

    Each case is `case(builder, prefix) -> output value`; its inputs are named with `prefix`,
    its output is the graph's output number k. Every other case's result goes through a copy,
    so that kernels are checked writing both into the caller's buffers and into the arena.
    """
    b = GraphBuilder(name)
    for k, case in enumerate(cases):
        out = case(b, f"c{k}_")
        if k % 2:
            v = b.g.values[out]
            out = b.node("Reshape", [out], shape=v.shape, quant=v.quant)
        b.output(out)
    return b.build()


def random_feeds(g: Graph, count: int = 2, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Inputs of `g`: integers over their whole range, floats normal with standard deviation 3."""
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        feed = {}
        for name in g.inputs:
            v = g.values[name]
            if v.dtype == "float32":
                feed[name] = np.asarray(rng.standard_normal(v.shape) * 3, np.float32)
            else:
                info = np.iinfo(np.dtype(v.dtype))
                feed[name] = np.asarray(rng.integers(info.min, int(info.max) + 1, v.shape), v.dtype)
        feeds.append(feed)
    return feeds

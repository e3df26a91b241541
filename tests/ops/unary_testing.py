"""Shared cases of the elementwise unary op tests (Clip, Sigmoid, Tanh, Quantize, Dequantize).

int8 ops that are functions of one byte run as a 256-entry table: they are checked on all 256
input values, against a one-op model in TFLite Micro (LiteRT where TFLM lacks the op), then
the generated C against the numpy reference, bit for bit.
"""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder, Quant, run_graph
from op_testing import assert_c_equals_reference, finish, run_onnx_node

ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)


def unary_graph(op: str, shape, dtype: str, qi=None, qo=None, **attrs):
    b = GraphBuilder(op.lower())
    x = b.input("x", dtype, shape, qi)
    return finish(b, b.node(op, [x], quant=qo, **attrs))


def rand_quant(rng) -> tuple[float, int]:
    return float(np.float32(10 ** rng.uniform(-2.5, 0.0))), int(rng.integers(-128, 128))


def float_inputs(shape=(3, 50), seed: int = 0, spread: float = 4.0) -> list[dict[str, np.ndarray]]:
    """Normal samples plus a sweep of [-20, 20] (the saturating tails)."""
    rng = np.random.default_rng(seed)
    sweep = np.linspace(-20, 20, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return [{"x": (rng.standard_normal(shape) * spread).astype(np.float32)}, {"x": sweep}]


def check_float(op: str, onnx_op: str, attrs: dict | None = None, onnx_attrs: dict | None = None,
                initializers: dict | None = None, rtol: float = 1e-5) -> None:
    """Reference against onnxruntime (relative to the largest output), C against reference."""
    feeds = float_inputs()
    g = unary_graph(op, feeds[0]["x"].shape, "float32", **(attrs or {}))
    for feed in feeds:
        want = run_onnx_node(onnx_op, feed, onnx_attrs, initializers)
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_allclose(got, want, rtol=0, atol=rtol * float(np.abs(want).max()))
    assert_c_equals_reference(g, feeds)


def tflite_unary(builtin: str, qi, qo, x: np.ndarray, out_dtype: str = "int8", runner: str = "tflm",
                 in_dtype: str = "int8") -> np.ndarray:
    """Output of a one-op model `builtin` on `x` in TFLM (or LiteRT)."""
    from tflite_models import TensorSpec, run_litert, run_tflm, single_op_model

    spec_in = TensorSpec(x.shape, in_dtype, *(qi or (None,)))
    spec_out = TensorSpec(x.shape, out_dtype, *(qo or (None,)))
    model = single_op_model(builtin, [spec_in], [spec_out])
    return (run_tflm if runner == "tflm" else run_litert)(model, x)[0]


def check_int8_table(op: str, builtin: str, qi, qo, attrs: dict | None = None,
                     runner: str = "tflm", seed: int = 0) -> None:
    """All 256 inputs: reference == TFLite, then C == reference (both bit for bit)."""
    g = unary_graph(op, ALL_INT8.shape, "int8", Quant.of(*qi), Quant.of(*qo), **(attrs or {}))
    want = tflite_unary(builtin, qi, qo, ALL_INT8, runner=runner)
    got = run_graph(g, {"x": ALL_INT8})[g.outputs[0]]
    np.testing.assert_array_equal(got, want)
    rng = np.random.default_rng(seed)
    feeds = [{"x": ALL_INT8}, {"x": rng.permutation(ALL_INT8.ravel()).reshape(ALL_INT8.shape)}]
    c_out = assert_c_equals_reference(g, feeds)
    np.testing.assert_array_equal(c_out[0][g.outputs[0]], want)

"""Dynamic-range FULLY_CONNECTED (float rows, int8 weights with one scale): imported as a 1x1
HybridConv2D over the rows, it quantizes each row on the fly as LiteRT's hybrid kernel does.
The reference is compared bit for bit with LiteRT's builtin kernels, then the generated C on
the host with LiteRT; weights with several scales, or asymmetric input quantization, keep the
dequantized float path."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.compiler import compile_model
from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import run_on_target
from ops.test_hybrid_conv2d import litert  # tests/ops as a namespace package
from tflite_models import TensorSpec, const, single_op_model

# (input shape, output units, keep_num_dims, fused activation, bias)
CASES = [((1, 40), 12, False, "NONE", True), ((3, 33), 7, False, "RELU", True),
         ((2, 3, 16), 5, True, "NONE", False), ((4, 100), 9, False, "RELU6", True),
         ((2, 4, 10), 3, False, "NONE", True)]


def hybrid_fc(case: int, **weight_quant) -> bytes:
    x_shape, units, keep, act, bias = CASES[case]
    rng = np.random.default_rng(case)
    k = x_shape[-1]
    w = rng.integers(-127, 128, size=(units, k)).astype(np.int8)
    b = const(rng.standard_normal(units).astype(np.float32)) if bias else None
    out = (*x_shape[:-1], units) if keep else (int(np.prod(x_shape)) // k, units)
    return single_op_model("FULLY_CONNECTED", [TensorSpec(x_shape), const(w, "int8", **(weight_quant or
                                                                                        {"scale": 0.0071})), b],
                           [TensorSpec(out)], {"fused_activation_function": act, "keep_num_dims": keep})


def _inputs(shape, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = [(rng.standard_normal(shape) * s).astype(np.float32) for s in (1, 4, 0.01, 100)]
    return xs + [np.abs(xs[0]), np.zeros(shape, np.float32)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_reference_is_bit_exact_with_litert(case):
    model = hybrid_fc(case)
    g = load_bytes(model)
    assert "HybridConv2D" in [n.op for n in g.nodes]
    for x in _inputs(CASES[case][0], case):
        want = litert(model, x)
        got = run_graph(g, {g.inputs[0]: x})[g.outputs[0]]
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_generated_c_is_bit_exact_with_litert(tmp_path):
    for case in range(len(CASES)):
        path = tmp_path / f"fc{case}.tflite"
        path.write_bytes(hybrid_fc(case))
        build = compile_model(path, CompileOptions(load_target("host")))
        samples = [{build.manifest["inputs"][0]["name"]: x} for x in _inputs(CASES[case][0], 10 + case)]
        for x, outs in zip(samples, run_on_target(build, CompileOptions(load_target("host")), samples)):
            want = litert(path.read_bytes(), next(iter(x.values())))
            np.testing.assert_array_equal(next(iter(outs.values())).reshape(want.shape), want)


def test_per_channel_weights_keep_the_dequantized_path():
    model = hybrid_fc(0, scale=list(np.linspace(0.002, 0.01, 12)), zero_point=[0] * 12)
    g = load_bytes(model)
    assert [n.op for n in g.nodes] == ["FullyConnected"]
    x = _inputs(CASES[0][0], 0)[0]
    np.testing.assert_allclose(run_graph(g, {g.inputs[0]: x})[g.outputs[0]], litert(model, x), rtol=2e-2, atol=2e-2)

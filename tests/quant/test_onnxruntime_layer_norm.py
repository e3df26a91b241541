"""`--numerics onnxruntime`: LayerNormalization as onnxruntime's x86-64 CPU kernel computes it
(codegen/kernels/onnxruntime/layer_norm_f32.py), bit for bit, and the static transformer
encoder of bench/quant_onnx_models.py (QDQ and QOperator), whose LayerNormalizations were its
only difference from onnxruntime in these numerics."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from bench.quant_onnx_models import MEASURED_ONLY, quantized
from codegen.compiler import compile_model
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.reference import run_onnxruntime
from codegen.verify.run import run_on_target, verify_model

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxruntime.quantization")


def _layer_norm(cols: int, rows: int, with_bias: bool, with_stats: bool) -> onnx.ModelProto:
    rng = np.random.default_rng(cols)
    inits = [numpy_helper.from_array(rng.standard_normal(cols).astype(np.float32), "g")]
    if with_bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(cols).astype(np.float32), "b"))
    outs = ["y", "mean", "inv"] if with_stats else ["y"]
    node = helper.make_node("LayerNormalization", ["x", "g"] + (["b"] if with_bias else []), outs, axis=-1,
                            epsilon=1e-3)
    stat = [rows, 1]
    graph = helper.make_graph([node], "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, cols])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, [rows, cols] if o == "y" else stat)
                               for o in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


# every tail after the blocks of 8 (none, 1 to 3, the block of 4, 4 + 1 to 3), one or more blocks
@pytest.mark.parametrize("cols,target", [(c, "host") for c in (8, 9, 11, 12, 15, 16, 20, 23, 64, 100)]
                         + [(23, "cortex-m4")])
def test_layer_norm_bit_exact_with_onnxruntime(cols, target, tmp_path):
    rows = 48
    path = tmp_path / "ln.onnx"
    onnx.save(_layer_norm(cols, rows, with_bias=cols % 2 == 0, with_stats=cols in (12, 23)), path)
    options = CompileOptions(load_target(target), numerics="onnxruntime")
    build = compile_model(path, options)
    assert "layer_norm_f32" in build.manifest["kernels"]
    rng = np.random.default_rng(1)
    # rows of very different spreads and offsets: the variance's rounding order matters
    x = (rng.standard_normal((rows, cols)) * rng.uniform(0.01, 10, (rows, 1)) + rng.standard_normal((rows, 1)) * 3)
    samples = [{"x": x.astype(np.float32)}]
    (got,), (want,) = run_on_target(build, options, samples), run_onnxruntime(path, samples, "onnxruntime")
    for name in want:
        np.testing.assert_array_equal(got[name].reshape(want[name].shape), want[name], err_msg=name)


def test_rows_shorter_than_eight_keep_the_reference_kernel(tmp_path):
    from codegen.kernels.onnxruntime.layer_norm_f32 import LayerNormF32Onnxruntime
    from codegen.ops.request import KernelRequest

    short = KernelRequest("layer_norm_f32", None, {"rows": 2, "cols": 7, "epsilon": 1e-5, "rms": False})
    rms = KernelRequest("layer_norm_f32", None, {"rows": 2, "cols": 16, "epsilon": 1e-5, "rms": True})
    assert not LayerNormF32Onnxruntime.accepts(short) and not LayerNormF32Onnxruntime.accepts(rms)


ENCODERS = [pytest.param(v, marks=pytest.mark.slow) if v.activations == "uint8" else v for v in MEASURED_ONLY]


@pytest.mark.parametrize("variant", ENCODERS, ids=lambda v: v.label)
def test_static_encoder_bit_exact_with_onnxruntime(variant, tmp_path):
    """QLinearMatMul of two activations (Q K^T, attention x V), QLinearMul, QLinearSoftmax,
    QLinearAdd and the LayerNormalizations between DequantizeLinear and QuantizeLinear."""
    (out,) = verify_model(quantized(variant, tmp_path), CompileOptions(load_target("host"), numerics="onnxruntime"),
                          samples=10).outputs
    if out.lsb is None:  # QOperator: the last LayerNormalization's float output
        assert out.ok and out.max_abs_error == 0, out
    else:
        assert out.ok and out.elements_off == 0, out

"""Quantized ONNX as onnxruntime's quantizer writes it (QDQ and QOperator with its
com.microsoft operators; uint8 and int8 activations; per-tensor and per-channel weights),
compiled and run on the host against onnxruntime, judged in LSB of the output scale.

Kiln's int8 arithmetic is TFLite's (fixed-point requantization), onnxruntime's is a float
multiplier with round half to even: one op may round a value one step the other way where it
lands near a rounding boundary, and the next layers may carry that step into a second one
(seen on the MLP: 2 of 80 elements). The full table of distances is bench/QUANT_ONNX.md.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from bench.quant_onnx_models import VARIANTS, quantized
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import verify_model

pytest.importorskip("onnxruntime.quantization")

MS_OPS = {"QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearConcat",
          "QLinearSoftmax", "QLinearSigmoid", "QLinearLeakyRelu", "QGemm", "QLinearWhere"}


# The default run keeps per-channel static models and the dynamic ones (each operator appears);
# per-tensor static models are the exhaustive sweep.
SWEEP = [pytest.param(v, marks=pytest.mark.slow) if v.fmt != "dynamic" and not v.per_channel else v
         for v in VARIANTS]


@pytest.mark.parametrize("variant", SWEEP, ids=lambda v: v.label)
def test_onnxruntime_quantized_model_within_two_lsb_on_host(variant, tmp_path):
    path = quantized(variant, tmp_path)
    if variant.fmt != "QDQ":  # the contrib operators really are in the model
        ops = {n.op_type for n in onnx.load(str(path)).graph.node if n.domain == "com.microsoft"}
        assert (ops and ops <= MS_OPS) if variant.fmt == "QOperator" else not ops
    result = verify_model(path, CompileOptions(load_target("host")), samples=8, tolerance_lsb=2)
    (out,) = result.outputs
    assert (out.lsb is not None) == (variant.fmt != "dynamic")  # dynamic: float outputs, judged relatively
    assert result.ok, (out.lsb_counts, out.max_abs_error)



# QEMU runs are slower: the firmware (mps2-an386, DSP kernels) on one model of each format.
M4_VARIANTS = [v for v in VARIANTS if v.label in ("cnn-QOperator-uint8-per_channel", "mlp-QDQ-int8-per_tensor",
                                                  "mlp_matmul-dynamic-uint8-per_tensor")]


@pytest.mark.parametrize("variant", M4_VARIANTS, ids=lambda v: v.label)
def test_onnxruntime_quantized_model_on_cortex_m4(variant, tmp_path):
    result = verify_model(quantized(variant, tmp_path), CompileOptions(load_target("cortex-m4")), samples=4,
                          tolerance_lsb=2)
    assert result.ok, [(o.lsb_counts, o.max_rel_error) for o in result.outputs]


def _save(tmp_path, name: str, nodes, inputs, output_shape, inits):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)], inits)
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                      helper.make_opsetid("com.microsoft", 1)], ir_version=8), path)
    return path


def _c(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype), name)


def test_qlinear_where_requantizes_both_sides(tmp_path):
    """QLinearWhere with a constant condition and three quantizations (as the quantizer writes
    it for Where(mask, x, y)): int8 Where after two requantizations, within one LSB."""
    inits = [_c("xs", 0.03, np.float32), _c("xz", 120, np.uint8), _c("ys", 0.05, np.float32), _c("yz", 100, np.uint8),
             _c("zs", 0.04, np.float32), _c("zz", 128, np.uint8),
             numpy_helper.from_array(np.random.default_rng(3).random((2, 8)) > 0.5, "cond")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QuantizeLinear", ["y_in", "ys", "yz"], ["yq"]),
             helper.make_node("QLinearWhere", ["cond", "xq", "xs", "xz", "yq", "ys", "yz", "zs", "zz"], ["zq"],
                              domain="com.microsoft"),
             helper.make_node("DequantizeLinear", ["zq", "zs", "zz"], ["y"])]
    path = _save(tmp_path, "where", nodes, [("x", [2, 8]), ("y_in", [2, 8])], [2, 8], inits)
    result = verify_model(path, CompileOptions(load_target("host")), samples=8)
    assert result.ok and result.outputs[0].lsb == pytest.approx(0.04)


def test_a_contrib_operator_outside_its_contract_is_one_clear_error(tmp_path):
    """QLinearSoftmax along another than the last axis is refused with the node named."""
    c = lambda name, v, dt: numpy_helper.from_array(np.array(v, dt), name)  # noqa: E731
    inits = [c("s", 0.05, np.float32), c("z", 128, np.uint8), c("ys", 1 / 256, np.float32), c("yz", 0, np.uint8)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("QLinearSoftmax", ["q", "s", "z", "ys", "yz"], ["p"], domain="com.microsoft",
                              axis=1, opset=13, name="softmax"),
             helper.make_node("DequantizeLinear", ["p", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3])], inits)
    path = tmp_path / "softmax.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                      helper.make_opsetid("com.microsoft", 1)]), path)
    from codegen.compiler import compile_model

    with pytest.raises(KilnError, match="QLinearSoftmax: only the last axis") as err:
        compile_model(path, CompileOptions(load_target("host")))
    assert err.value.node == "softmax"


@pytest.mark.parametrize("dtype,zp", [(np.uint8, 130), (np.int8, -7)])
def test_pad_of_a_quantized_tensor_by_its_zero_point(dtype, zp, tmp_path):
    """onnxruntime's QOperator Pad fills with the stored zero point, an integer of the
    quantized tensor, which Kiln's int8 Pad reads as the real value 0."""
    inits = [_c("s", 0.02, np.float32), _c("z", zp, dtype), _c("pads", [0, 0, 1, 1, 0, 0, 1, 1], np.int64),
             _c("pv", zp, dtype)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("Pad", ["xq", "pads", "pv"], ["p"], mode="constant"),
             helper.make_node("DequantizeLinear", ["p", "s", "z"], ["y"])]
    path = _save(tmp_path, "pad", nodes, [("x", [1, 2, 3, 3])], [1, 2, 5, 5], inits)
    result = verify_model(path, CompileOptions(load_target("host")), samples=3, tolerance_lsb=0)
    assert result.ok, result.outputs[0].lsb_counts


@pytest.mark.parametrize("axes,keepdims", [((2, 3), 1), ((1,), 0), ((-1,), 1)])
def test_qlinear_reduce_mean_is_the_int8_mean(axes, keepdims, tmp_path):
    """QLinearReduceMean, whose schema onnxruntime defines without a CPU kernel: TFLite's int8
    Mean, the generated C equal to Kiln's interpreter and within one LSB of the mean of the
    dequantized values requantized to the output's scale."""
    from codegen.frontends.onnx import load
    from codegen.ir import run_graph
    from helpers import run_c

    inits = [_c("s", 0.05, np.float32), _c("z", 128, np.uint8), _c("rs", 0.03, np.float32), _c("rz", 120, np.uint8)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("QLinearReduceMean", ["xq", "s", "z", "rs", "rz"], ["mq"], domain="com.microsoft",
                              axes=list(axes), keepdims=keepdims, name="mean"),
             helper.make_node("DequantizeLinear", ["mq", "rs", "rz"], ["y"])]
    x_shape = (1, 4, 5, 6)
    want_shape = [1 if (i in axes or i - 4 in axes) else d for i, d in enumerate(x_shape)
                  if keepdims or not (i in axes or i - 4 in axes)]
    g = load(_save(tmp_path, "mean", nodes, [("x", list(x_shape))], want_shape, inits), {})
    rng = np.random.default_rng(4)
    feeds = [{"x": rng.uniform(-6, 6, x_shape).astype(np.float32)} for _ in range(3)]
    for feed, out in zip(feeds, run_c(g, feeds)):
        got = run_graph(g, feed)["y"]
        np.testing.assert_array_equal(out["y"], got)
        q = np.clip(np.round(feed["x"] / 0.05) + 128, 0, 255)
        real = ((q - 128) * 0.05).mean(axis=tuple(axes), keepdims=bool(keepdims))
        want = (np.clip(np.round(real / 0.03) + 120, 0, 255) - 120) * 0.03
        assert got.shape == want.shape and np.abs(got - want).max() <= 0.03 * 1.001

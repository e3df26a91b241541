"""`--numerics onnxruntime`: the onnxruntime kernel variant (codegen/kernels/onnxruntime/:
conv2d_s8, depthwise_conv2d_s8, fully_connected_s8, matmul_s8, quantize_f32, add_bcast_s8,
mul_bcast_s8, mean_s8, average_pool2d_s8, softmax_s8, unary_lut_s8; layer_norm_f32 in
tests/quant/test_onnxruntime_layer_norm.py) bit-exact with onnxruntime's CPU kernels,
and codegen/quant/onnxruntime.py's mirrors of its arithmetic.

The reference is onnxruntime at ORT_ENABLE_ALL with int8 QDQ fusion allowed
(codegen/verify/reference.py), where QDQ groups run as its QLinearConv / QGemm kernels."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from bench.quant_onnx_models import LINEAR_CNN, VARIANTS, quantized
from codegen.options import CompileOptions
from codegen.quant import onnxruntime as ortq
from codegen.targets import load_target
from codegen.verify.run import verify_model

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxruntime.quantization")

def _exact(path, target: str, numerics: str = "onnxruntime"):
    (out,) = verify_model(path, CompileOptions(load_target(target), numerics=numerics), samples=10).outputs
    return out


@pytest.mark.parametrize("variant", LINEAR_CNN, ids=lambda v: v.label)
def test_linear_layers_bit_exact_with_onnxruntime_on_host(variant, tmp_path):
    out = _exact(quantized(variant, tmp_path), "host")
    assert out.ok and out.elements_off == 0 and out.max_lsb == 0, out


@pytest.mark.slow
@pytest.mark.parametrize("variant", LINEAR_CNN[1::3], ids=lambda v: v.label)
def test_linear_layers_bit_exact_with_onnxruntime_on_cortex_m4(variant, tmp_path):
    out = _exact(quantized(variant, tmp_path), "cortex-m4")
    assert out.ok and out.elements_off == 0, out


# The CNNs (QLinearConv, QLinearAdd, QLinearAveragePool, QLinearConcat,
# QLinearGlobalAveragePool, QGemm, QLinearSoftmax; QDQ: its Softmax output at scale 1/255, which
# fold_qdq folds in these numerics only) and the MLPs (QGemm, QLinearLeakyRelu, QLinearSigmoid,
# QLinearMul): per channel by default, per tensor in the slow sweep
WHOLE = [pytest.param(v, marks=pytest.mark.slow) if not v.per_channel else v for v in VARIANTS
         if v.model in ("cnn", "mlp") and v.fmt in ("QDQ", "QOperator")]


@pytest.mark.parametrize("variant", WHOLE, ids=lambda v: v.label)
def test_networks_bit_exact_with_onnxruntime_on_host(variant, tmp_path):
    out = _exact(quantized(variant, tmp_path), "host")
    assert out.ok and out.elements_off == 0, out


@pytest.mark.slow
@pytest.mark.parametrize("variant", [v for v in VARIANTS if (v.model, v.fmt) == ("cnn", "QDQ")], ids=lambda v: v.label)
def test_qdq_cnn_bit_exact_with_onnxruntime_on_cortex_m4(variant, tmp_path):
    out = _exact(quantized(variant, tmp_path), "cortex-m4")
    assert out.ok and out.elements_off == 0, out


def _binary_model(op: str, dtype: str, scales, zero_points) -> onnx.ModelProto:
    """Float a, b -> QuantizeLinear -> com.microsoft `op` -> DequantizeLinear."""
    tp = TensorProto.UINT8 if dtype == "uint8" else TensorProto.INT8
    names = ("a", "b", "y")
    inits = [t for n, s, z in zip(names, scales, zero_points)
             for t in (numpy_helper.from_array(np.float32(s), f"{n}_s"), numpy_helper.from_array(np.array(z, dtype), f"{n}_z"))]
    q = [helper.make_node("QuantizeLinear", [n, f"{n}_s", f"{n}_z"], [f"{n}_q"]) for n in names[:2]]
    op_node = helper.make_node(op, ["a_q", "a_s", "a_z", "b_q", "b_s", "b_z", "y_s", "y_z"], ["y_q"],
                               domain="com.microsoft")
    dq = helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_z"], ["y"])
    graph = helper.make_graph(q + [op_node, dq], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 65536])
                                                      for n in names[:2]],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 65536])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
                             ir_version=8)


@pytest.mark.parametrize("op,dtype", [("QLinearAdd", "uint8"), ("QLinearAdd", "int8"), ("QLinearMul", "uint8"),
                                      ("QLinearMul", "int8")])
def test_binary_ops_bit_exact_on_every_input_pair(op, dtype, tmp_path):
    """All 65,536 pairs of input codes: QLinearAdd's fused multiply-adds and QLinearMul's float
    requantization, uint8 on its original values."""
    lo = 0 if dtype == "uint8" else -128
    codes = np.arange(lo, lo + 256)
    scales, zps = (0.0371, 0.0113, 0.0459), (lo + 101, lo + 140, lo + 77)
    a, b = (((c.reshape(1, -1) - z) * np.float32(s)).astype(np.float32)
            for c, z, s in zip(np.meshgrid(codes, codes, indexing="ij"), zps, scales))
    path = tmp_path / f"{op}.onnx"
    onnx.save(_binary_model(op, dtype, scales, zps), path)
    np.savez(tmp_path / "pairs.npz", a=a.reshape(1, -1), b=b.reshape(1, -1))
    (out,) = verify_model(path, CompileOptions(load_target("host"), numerics="onnxruntime"),
                          inputs=tmp_path / "pairs.npz").outputs
    assert out.ok and out.elements_off == 0, out


def test_the_tflite_numerics_stay_the_default_and_differ(tmp_path):
    """The same model in TFLite's numerics: judged with 1 LSB, and not exact (else this file
    would not test the onnxruntime kernels)."""
    path = quantized(LINEAR_CNN[2], tmp_path)
    assert CompileOptions(load_target("host")).numerics == "tflite"
    out = _exact(path, "host", "tflite")
    assert out.tolerance_lsb == 1 and out.elements_off > 0


def _session(model: onnx.ModelProto):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_requantize_mirrors_qlinear_matmul():
    """QLinearMatMul on random int8 data against the exact integer product requantized by
    codegen.quant.onnxruntime (per-column weight scales)."""
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (16, 24)).astype(np.int8)
    b = rng.integers(-127, 128, (24, 6)).astype(np.int8)
    sa, sb, sy = np.float32(0.0213), (rng.random(6) * 0.01 + 0.001).astype(np.float32), np.float32(0.071)
    za, zy = -3, 5
    inits = [numpy_helper.from_array(b, "b"), numpy_helper.from_array(sa, "sa"), numpy_helper.from_array(np.int8(za), "za"),
             numpy_helper.from_array(sb, "sb"), numpy_helper.from_array(np.zeros(6, np.int8), "zb"),
             numpy_helper.from_array(sy, "sy"), numpy_helper.from_array(np.int8(zy), "zy")]
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.INT8, [16, 24])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [16, 6])], inits)
    (got,) = _session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])).run(None, {"a": a})
    acc = (a.astype(np.int64) - za) @ b.astype(np.int64)
    np.testing.assert_array_equal(ortq.requantize(acc, ortq.output_scales(sa, sb, sy), zy), got)


def test_quantize_mirrors_quantize_linear():
    """Ties, saturation and NaN-free values of QuantizeLinear, uint8 in Kiln's shifted form."""
    x = np.concatenate([np.arange(-300, 300, dtype=np.float32) * np.float32(0.25),
                        np.random.default_rng(1).standard_normal(500).astype(np.float32) * 9])
    for zp, dtype in ((3, np.int8), (131, np.uint8)):
        inits = [numpy_helper.from_array(np.float32(0.5), "s"), numpy_helper.from_array(np.array(zp, dtype), "z")]
        graph = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
                                  [helper.make_tensor_value_info("y", onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                                                 [x.size])], inits)
        (got,) = _session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])).run(None, {"x": x})
        shift = 128 if dtype == np.uint8 else 0
        ours = ortq.quantize(x, 0.5, zp - shift).astype(np.int64) + shift
        np.testing.assert_array_equal(ours, got.astype(np.int64))


def test_a_tflite_model_is_refused_in_onnxruntime_numerics(tmp_path):
    from pathlib import Path

    from codegen.compiler import compile_model
    from codegen.errors import KilnError

    tflite = Path(__file__).resolve().parents[1] / "golden" / "models" / "tiny_int8.tflite"
    with pytest.raises(KilnError, match="ONNX models"):
        compile_model(tflite, CompileOptions(load_target("host"), numerics="onnxruntime"))


def _ms_model(op: str, dtype, shape, out_shape, x_q, y_q, **attrs) -> onnx.ModelProto:
    tp = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    inits = [numpy_helper.from_array(np.float32(x_q[0]), "xs"), numpy_helper.from_array(np.array(x_q[1], dtype), "xz"),
             numpy_helper.from_array(np.float32(y_q[0]), "ys"), numpy_helper.from_array(np.array(y_q[1], dtype), "yz")]
    node = helper.make_node(op, ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", tp, list(shape))],
                              [helper.make_tensor_value_info("y", tp, list(out_shape))], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("y_scale", [1 / 256, 1 / 255], ids=["scale_1_256", "scale_1_255"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_softmax_mirror_matches_qlinear_softmax(dtype, y_scale):
    """Peaked rows too: a probability of one is capped at the type's maximum. 1/255: the scale
    onnxruntime's quantizer calibrates for a QDQ Softmax output."""
    lo = 0 if dtype == np.uint8 else -128
    rng = np.random.default_rng(2)
    x = rng.integers(lo, lo + 256, (64, 10))
    x[:8] = lo
    x[:8, 3] = lo + 255  # one element far above the rest
    x = x.astype(dtype)
    y_zp = lo
    model = _ms_model("QLinearSoftmax", dtype, x.shape, x.shape, (0.08, lo + 100), (y_scale, y_zp), axis=-1, opset=13)
    (got,) = _session(model).run(None, {"x": x})
    shift = 128 if dtype == np.uint8 else 0
    table = ortq.softmax_exp_table(0.08, 10)
    ours = ortq.softmax(x.astype(np.int64) - shift, table, ortq.softmax_y_scale(y_scale), y_zp - shift)
    np.testing.assert_array_equal(ours.astype(np.int64) + shift, got.astype(np.int64))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_average_pool_mirror_matches_qlinear_average_pool(dtype):
    lo = 0 if dtype == np.uint8 else -128
    x = np.random.default_rng(3).integers(lo, lo + 256, (1, 4, 6, 6)).astype(dtype)
    model = _ms_model("QLinearAveragePool", dtype, x.shape, (1, 4, 3, 3), (0.05, lo + 90), (0.03, lo + 120),
                      kernel_shape=[2, 2], strides=[2, 2])
    (got,) = _session(model).run(None, {"x": x})
    shift = 128 if dtype == np.uint8 else 0
    windows = (x.astype(np.int64) - shift).reshape(1, 4, 3, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 4, 3, 3, 4)
    ours = ortq.average_pool(windows, 0.05, lo + 90 - shift, 0.03, lo + 120, shift)
    np.testing.assert_array_equal(ours.astype(np.int64) + shift, got.astype(np.int64))


def _qdq_matmul(dtype: str, a_q, b_q, y_q, a_shape, b_shape, y_shape) -> onnx.ModelProto:
    """a, b (float) -> QuantizeLinear -> DequantizeLinear -> MatMul -> QuantizeLinear -> DequantizeLinear."""
    np_type = np.uint8 if dtype == "uint8" else np.int8
    inits, nodes = [], []
    for n, (s, z) in zip("aby", (a_q, b_q, y_q)):
        inits += [numpy_helper.from_array(np.float32(s), f"{n}_s"), numpy_helper.from_array(np.array(z, np_type), f"{n}_z")]
    for n in "ab":
        nodes += [helper.make_node("QuantizeLinear", [n, f"{n}_s", f"{n}_z"], [f"{n}_q"]),
                  helper.make_node("DequantizeLinear", [f"{n}_q", f"{n}_s", f"{n}_z"], [f"{n}_d"])]
    nodes += [helper.make_node("MatMul", ["a_d", "b_d"], ["m"]),
              helper.make_node("QuantizeLinear", ["m", "y_s", "y_z"], ["y_q"]),
              helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_z"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
                                           helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_qdq_matmul_of_two_activations_bit_exact(dtype, tmp_path):
    """A QDQ MatMul of two computed tensors (batched, as attention's) folds onto the int8 MatMul
    with onnxruntime's QLinearMatMul requantization: exact, where the float MatMul between
    DequantizeLinear and QuantizeLinear was not by construction."""
    lo = 0 if dtype == "uint8" else -128
    path = tmp_path / "matmul.onnx"
    onnx.save(_qdq_matmul(dtype, (0.021, lo + 131), (0.017, lo + 120), (0.0093, lo + 124),
                          [2, 6, 24], [2, 24, 10], [2, 6, 10]), path)
    options = CompileOptions(load_target("host"), numerics="onnxruntime")
    from codegen.compiler import compile_model

    assert "matmul_s8" in compile_model(path, options).manifest["kernels"]
    (out,) = verify_model(path, options, samples=40).outputs
    assert out.ok and out.elements_off == 0, out

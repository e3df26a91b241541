"""int8 builtins TFLite Micro computes with fixed-point steps of their own, bit-exact with the
TFLite Micro interpreter. HARD_SWISH and RSQRT, which Kiln tabulates at import
(codegen/frontends/tflite/lut.py): every one of the 256 stored input values, over scales and
zero points that take each branch of TFLite Micro's arithmetic (left- and right-shifted
"relu-ish" factor, saturation at both ends). SQUARED_DIFFERENCE (its own kernel): broadcast
operands with different scales, through the generated C."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import verify_model
from tflite_models import TensorSpec, run_tflm, single_op_model

ALL_STORED = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)


def _model(op: str, s_in: float, zp_in: int, s_out: float, zp_out: int) -> bytes:
    return single_op_model(op, [TensorSpec((1, 256), "int8", scale=s_in, zero_point=zp_in)],
                           [TensorSpec((1, 256), "int8", scale=s_out, zero_point=zp_out)])


def _kiln(model: bytes, x: np.ndarray) -> np.ndarray:
    g = load_bytes(model, name="t")
    return next(iter(run_graph(g, {g.inputs[0]: x}).values())).reshape(x.shape)


# (input scale, input zero point, output scale, output zero point)
HARD_SWISH = [(0.05, -3, 0.03, -100), (0.2, 10, 0.15, -110), (0.004, 0, 0.003, -128), (0.5, -128, 0.4, -20),
              (0.02, 127, 0.02, 0), (1.3, -5, 1.0, -120)]


@pytest.mark.parametrize("s_in,zp_in,s_out,zp_out", HARD_SWISH)
def test_hard_swish_int8_every_value(s_in, zp_in, s_out, zp_out):
    model = _model("HARD_SWISH", s_in, zp_in, s_out, zp_out)
    want = run_tflm(model, ALL_STORED)[0]
    np.testing.assert_array_equal(_kiln(model, ALL_STORED), want)


# RSQRT is defined from the zero point up: TFLite Micro stops with an error below it.
RSQRT = [(0.05, -128, 0.02, -128), (0.001, -100, 0.5, -128), (0.3, -128, 0.01, -128), (0.02, 0, 0.05, 3)]


@pytest.mark.parametrize("s_in,zp_in,s_out,zp_out", RSQRT)
def test_rsqrt_int8_every_defined_value(s_in, zp_in, s_out, zp_out):
    model = _model("RSQRT", s_in, zp_in, s_out, zp_out)
    x = np.resize(np.arange(zp_in, 128, dtype=np.int8), (1, 256))
    want = run_tflm(model, x)[0]
    np.testing.assert_array_equal(_kiln(model, x), want)


# (a shape, a scale, a zero point, b shape, b scale, b zero point, out scale, out zero point)
SQUARED_DIFFERENCE = [((1, 16, 32), 0.05, -3, (1, 16, 1), 0.02, 5, 0.3, -128),
                      ((2, 3, 4), 0.3, 10, (2, 3, 4), 0.3, -10, 20.0, -100),
                      ((4, 1, 8), 0.01, 0, (1, 5, 1), 0.04, -128, 0.15, -120)]


@pytest.mark.parametrize("a,sa,za,b,sb,zb,so,zo", SQUARED_DIFFERENCE)
def test_squared_difference_int8_in_c(tmp_path, a, sa, za, b, sb, zb, so, zo):
    out = np.broadcast_shapes(a, b)
    model = single_op_model("SQUARED_DIFFERENCE", [TensorSpec(a, "int8", scale=sa, zero_point=za),
                                                   TensorSpec(b, "int8", scale=sb, zero_point=zb)],
                            [TensorSpec(out, "int8", scale=so, zero_point=zo)])
    (tmp_path / "m.tflite").write_bytes(model)
    res = verify_model(tmp_path / "m.tflite", CompileOptions(load_target("host")), samples=4, seed=1)
    assert res.reference == "tflite-micro"
    assert all(o.ok and o.max_abs_error == 0 for o in res.outputs), res.outputs


# (lhs shape, rhs shape, lhs zero point, rhs zero point): attention's two products and a
# broadcast batch
BATCH_MATMUL = [((1, 2, 16, 8), (1, 2, 8, 16), -3, 7), ((2, 1, 5, 6), (1, 3, 6, 4), 0, -128), ((4, 9), (9, 3), 12, 0)]


@pytest.mark.parametrize("a,b,za,zb", BATCH_MATMUL)
def test_batch_matmul_int8_in_c(tmp_path, a, b, za, zb):
    out = np.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])
    model = single_op_model("BATCH_MATMUL", [TensorSpec(a, "int8", scale=0.05, zero_point=za),
                                             TensorSpec(b, "int8", scale=0.03, zero_point=zb)],
                            [TensorSpec(out, "int8", scale=0.04 * np.sqrt(a[-1]), zero_point=-5)],
                            {"adj_x": False, "adj_y": False})
    (tmp_path / "m.tflite").write_bytes(model)
    res = verify_model(tmp_path / "m.tflite", CompileOptions(load_target("host")), samples=4, seed=2)
    assert res.reference == "tflite-micro"
    assert all(o.ok and o.max_abs_error == 0 for o in res.outputs), res.outputs


# (input shape, output size, align_corners, half_pixel_centers): up and down, each transform
RESIZE_BILINEAR = [((1, 4, 5, 3), (8, 10), False, False), ((1, 4, 5, 3), (8, 10), False, True),
                   ((1, 4, 5, 3), (7, 9), True, False), ((2, 9, 7, 2), (4, 3), False, True),
                   ((1, 3, 3, 1), (1, 5), True, False)]


@pytest.mark.parametrize("shape,size,align,half", RESIZE_BILINEAR)
def test_resize_bilinear_int8_in_c(tmp_path, shape, size, align, half):
    from tflite_models import const

    model = single_op_model("RESIZE_BILINEAR", [TensorSpec(shape, "int8", scale=0.05, zero_point=-7),
                                                const(np.array(size, np.int32))],
                            [TensorSpec((shape[0], *size, shape[3]), "int8", scale=0.05, zero_point=-7)],
                            {"align_corners": align, "half_pixel_centers": half})
    (tmp_path / "m.tflite").write_bytes(model)
    res = verify_model(tmp_path / "m.tflite", CompileOptions(load_target("host")), samples=4, seed=2)
    assert res.reference == "tflite-micro"
    assert all(o.ok and o.max_abs_error == 0 for o in res.outputs), res.outputs


# (input shape, weights [O, KH, KW, I], output shape, stride, padding, per-channel, bias)
TRANSPOSE_CONV = [((1, 4, 5, 3), (6, 3, 3, 3), (1, 8, 10, 6), 2, "SAME", True, True),
                  ((1, 4, 4, 2), (4, 3, 3, 2), (1, 9, 9, 4), 2, "VALID", False, True),
                  ((2, 3, 3, 4), (5, 2, 2, 4), (2, 3, 3, 5), 1, "SAME", True, False)]


@pytest.mark.parametrize("x,w,out,stride,padding,per_channel,with_bias", TRANSPOSE_CONV)
def test_transpose_conv_int8_in_c(tmp_path, x, w, out, stride, padding, per_channel, with_bias):
    from tflite_models import const

    rng = np.random.default_rng(5)
    scales = list(rng.uniform(0.005, 0.02, w[0])) if per_channel else [0.01]
    weights = const(rng.integers(-127, 128, w).astype(np.int8), "int8", scale=scales, zero_point=[0] * len(scales),
                    quantized_dimension=0)
    bias = const(rng.integers(-2000, 2000, w[0]).astype(np.int32), "int32",
                 scale=[0.05 * s for s in np.broadcast_to(scales, w[0])], zero_point=[0] * w[0]) if with_bias else None
    acc_scale = 0.05 * 0.01 * np.sqrt(w[1] * w[2] * w[3] / stride ** 2) * 40
    model = single_op_model("TRANSPOSE_CONV", [const(np.array(out, np.int32)), weights,
                                               TensorSpec(x, "int8", scale=0.05, zero_point=-4),
                                               *([bias] if with_bias else [])],
                            [TensorSpec(out, "int8", scale=float(acc_scale), zero_point=3)],
                            {"padding": padding, "stride_w": stride, "stride_h": stride})
    (tmp_path / "m.tflite").write_bytes(model)
    res = verify_model(tmp_path / "m.tflite", CompileOptions(load_target("host")), samples=4, seed=2)
    assert res.reference == "tflite-micro"
    assert all(o.ok and o.max_abs_error == 0 for o in res.outputs), res.outputs

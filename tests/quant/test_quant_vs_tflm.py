"""codegen.quant against the TFLite Micro interpreter itself, one operator at a time.

Each test writes a one-operator .tflite with random quantization parameters
(tests/quant/tflm_oneop.py), runs it in the `tflite-micro` pip package and requires the
numpy emulation to agree on every element. test_double_rounding_is_what_tflm_uses pins down
the build flavour: the same kernels with TFLITE_SINGLE_ROUNDING's MultiplyByQuantizedMultiplier
disagree with TFLM.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import quant as q
from codegen.quant import elementwise
from codegen.quant.fixedpoint import rounding_average

tflm = pytest.importorskip("tflm_oneop", reason="tflite-micro not installed")
T, OPS = tflm.T, tflm.OPS
ACTS = ["none", "relu", "relu6", "relu_n1_to_1"]


def rand_scale(rng, lo=-3.0, hi=0.5) -> float:
    return float(np.float32(10 ** rng.uniform(lo, hi)))


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_binary_ops(op):
    rng = np.random.default_rng({"add": 1, "sub": 2, "mul": 3}[op])
    n = 1024
    for trial in range(12):
        s1, s2, so = rand_scale(rng), rand_scale(rng), rand_scale(rng)
        z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
        act = ACTS[trial % 4]
        x1 = rng.integers(-128, 128, (1, n)).astype(np.int8)
        x2 = rng.integers(-128, 128, (1, n)).astype(np.int8)
        opcode = {"add": OPS.ADD, "sub": OPS.SUB, "mul": OPS.MUL}[op]
        model = tflm.build(opcode, [T((1, n), "int8", s1, z1), T((1, n), "int8", s2, z2)],
                           T((1, n), "int8", so, zo), activation=act)
        want = tflm.run(model, x1, x2)
        if op == "mul":
            got = q.mul_int8(x1, x2, q.mul_params(s1, z1, s2, z2, so, zo, act))
        else:
            fn = q.add_int8 if op == "add" else q.sub_int8
            got = fn(x1, x2, q.add_sub_params(op, s1, z1, s2, z2, so, zo, act))
        np.testing.assert_array_equal(got, want, err_msg=f"{op} {s1} {z1} {s2} {z2} {so} {zo} {act}")


def test_broadcast_add():
    rng = np.random.default_rng(4)
    x1 = rng.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    x2 = rng.integers(-128, 128, (1, 1, 4)).astype(np.int8)
    model = tflm.build(OPS.ADD, [T((2, 3, 4), "int8", 0.02, 5), T((1, 1, 4), "int8", 0.07, -9)],
                       T((2, 3, 4), "int8", 0.05, 1))
    got = q.add_int8(x1, x2, q.add_sub_params("add", 0.02, 5, 0.07, -9, 0.05, 1))
    np.testing.assert_array_equal(got, tflm.run(model, x1, x2))


def test_double_rounding_is_what_tflm_uses(monkeypatch):
    """TFLM's pip package is built without TFLITE_SINGLE_ROUNDING: the double-rounding
    emulation matches every element, the single-rounding one does not."""
    rng = np.random.default_rng(5)
    n = 4096
    x1 = rng.integers(-128, 128, (1, n)).astype(np.int8)
    x2 = rng.integers(-128, 128, (1, n)).astype(np.int8)
    params = (0.05, 3, 0.07, -5, 0.1, 1)
    model = tflm.build(OPS.MUL, [T((1, n), "int8", 0.05, 3), T((1, n), "int8", 0.07, -5)],
                       T((1, n), "int8", 0.1, 1))
    want = tflm.run(model, x1, x2)
    p = q.mul_params(*params)
    np.testing.assert_array_equal(q.mul_int8(x1, x2, p), want)

    def single_rounding(x, multiplier, shift):
        x, m, s = np.broadcast_arrays(*(np.asarray(v, np.int64) for v in (x, multiplier, shift)))
        total = 31 - s
        return ((x * m + (np.int64(1) << (total - 1))) >> total).astype(np.int32)

    monkeypatch.setattr(elementwise, "multiply_by_quantized_multiplier", single_rounding)
    assert np.count_nonzero(q.mul_int8(x1, x2, p) != want) > 10


def test_logistic_tanh_all_inputs():
    rng = np.random.default_rng(6)
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    for _ in range(15):
        s, z = rand_scale(rng, -3, 0.7), int(rng.integers(-128, 128))
        p = q.logistic_tanh_params(s, z)
        model = tflm.build(OPS.LOGISTIC, [T((1, 256), "int8", s, z)], T((1, 256), "int8", 1 / 256, -128))
        np.testing.assert_array_equal(q.logistic_int8(x, p), tflm.run(model, x))
        model = tflm.build(OPS.TANH, [T((1, 256), "int8", s, z)], T((1, 256), "int8", 1 / 128, 0))
        want = tflm.run(model, x)
        np.testing.assert_array_equal(q.tanh_int8(x, p), want)
        lut = q.unary_lut_int8(lambda v: q.tanh_int8(v, p))
        np.testing.assert_array_equal(lut[x.view(np.uint8)], want)


def test_softmax_int8_and_int16_out():
    rng = np.random.default_rng(7)
    for _ in range(12):
        s, z = rand_scale(rng, -2, 0.5), int(rng.integers(-128, 128))
        beta = float(rng.choice([1.0, 0.5, 2.0, float(np.float32(rng.uniform(0.1, 3)))]))
        shape = (4, int(rng.integers(1, 60)))
        x = rng.integers(int(rng.integers(-128, 100)), 128, shape).astype(np.int8)
        p = q.softmax_params(beta, s)
        for dtype, oscale, ozp in (("int8", 1 / 256, -128), ("int16", 1 / 65536, -32768)):
            model = tflm.build(OPS.SOFTMAX, [T(shape, "int8", s, z)], T(shape, dtype, oscale, ozp),
                               beta=beta)
            np.testing.assert_array_equal(q.softmax_int8(x, p, dtype), tflm.run(model, x))


def test_quantize_requantize_dequantize():
    rng = np.random.default_rng(8)
    xq = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    for _ in range(15):
        s, z = rand_scale(rng), int(rng.integers(-128, 128))
        so, zo = rand_scale(rng), int(rng.integers(-128, 128))
        model = tflm.build(OPS.QUANTIZE, [T((1, 256), "int8", s, z)], T((1, 256), "int8", so, zo))
        m, sh = q.requantize_params(s, so)
        np.testing.assert_array_equal(q.requantize_int8(xq, m, sh, z, zo), tflm.run(model, xq))
        model = tflm.build(OPS.DEQUANTIZE, [T((1, 256), "int8", s, z)], T((1, 256), "float32"))
        np.testing.assert_array_equal(q.dequantize_int8(xq, s, z).view(np.int32),
                                      tflm.run(model, xq).view(np.int32))
        xf = np.concatenate([(np.arange(-64, 64) + 0.5) * np.float32(so),
                             rng.standard_normal(128) * 100 * so]).astype(np.float32).reshape(1, 256)
        model = tflm.build(OPS.QUANTIZE, [T((1, 256), "float32")], T((1, 256), "int8", so, zo))
        np.testing.assert_array_equal(q.quantize_float_to_int8(xf, so, zo), tflm.run(model, xf))


def avg_pool_same(x, fh, fw, sh, sw):
    """NHWC average pool with SAME padding built on rounding_average (windows clipped at the
    border, so counts vary)."""
    n, h, w, c = x.shape
    oh, ow = -(-h // sh), -(-w // sw)
    ph = max((oh - 1) * sh + fh - h, 0) // 2
    pw = max((ow - 1) * sw + fw - w, 0) // 2
    out = np.empty((n, oh, ow, c), np.int8)
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * sh - ph, j * sw - pw
            win = x[:, max(y0, 0):min(y0 + fh, h), max(x0, 0):min(x0 + fw, w), :].astype(np.int64)
            out[:, i, j, :] = rounding_average(win.sum(axis=(1, 2)), win.shape[1] * win.shape[2])
    return out


def test_average_pool_rounding():
    rng = np.random.default_rng(9)
    x = rng.integers(-128, 128, (1, 7, 9, 3)).astype(np.int8)
    for fh, fw, sh, sw in ((3, 3, 2, 2), (2, 4, 1, 3), (7, 9, 1, 1)):
        oh, ow = -(-7 // sh), -(-9 // sw)
        model = tflm.build(OPS.AVERAGE_POOL_2D, [T(x.shape, "int8", 0.1, 2)],
                           T((1, oh, ow, 3), "int8", 0.1, 2), pool=(fh, fw, sh, sw, "SAME"))
        np.testing.assert_array_equal(avg_pool_same(x, fh, fw, sh, sw), tflm.run(model, x))

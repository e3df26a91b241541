"""Sparse constants (TFLite sparsity parameters) densified at import, and float16 weights behind
DEQUANTIZE folded to float32: models as the converter writes them (sparse weights -> DENSIFY
-> [DEQUANTIZE ->] the op), compared with LiteRT, whose DENSIFY kernel is TFLite's own
format converter, so it checks Kiln's reading independently."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.frontends.tflite import load_bytes
from helpers import run_c
from tflite_cases import mismatch
from tflite_models import ModelWriter, TensorSpec, const, run_litert, sparse_const

RNG = np.random.default_rng(11)


def _sparse(shape, density=0.3, dtype=np.float32):
    w = RNG.standard_normal(shape).astype(dtype)
    w[RNG.random(shape) > density] = 0
    return w


def _fc_model(weights: TensorSpec, half: bool = False) -> bytes:
    """x -> FULLY_CONNECTED(x, DENSIFY(weights) [-> DEQUANTIZE]) -> y."""
    w = ModelWriter()
    out_features, in_features = weights.shape
    x = w.tensor(TensorSpec((2, in_features), name="x"))
    y = w.tensor(TensorSpec((2, out_features), name="y"))
    ws = w.tensor(weights)
    dense = w.tensor(TensorSpec(weights.shape, weights.dtype, name="dense"))
    w.op("DENSIFY", [ws], [dense])
    if half:
        f32 = w.tensor(TensorSpec(weights.shape, name="w_f32"))
        w.op("DEQUANTIZE", [dense], [f32])
        dense = f32
    w.op("FULLY_CONNECTED", [x, dense, None], [y])
    return w.build([x], [y])


LAYOUTS = [  # (traversal order, formats, block map, block size)
    ("csr_rows", (0, 1), ("DENSE", "SPARSE_CSR"), (), ()),
    ("csr_both_transposed", (1, 0), ("SPARSE_CSR", "SPARSE_CSR"), (), ()),
    ("block_1x4", (0, 1, 2), ("DENSE", "SPARSE_CSR", "DENSE"), (1,), (4,)),
    ("block_2x4", (0, 1, 2, 3), ("DENSE", "SPARSE_CSR", "DENSE", "DENSE"), (0, 1), (2, 4)),
]


@pytest.mark.parametrize("label, order, formats, block_map, block_size", LAYOUTS, ids=[x[0] for x in LAYOUTS])
def test_sparse_weights_are_densified_as_litert_does(label, order, formats, block_map, block_size):
    dense = _sparse((6, 16), 0.1)
    spec = sparse_const(dense, "float32", order, formats, block_map, block_size, name="w_sparse")
    assert spec.data.size < dense.size  # the file really holds fewer values
    model = _fc_model(spec)
    g = load_bytes(model)
    np.testing.assert_array_equal(g.values["dense"].data, dense)
    x = RNG.standard_normal((2, 16)).astype(np.float32)
    (want,) = run_litert(model, x)
    assert not mismatch(want, run_c(g, [{"x": x}])[0]["y"])


def test_sparse_float16_weights_behind_dequantize():
    """The issue's model: FLOAT16[8, 1, 1, 32] stored sparse (154 bytes), DENSIFY, DEQUANTIZE, conv."""
    dense = _sparse((8, 1, 1, 32), 0.25, np.float16)
    spec = sparse_const(dense, "float16", (0, 1, 2, 3), ("DENSE", "DENSE", "DENSE", "SPARSE_CSR"), name="w16")
    w = ModelWriter()
    x = w.tensor(TensorSpec((1, 3, 3, 32), name="x"))
    y = w.tensor(TensorSpec((1, 3, 3, 8), name="y"))
    ws = w.tensor(spec)
    d16 = w.tensor(TensorSpec(dense.shape, "float16", name="w_dense16"))
    d32 = w.tensor(TensorSpec(dense.shape, name="w_f32"))
    w.op("DENSIFY", [ws], [d16])
    w.op("DEQUANTIZE", [d16], [d32])
    bias = w.tensor(const(RNG.standard_normal(8).astype(np.float32)))  # LiteRT's float conv needs one
    w.op("CONV_2D", [x, d32, bias], [y], {"padding": "VALID", "stride_w": 1, "stride_h": 1})
    model = w.build([x], [y])
    g = load_bytes(model)
    assert [n.op for n in g.nodes] == ["Conv2D"]  # DENSIFY and DEQUANTIZE folded at import
    np.testing.assert_array_equal(g.values["w_f32"].data, dense.astype(np.float32))
    xs = RNG.standard_normal((1, 3, 3, 32)).astype(np.float32)
    (want,) = run_litert(model, xs)
    assert not mismatch(want, run_c(g, [{"x": xs}])[0]["y"])


def test_sparse_int8_weights_keep_their_quantization():
    dense = RNG.integers(-127, 128, (4, 8)).astype(np.int8)
    dense[RNG.random(dense.shape) > 0.4] = 0
    spec = sparse_const(dense, "int8", (0, 1), ("DENSE", "SPARSE_CSR"), scale=0.02)
    g = load_bytes(_fc_model_int8(spec))
    w = g.values[g.nodes[0].inputs[1]]
    np.testing.assert_array_equal(w.data, dense)
    assert w.quant.scale == pytest.approx((0.02,))


def _fc_model_int8(weights: TensorSpec) -> bytes:
    w = ModelWriter()
    x = w.tensor(TensorSpec((1, 8), "int8", scale=0.1, name="x"))
    y = w.tensor(TensorSpec((1, 4), "int8", scale=0.2, name="y"))
    w.op("FULLY_CONNECTED", [x, w.tensor(weights), None], [y])
    return w.build([x], [y])


def test_malformed_sparsity_is_one_clear_error():
    spec = sparse_const(_sparse((4, 8)), "float32", (0, 1), ("DENSE", "SPARSE_CSR"), name="w_bad")
    spec.sparsity["dim_metadata"][1]["indices"][0] = 99  # outside the row
    with pytest.raises(KilnError, match=r"w_bad.*malformed sparse tensor: level 1: an array index lies outside"):
        load_bytes(_fc_model(spec))
    spec = sparse_const(_sparse((4, 8)), "float32", (0, 1), ("DENSE", "SPARSE_CSR"), name="w_short")
    short = TensorSpec(spec.shape, spec.dtype, data=spec.data[:-1], sparsity=spec.sparsity, name="w_short")
    with pytest.raises(KilnError, match="place .* values, the buffer holds"):
        load_bytes(_fc_model(short))

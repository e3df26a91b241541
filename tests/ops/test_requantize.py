"""Requantize: every integer pair TFLite Micro's QUANTIZE requantizes (int8 -> uint8 / int16 /
int32, int16 -> int8 / int16 / int32, uint8 -> int8), the numpy reference against the TFLite
Micro interpreter and the generated C against the reference, bit for bit, over the whole input
range (saturation included)."""

from __future__ import annotations

import numpy as np
import pytest

import unary_testing as ut
from codegen.errors import KilnError
from codegen.ir import Quant, run_graph
from codegen.ops.requantize import PAIRS
from op_testing import assert_c_equals_reference

OP = "Requantize"
# A zero point in range for each type (int16 and int32 tensors of TFLite models are symmetric).
_ZP = {"int8": -5, "uint8": 130, "int16": 0, "int32": 3}


def _inputs(dtype: str, rng) -> np.ndarray:
    info = np.iinfo(dtype)
    x = rng.integers(int(info.min), int(info.max) + 1, 254).astype(dtype)
    return np.concatenate([x, np.array([info.min, info.max], dtype)]).reshape(4, -1)


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_matches_tflm_and_c(src, dst):
    rng = np.random.default_rng(len(src) * 7 + len(dst))
    x = _inputs(src, rng)
    qi, qo = (0.02, _ZP[src]), (float(np.float32(0.02 * rng.uniform(0.05, 3.0))), _ZP[dst])
    g = ut.unary_graph(OP, x.shape, src, Quant.of(*qi), Quant.of(*qo), to=dst)
    want = ut.tflite_unary("QUANTIZE", qi, qo, x, out_dtype=dst, in_dtype=src)
    np.testing.assert_array_equal(run_graph(g, {"x": x})[g.outputs[0]], want)
    out = assert_c_equals_reference(g, [{"x": x}])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)


def test_unsupported_pair_is_refused_with_the_pairs():
    with pytest.raises(KilnError, match="int8 to int8 is not supported"):
        ut.unary_graph(OP, (2, 3), "int8", Quant.of(0.1, 0), Quant.of(0.2, 0), to="int8")

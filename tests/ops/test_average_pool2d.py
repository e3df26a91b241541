"""AveragePool2D: float32 against onnxruntime (count_include_pad=0), int8 against TFLite Micro
(one-op models, including the AVERAGE_POOL_2D of three MLPerf Tiny models), and the generated
C against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

import pool_testing as pt
from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant
from helpers import build_graph

OP = "AveragePool2D"


@pytest.mark.parametrize("shape,kernel,strides,pads", pt.FLOAT_CASES)
def test_float_matches_onnxruntime_and_c(shape, kernel, strides, pads):
    pt.check_float(OP, shape, kernel, strides, pads)


@pytest.mark.parametrize("activation", ["relu", "relu6", "relu_n1_to_1"])
def test_float_fused_activation(activation):
    pt.check_float(OP, (1, 6, 6, 3), (3, 3), (1, 1), (1, 1, 1, 1), activation)


@pytest.mark.parametrize("shape,kernel,strides,padding,activation,scale,zp,seed", [
    ((1, 8, 8, 4), (2, 2), (2, 2), "VALID", "none", 0.05, -3, 0),
    ((2, 7, 9, 3), (3, 3), (2, 2), "SAME", "none", 0.02, 5, 1),   # clipped windows
    ((1, 6, 5, 2), (4, 3), (1, 2), "SAME", "relu", 0.1, -128, 2),
    ((1, 5, 5, 8), (3, 3), (1, 1), "SAME", "relu6", 0.03, 10, 3),
    ((1, 4, 4, 3), (2, 2), (1, 1), "VALID", "relu_n1_to_1", 0.01, 0, 4),
])
def test_int8_matches_tflm_and_c(shape, kernel, strides, padding, activation, scale, zp, seed):
    pt.check_int8(OP, shape, kernel, strides, padding, activation, scale, zp, seed)


@pytest.mark.parametrize("model", ["vww_96_int8.tflite", "kws_ref_model.tflite",
                                   "pretrainedResnet_quant.tflite"])
def test_int8_mlperf_average_pools_match_tflm(models_dir, model):
    pools = pt.mlperf_pools(models_dir / model, "AVERAGE_POOL_2D")
    assert pools, "the model has an AVERAGE_POOL_2D"
    for k, (shape, kernel, strides, padding, act, scale, zp) in enumerate(pools):
        pt.check_int8(OP, shape, kernel, strides, padding, act, scale, zp, seed=k)


def test_int8_needs_equal_input_and_output_quantization():
    b = GraphBuilder("p")
    x = b.input("x", "int8", (1, 4, 4, 1), Quant.of(0.1, 0))
    y = b.node(OP, [x], kernel=(2, 2), strides=(2, 2), quant=Quant.of(0.2, 0))
    with pytest.raises(KilnError, match="quantization to equal"):
        build_graph(b.output(y).build())


@pytest.mark.parametrize("attrs,message", [
    ({"kernel": (2, 2), "pads": (2, 0, 0, 0)}, "smaller than the kernel"),
    ({"kernel": (0, 2)}, "must be positive"),
    ({"kernel": (6, 1)}, "larger than the padded input"),
    ({"kernel": (2,)}, "needs 2 values"),
])
def test_bad_geometry_is_refused(attrs, message):
    b = GraphBuilder("p")
    x = b.input("x", "float32", (1, 4, 4, 1))
    with pytest.raises(KilnError, match=message):
        b.node(OP, [x], **attrs)


def test_int8_rounds_half_away_from_zero():
    """Window sums of -3 and 3 over 2 positions average to -2 and 2 (TFLM's rounding)."""
    b = GraphBuilder("p")
    q = Quant.of(1.0, 0)
    x = b.input("x", "int8", (1, 1, 4, 1), q)
    y = b.node(OP, [x], kernel=(1, 2), strides=(1, 2), quant=q)
    g = b.output(y).build()
    from codegen.ir import run_graph
    out = run_graph(g, {"x": np.array([-1, -2, 1, 2], np.int8).reshape(1, 1, 4, 1)})[y]
    assert out.ravel().tolist() == [-2, 2]

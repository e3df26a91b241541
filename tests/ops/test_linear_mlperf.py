"""Every CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED layer of the MLPerf Tiny models,
run alone: Kiln's reference and generated C against the layer's input and output as the
reference runtime computed them inside the whole model (TFLite Micro for int8, bit for bit;
LiteRT's reference kernels for float32, within 1e-5 relative)."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import run_graph
from codegen.ops.registry import get_op
from helpers import run_c
from tflm_layers import merge_layers, model_layers

INT8 = ["kws_ref_model.tflite", "vww_96_int8.tflite", "pretrainedResnet_quant.tflite",
        "ad01_int8.tflite", "str_ww_ref_model.tflite"]
FLOAT = ["kws_ref_model_float32.tflite", "vww_96_float.tflite", "pretrainedResnet.tflite",
         "ad01_fp32.tflite"]


def close(got: np.ndarray, want: np.ndarray) -> bool:
    return float(np.abs(got - want).max()) <= 1e-5 * max(float(np.abs(want).max()), 1e-30)


@pytest.mark.parametrize("model", INT8 + FLOAT)
def test_layers_match_reference_runtime(models_dir, model):
    layers = model_layers(models_dir / model, seed=3)
    assert layers
    for layer in layers:
        node = layer.graph.nodes[0]
        get_op(node.op).check(node, layer.graph)
        got = run_graph(layer.graph, {"x": layer.x})[layer.graph.outputs[0]]
        want = layer.y.reshape(got.shape)
        assert got.shape == layer.y.shape or layer.op == "FullyConnected", layer.name
        if got.dtype == np.int8:
            np.testing.assert_array_equal(got, want, err_msg=layer.name)
        else:
            assert close(got, want), layer.name
    g, feeds, expected = merge_layers(layers, name="layers")
    out = run_c(g, [feeds], sanitize=False)[0]  # the small op tests build with sanitizers
    for name, want in expected.items():
        if want.dtype == np.int8:
            np.testing.assert_array_equal(out[name], want, err_msg=name)
        else:
            assert close(out[name], want), name


def test_layers_cover_every_kernel_variant(models_dir):
    """The models exercise what the tests above claim: int8 with padding and a non-zero
    input zero point, stride 2, per-channel weights, depthwise, and fully connected."""
    seen = set()
    for model in INT8:
        for layer in model_layers(models_dir / model):
            node = layer.graph.nodes[0]
            x = layer.graph.values["x"]
            seen.add(layer.op)
            if any(node.attrs.get("pads", ())) and x.quant.zp != 0:
                seen.add("padded, zp != 0")
            if tuple(node.attrs.get("strides", ())) == (2, 2):
                seen.add("stride 2")
            if layer.graph.values[node.inputs[1]].quant.per_channel:
                seen.add("per-channel")
    assert seen >= {"Conv2D", "DepthwiseConv2D", "FullyConnected", "padded, zp != 0",
                    "stride 2", "per-channel"}

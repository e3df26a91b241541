"""The fast int8 kernels (cortex_m_dsp, mve) with their output overlapping their input at the
distance they declare (codegen/kernels/inplace.py: allow_pair_conv_overlap,
allow_rows_depthwise_overlap), every usable alias forced, run in QEMU: bit-exact with the
numpy reference. Each layer sits between two Clips so that its input dies at its call."""

from __future__ import annotations

import math

import numpy as np
import pytest

from codegen.ir import Graph, GraphBuilder, Quant, run_graph
from codegen.targets import load_target
from codegen.verify import qemu
from codegen.verify.samples import random_samples
from memory.inplace_nets import forced_inplace

pytestmark = pytest.mark.usefixtures("cortex_m")

# (op, input shape, weights shape, attributes): every path of the fast kernels
LAYERS = [
    ("Conv2D", (1, 6, 7, 4), (8, 3, 3, 4), {"pads": (1, 1, 1, 1)}),  # im2col pairs
    ("Conv2D", (1, 5, 5, 8), (16, 1, 1, 8), {}),  # widening pointwise, odd pixels
    ("Conv2D", (1, 4, 6, 32), (12, 1, 1, 32), {}),  # pointwise, 16k channels (Helium: copied when overlapped)
    ("Conv2D", (2, 4, 4, 6), (10, 1, 1, 6), {}),  # two images, even pixels
    ("Conv2D", (1, 5, 5, 16), (16, 1, 1, 16), {}),  # Helium: pointwise in place, each pair's outputs held
    ("Conv2D", (1, 3, 7, 24), (16, 1, 1, 24), {}),  # same, narrowing, windows past in_c
    ("Conv2D", (1, 9, 8, 3), (5, 3, 3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1)}),
    ("Conv2D", (1, 5, 6, 16), (8, 3, 3, 16), {"pads": (1, 1, 1, 1)}),  # Helium: rows read in place, output held a row
    ("Conv2D", (1, 7, 8, 16), (12, 3, 3, 16), {"strides": (2, 2), "pads": (1, 1, 1, 1)}),  # same, strided
    ("DepthwiseConv2D", (1, 6, 5, 8), (1, 3, 3, 8), {"pads": (1, 1, 1, 1)}),  # padded rows
    ("DepthwiseConv2D", (1, 7, 7, 16), (1, 3, 3, 16), {"strides": (2, 2)}),  # unpadded
    ("DepthwiseConv2D", (1, 9, 1, 16), (1, 5, 1, 16), {"pads": (2, 0, 2, 0)}),  # 1-D, padded rows
    ("DepthwiseConv2D", (1, 9, 1, 12), (1, 5, 1, 12), {}),  # 1-D, unpadded
    ("DepthwiseConv2D", (1, 5, 5, 6), (1, 3, 3, 6), {"pads": (1, 1, 1, 1)}),  # DSP: generic (6 channels)
    ("DepthwiseConv2D", (1, 5, 4, 3), (1, 3, 3, 6), {"depth_multiplier": 2, "pads": (1, 1, 1, 1)}),
    ("FullyConnected", (1, 61), (6, 61), {}),  # DSP: read in place, a partial last word
    ("FullyConnected", (1, 130), (3, 130), {"activation": "relu"}),
]


def _chain_graph() -> Graph:
    rng = np.random.default_rng(11)
    b = GraphBuilder("fast_overlap")
    for k, (op, x_shape, w_shape, attrs) in enumerate(LAYERS):
        axis = 3 if op == "DepthwiseConv2D" else 0
        channels = w_shape[axis]
        w_scales = rng.uniform(0.002, 0.01, channels)
        depth = int(np.prod(w_shape)) // channels
        out_scale = 0.02 * float(np.mean(w_scales)) * math.sqrt(depth) * 110 * 73 * 5 / 255
        q_in = Quant.of(0.02, -5)
        x = b.input(f"x{k}", "int8", x_shape, q_in)
        y = b.node("Clip", [x], name=f"clip{k}", quant=q_in, min=-2.0, max=2.0)
        w = b.const(f"w{k}", rng.integers(-127, 128, w_shape, dtype=np.int8), quant=Quant.of(w_scales, 0, axis))
        bias = b.const(f"b{k}", rng.integers(-3000, 3000, channels).astype(np.int32),
                       quant=Quant.of(0.02 * w_scales, 0, 0))
        y = b.node(op, [y, w, bias], name=f"layer{k}", quant=Quant.of(out_scale, 3), **attrs)
        b.output(b.node("Clip", [y], name=f"out{k}", quant=Quant.of(out_scale, 3), min=-1e3, max=1e3))
    return b.build()


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_fast_kernels_overlapping_their_input_are_bit_exact(target):
    g = _chain_graph()
    plain, files, chosen = forced_inplace(g, target)
    overlapped = {a.out for a in chosen if a.out.startswith("layer")}
    # every conv and depthwise layer declares an overlap that saves bytes; the fully connected
    # layers none (their output is smaller than one input row)
    assert overlapped == {f"layer{k}" for k, (op, *_) in enumerate(LAYERS) if op != "FullyConnected"}
    if target == "cortex-m4":  # the DSP fully connected kernel reads these rows in place
        fc = [c for c in plain.lowered.calls if c.kernel == "fully_connected_s8"]
        assert [c.params["widen"] for c in fc] == [0, 0]
    samples = random_samples(plain.manifest["inputs"], 2, seed=4)
    got = qemu.run_generated(files, "t", samples, load_target(target))
    for sample, out in zip(samples, got):
        for name, expected in run_graph(g, sample).items():
            np.testing.assert_array_equal(out[name], expected, err_msg=f"{target} {name}")

"""codegen/kernels/onnxruntime_dsp/ (`--numerics onnxruntime` on DSP cores): bit-exact with the
portable onnxruntime kernels (codegen/kernels/onnxruntime/, themselves bit-exact with
onnxruntime: tests/quant/test_onnxruntime_numerics.py), both run on cortex-m4 under QEMU.
The probe of tests/core/test_variant_kernels.py cannot compare this variant with the reference
kernels, whose arithmetic is TFLite's (OTHER_ARITHMETIC there names this file)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from codegen.compiler import with_numerics
from codegen.options import CompileOptions
from codegen.verify import qemu
from codegen.verify.samples import random_samples
from codegen.targets import load_target
from helpers import build_graph
from ops.linear_testing import int8_layer, merge

# every path: in_k a multiple of 4 or not, output channels a multiple of 4 or not, the row
# widened to int16 scratch (many batches) or read in place (one long row), a fused clamp
LAYERS = [((3, 33), (7, 33), dict(activation="relu")), ((5, 16), (8, 16), {}), ((1, 250), (6, 250), {}),
          ((2, 7), (3, 7), dict(per_channel=False)), ((4, 64), (13, 64), dict(in_zp=-128))]


@pytest.fixture(scope="module")
def m4():
    from cortex_m.conftest import missing_tools  # tests/cortex_m

    if missing_tools():
        pytest.skip(missing_tools())
    return load_target("cortex-m4")


def test_fully_connected_equals_the_portable_onnxruntime_kernel(m4):
    layers = [int8_layer("FullyConnected", x, w, seed=k, **attrs) for k, (x, w, attrs) in enumerate(LAYERS)]
    g, _, outputs = merge(layers)
    # the variants --numerics onnxruntime gives cortex-m4 (compile_model applies with_numerics)
    dsp = with_numerics(CompileOptions(m4, numerics="onnxruntime")).target
    assert dsp.variants[:2] == ("onnxruntime_dsp", "onnxruntime")
    fast = build_graph(g, "t", target=dsp, numerics="onnxruntime", fusion="off")
    portable = build_graph(g, "t", target=replace(m4, variants=("onnxruntime", "reference")), numerics="onnxruntime",
                           fusion="off")
    assert {(c.kernel, c.variant) for c in fast.lowered.calls} == {("fully_connected_s8", "onnxruntime_dsp")}
    assert {(c.kernel, c.variant) for c in portable.lowered.calls} == {("fully_connected_s8", "onnxruntime")}
    feeds = random_samples(fast.manifest["inputs"], 3, seed=11)
    for got, want in zip(qemu.run_generated(fast.files, "t", feeds, m4),
                         qemu.run_generated(portable.files, "t", feeds, m4)):
        for out in outputs:
            np.testing.assert_array_equal(got[out], want[out], err_msg=out)

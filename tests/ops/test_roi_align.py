"""RoiAlign: the reference against onnxruntime (average and max, both coordinate modes, fixed
and adaptive sampling), the generated C against the reference, including ROIs partly outside
the map, degenerate ROIs and a batch index outside the batch."""

import numpy as np
import pytest

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from helpers import run_c

ROIS = np.float32([[0, 0, 9, 9], [0, 5, 4, 9], [5, 5, 9, 9], [2.5, 1.2, 7.7, 3.3], [-3, -2, 4, 12], [4, 4, 4, 4]])


def roi_graph(batch, **attrs):
    b = GraphBuilder("roi")
    y = b.node("RoiAlign", [b.input("x", "float32", (batch, 3, 10, 10)), b.input("rois", "float32", ROIS.shape),
                            b.input("idx", "int64", (len(ROIS),))], **attrs)
    return b.output(y).build(), y


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("half_pixel", [True, False])
@pytest.mark.parametrize("ratio", [0, 2])
def test_reference_matches_onnxruntime(mode, half_pixel, ratio):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    idx = np.array([0, 1, 0, 1, 1, 0], np.int64)
    attrs = dict(mode=mode, output_height=3, output_width=4, sampling_ratio=ratio, spatial_scale=0.8)
    g, y = roi_graph(2, half_pixel=half_pixel, **attrs)
    got = run_graph(g, {"x": x, "rois": ROIS, "idx": idx})[y]
    want = ort_node("RoiAlign", {"x": x, "rois": ROIS, "idx": idx},
                    dict(coordinate_transformation_mode="half_pixel" if half_pixel else "output_half_pixel", **attrs),
                    opset=16)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_c_matches_reference(mode):
    rng = np.random.default_rng(1)
    g, y = roi_graph(2, mode=mode, output_height=2, output_width=3, sampling_ratio=0, spatial_scale=1.0)
    feed = {"x": rng.standard_normal((2, 3, 10, 10)).astype(np.float32), "rois": ROIS,
            "idx": np.array([0, 1, 5, 1, 0, 1], np.int64)}  # 5: outside the batch, zeros
    want = run_graph(g, feed)[y]
    assert not want[2].any()
    (out,) = run_c(g, [feed])
    np.testing.assert_allclose(out[y], want, rtol=1e-5, atol=1e-5)

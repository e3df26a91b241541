"""Window geometry of the 2-D ops: output sizes, SAME pads, validation, the window view."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import Node
from codegen.ops.conv_geometry import conv_geometry, output_size, same_pads, windows


def node(**attrs) -> Node:
    base = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0)}
    return Node("Conv2D", "conv", ["x", "w"], ["y"], {**base, **attrs})


@pytest.mark.parametrize("size,k,s,d,before,after,expected", [
    (5, 3, 1, 1, 0, 0, 3),     # VALID
    (5, 3, 1, 1, 1, 1, 5),     # SAME, stride 1
    (96, 3, 2, 1, 0, 1, 48),   # TFLite SAME, stride 2: the odd pixel at the end
    (7, 3, 1, 2, 0, 0, 3),     # dilation 2: a 5-wide window
    (6, 3, 2, 1, 0, 0, 2),     # the last partial position is dropped
    (1, 1, 1, 1, 0, 0, 1),
])
def test_output_size(size, k, s, d, before, after, expected):
    assert output_size(size, k, s, d, before, after) == expected


def test_same_pads_match_tflite_and_onnx_same_upper():
    assert same_pads((96, 96), (3, 3), (2, 2)) == (0, 0, 1, 1)
    assert same_pads((5, 5), (3, 3), (2, 2)) == (1, 1, 1, 1)
    assert same_pads((7, 10), (3, 4), (1, 1), (2, 1)) == (2, 1, 2, 2)
    assert same_pads((4, 4), (1, 1), (2, 2)) == (0, 0, 0, 0)
    for size in range(1, 12):
        for s in (1, 2, 3):
            for k in (1, 2, 3, 5):
                top, left, bottom, right = same_pads((size, size), (k, k), (s, s))
                assert output_size(size, k, s, 1, top, bottom) == -(-size // s)
                assert 0 <= bottom - top <= 1 and (top, bottom) == (left, right)


def test_geometry_fields():
    g = conv_geometry(node(strides=(2, 1), dilations=(1, 2), pads=(1, 0, 1, 2)), (2, 7, 6, 3), (3, 3))
    assert (g.batches, g.out_h, g.out_w) == (2, 4, 4)
    assert g.has_padding
    assert g.params()["pad_left"] == 0 and "pad_right" not in g.params()


@pytest.mark.parametrize("attrs,message", [
    ({"pads": (0, -1, 0, 0)}, "pads"),
    ({"pads": (0, 0, 0)}, "pads"),
    ({"strides": (0, 1)}, "strides"),
    ({"dilations": (1,)}, "dilations"),
    ({"strides": "2"}, "strides"),
])
def test_bad_attributes_are_refused_naming_the_node(attrs, message):
    with pytest.raises(KilnError, match=message) as err:
        conv_geometry(node(**attrs), (1, 8, 8, 1), (3, 3))
    assert err.value.node == "conv"


def test_window_larger_than_the_padded_input_is_refused():
    with pytest.raises(KilnError, match="does not fit"):
        conv_geometry(node(dilations=(3, 3), pads=(1, 1, 1, 1)), (1, 4, 4, 1), (3, 3))
    with pytest.raises(KilnError, match="4-D"):
        conv_geometry(node(), (4, 4, 1), (3, 3))


def test_windows_equal_a_naive_gather():
    rng = np.random.default_rng(0)
    x = rng.integers(-50, 50, size=(2, 6, 7, 3))
    n = node(strides=(2, 3), dilations=(2, 1), pads=(1, 2, 3, 0))
    g = conv_geometry(n, x.shape, (2, 3))
    win = windows(x, g, fill=-99)
    assert win.shape == (2, g.out_h, g.out_w, 2, 3, 3)
    for oy in range(g.out_h):
        for ox in range(g.out_w):
            for ky in range(2):
                for kx in range(3):
                    iy, ix = oy * 2 - 1 + ky * 2, ox * 3 - 2 + kx
                    inside = 0 <= iy < 6 and 0 <= ix < 7
                    want = x[:, iy, ix, :] if inside else np.full((2, 3), -99)
                    np.testing.assert_array_equal(win[:, oy, ox, ky, kx, :], want)

"""PRelu: the reference against onnxruntime with per-channel, scalar and full slopes, the C
against the reference; a slope that would grow x is refused."""

import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from float_binary_testing import check_binary


def test_prelu_matches_onnxruntime_and_c():
    check_binary("PRelu", "PRelu", shapes=[((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (3, 1)), ((2, 3, 4), ()),
                                           ((1, 4, 4, 8), (8,))])


def test_slope_must_broadcast_to_x():
    b = GraphBuilder("prelu")
    with pytest.raises(KilnError, match="does not broadcast"):
        b.node("PRelu", [b.input("x", "float32", (3,)), b.input("s", "float32", (2, 3))])

import numpy as np
import pytest

from codegen.emit.literals import C_INFINITY, c_float, c_int
from codegen.ir import GraphBuilder
from helpers import run_c


def test_floats_round_trip_exactly():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(2000).astype(np.float32) * 10.0 ** rng.integers(-30, 30, 2000),
                             np.array([0.0, -0.0, 1e-45, 3.4028235e38, 1 / 3], np.float32)]).astype(np.float32)
    for v in values:
        text = c_float(float(v))
        assert text.endswith("f")
        assert np.float32(text[:-1]) == v


def test_infinities_are_exact_and_int_extremes_never_warn():
    assert c_float(float("inf")) == C_INFINITY
    assert c_float(float("-inf")) == f"(-{C_INFINITY})"
    assert c_float(3.5e38) == C_INFINITY  # rounds to infinity in float32
    assert c_float(3.4028235e38) == "3.4028235e+38f"
    with pytest.raises(ValueError):
        c_float(float("nan"))
    assert c_int(-(2**31)) == "(-2147483647 - 1)"
    assert c_int(2**64 - 1) == "18446744073709551615ULL"
    assert c_int(7) == "7"


def test_infinite_constants_and_bounds_survive_the_strict_c_build():
    """-inf in a weight and Relu's +inf bound (Clip max) reach the C code as infinities."""
    b = GraphBuilder("inf")
    x = b.input("x", "float32", (4,))
    s = b.node("Add", [x, b.const("c", np.float32([-np.inf, np.inf, 1.0, 0.0]))])
    y = b.node("Clip", [s], min=0.0, max=float("inf"))
    g = b.output(y).build()
    feed = {"x": np.float32([1.0, 2.0, np.inf, 3e38])}
    got = run_c(g, [feed])[0][y]
    np.testing.assert_array_equal(got, np.float32([0.0, np.inf, np.inf, 3e38]))

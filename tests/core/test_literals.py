import numpy as np
import pytest

from codegen.emit.literals import C_INFINITY, c_float, c_floats, c_int
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


def test_vectorised_floats_print_exactly_what_c_float_prints():
    """c_floats (weight arrays) decides digit counts in float64 and hands doubtful values to
    c_float: random bit patterns over the whole range, denormals, neighbours of powers of ten
    and of two, one-digit values, infinities and values that round to them."""
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    p10 = np.array([10.0**k for k in range(-45, 39)]).astype(np.float32)
    p2 = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)
    values = np.concatenate([
        bits[~np.isnan(bits)], p10, np.nextafter(p10, np.float32(np.inf)), np.nextafter(p10, np.float32(0)), p2,
        np.nextafter(p2, np.float32(0)), np.arange(1, 3000, dtype=np.uint32).view(np.float32),
        (np.arange(-3000, 3000) / 100).astype(np.float32), (rng.standard_normal(3000) * 0.05).astype(np.float32),
        np.float32([0.0, -0.0, np.inf, -np.inf, 9.9999999, 9.999999e-5, 3.4028235e38, 1 / 3])])
    values = np.concatenate([values, -values])
    assert c_floats(values) == [c_float(v) for v in values.tolist()]
    assert c_floats(np.float64([3.5e38, -1e300, 0.1])) == [C_INFINITY, f"(-{C_INFINITY})", "1.0e-01f"]
    with pytest.raises(ValueError):
        c_floats(np.float32([1.0, np.nan]))


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

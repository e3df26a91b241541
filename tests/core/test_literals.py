import numpy as np

from codegen.emit.literals import c_float, c_int


def test_floats_round_trip_exactly():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(2000).astype(np.float32) * 10.0 ** rng.integers(-30, 30, 2000),
                             np.array([0.0, -0.0, 1e-45, 3.4028235e38, 1 / 3], np.float32)]).astype(np.float32)
    for v in values:
        text = c_float(float(v))
        assert text.endswith("f")
        assert np.float32(text[:-1]) == v


def test_infinities_become_flt_max_and_int_extremes_never_warn():
    assert c_float(float("inf")) == "3.4028235e+38f"
    assert c_float(float("-inf")) == "-3.4028235e+38f"
    assert c_int(-(2**31)) == "(-2147483647 - 1)"
    assert c_int(7) == "7"

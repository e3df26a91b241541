"""DynamicUpdateSlice: the generated C against the numpy reference, start indices computed at
run time (clamped into the operand as TFLite does). TFLite's cases against TFLite Micro:
tests/frontends/test_tflite_builtins.py (DYNAMIC_UPDATE_SLICE)."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from codegen.ops.dynamic_update_slice import clamped_starts
from helpers import assert_c_matches_interpreter, run_c


def dus_graph(dtype, shape, update_shape, index_dtype="int32"):
    b = GraphBuilder("g")
    operand = b.input("operand", dtype, shape)
    update = b.input("update", dtype, update_shape)
    starts = b.input("starts", index_dtype, (len(shape),))
    return b.output(b.node("DynamicUpdateSlice", [operand, update, starts])).build()


@pytest.mark.parametrize("dtype,shape,update_shape", [
    ("float32", (4, 5, 3), (2, 3, 3)), ("int8", (7,), (3,)), ("int16", (2, 3, 4, 5), (1, 2, 2, 5)),
    ("bool", (3, 3), (1, 2))])
def test_c_matches_reference(dtype, shape, update_shape):
    assert_c_matches_interpreter(dus_graph(dtype, shape, update_shape), count=3)


def test_every_position_including_clamped_ones():
    g = dus_graph("int32", (3, 4), (2, 2), "int64")
    rng = np.random.default_rng(1)
    samples = [{"operand": rng.integers(-9, 9, (3, 4)).astype(np.int32), "update": np.full((2, 2), 100, np.int32),
                "starts": np.array([r, c], np.int64)} for r in range(-1, 4) for c in (-5, 0, 1, 2, 3, 9)]
    for sample, out in zip(samples, run_c(g, samples)):
        np.testing.assert_array_equal(out[g.outputs[0]].reshape(3, 4), run_graph(g, sample)[g.outputs[0]])


def test_clamping_follows_tflite():
    assert clamped_starts(np.array([-3, 2, 9]), (4, 5, 6), (2, 5, 3)) == [0, 0, 3]


def test_larger_update_is_refused():
    with pytest.raises(KilnError, match="larger than operand"):
        dus_graph("float32", (3,), (4,))

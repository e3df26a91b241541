"""TableLookup: the 256-value int8 table the TFLite frontend writes for TFLite Micro's
fixed-point unary ops (their bit-exactness with TFLite Micro: tests/frontends/
test_tflite_int8_fixed_point.py), its reference, the generated C and a bad table refused."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from helpers import run_c
from op_testing import finish

Q = Quant.of(0.1, 0)
# table order: the input byte read as uint8, so entry k is the output for int8(k)
TABLE = tuple(int(v) for v in np.clip(np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64) * 3 - 7,
                                      -128, 127))


def _graph(table=TABLE):
    b = GraphBuilder("lut")
    return finish(b, b.node("TableLookup", [b.input("x", "int8", (2, 130), Q)], table=table, quant=Q))


def test_reference_and_c_look_up_every_byte():
    g = _graph()
    x = np.resize(np.arange(-128, 128, dtype=np.int8), (2, 130))
    want = np.clip(x.astype(np.int64) * 3 - 7, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(run_graph(g, {"x": x})[g.outputs[0]], want)
    np.testing.assert_array_equal(run_c(g, [{"x": x}])[0][g.outputs[0]], want)


@pytest.mark.parametrize("table", [TABLE[:255], TABLE[:255] + (200,)])
def test_a_table_of_other_than_256_int8_values_is_refused(table):
    from helpers import build_graph

    with pytest.raises(KilnError, match="256 int8 values"):
        build_graph(_graph(table))

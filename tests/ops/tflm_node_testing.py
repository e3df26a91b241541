"""One TFLite operator imported as one Kiln node: its numpy reference and its generated C
against the TFLite Micro interpreter, bit for bit."""

from __future__ import annotations

import numpy as np

from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from op_testing import assert_c_equals_reference
from tflite_models import run_tflm


def check_against_tflm_and_c(model: bytes, op: str, feeds: list[np.ndarray]) -> None:
    """`model` imports as the single node `op`; its reference and its C equal TFLite Micro on `feeds`."""
    g = load_bytes(model, name="m")
    assert [n.op for n in g.nodes] == [op]
    want = run_tflm(model, *feeds)[0]
    feed = dict(zip(g.inputs, feeds))
    np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], want)
    out = assert_c_equals_reference(g, [feed])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)

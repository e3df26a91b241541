"""TFLite builtins whose quantized kernels are TFLite Micro's own fixed-point arithmetic, from a
.tflite file to the generated C, bit-exact with the TFLite Micro interpreter: int8 DIV, int16
SQUARED_DIFFERENCE, int8 LOG_SOFTMAX, L2_NORMALIZATION and CUMSUM (the op-level tests are in tests/ops), each int8 one once on
the emulated Cortex-M4."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import verify_model
from tflite_cases import Case, i32, run_case, t
from tflite_models import TensorSpec, single_op_model

# (a shape, b shape, dtype, (a scale, zp), (b scale, zp), (out scale, zp), fused activation)
BINARY = [
    ("DIV", (2, 3, 8), (1, 1, 8), "int8", (0.05, -3), (0.02, 5), (0.1, -10), "NONE"),
    ("DIV", (4, 5), (4, 5), "int8", (0.3, 127), (0.01, -128), (2.0, 20), "RELU6"),
    ("DIV", (1, 7), (3, 1), "int8", (1.0, 0), (1.0, 0), (1.0, 0), "RELU_N1_TO_1"),
    ("SQUARED_DIFFERENCE", (2, 3, 8), (1, 3, 1), "int16", (0.002, 0), (0.003, 0), (0.05, 0), "NONE"),
    ("SQUARED_DIFFERENCE", (5, 6), (5, 6), "int16", (0.5, 0), (0.5, 0), (1e-4, 0), "NONE"),
]


@pytest.mark.parametrize("op,sa,sb,dtype,qa,qb,qo,act", BINARY)
def test_binary_in_c_matches_tflite_micro(tmp_path, op, sa, sb, dtype, qa, qb, qo, act):
    opts = {"fused_activation_function": act} if op == "DIV" else {}
    model = single_op_model(op, [TensorSpec(sa, dtype, *qa), TensorSpec(sb, dtype, *qb)],
                            [TensorSpec(np.broadcast_shapes(sa, sb), dtype, *qo)], opts)
    (tmp_path / "m.tflite").write_bytes(model)
    res = verify_model(tmp_path / "m.tflite", CompileOptions(load_target("host")), samples=4, seed=1)
    assert res.reference == "tflite-micro"
    assert all(o.ok and o.max_abs_error == 0 for o in res.outputs), res.outputs


def test_div_int8_on_cortex_m4_bit_exact():
    case = Case("DIV", "int8", "m4", [t((2, 3, 8), "int8"), t((1, 3, 8), "int8", scale=0.02, zero_point=7)],
                [t((2, 3, 8), "int8", scale=0.2, zero_point=-5)], {"fused_activation_function": "RELU"})
    outcome = run_case(case, samples=2, target="cortex-m4")
    assert outcome.status == "pass", outcome.reason


# (shape, input scale, input zero point, output scale, output zero point) of a one-input op
UNARY = {
    "LOG_SOFTMAX": [((3, 37), 0.1, -3, 16 / 256, 127), ((2, 300), 0.02, 100, 16 / 256, 127)],
    "L2_NORMALIZATION": [((2, 3, 16), 0.05, -3, 1 / 128, 0), ((4, 9), 0.2, 127, 0.05, 10)],
}


def _unary_model(op, shape, s_in, zp_in, s_out, zp_out) -> bytes:
    return single_op_model(op, [TensorSpec(shape, "int8", s_in, zp_in)], [TensorSpec(shape, "int8", s_out, zp_out)])


@pytest.mark.parametrize("op,spec", [(op, spec) for op, specs in UNARY.items() for spec in specs])
def test_unary_in_c_matches_tflite_micro(tmp_path, op, spec):
    (tmp_path / "m.tflite").write_bytes(_unary_model(op, *spec))
    res = verify_model(tmp_path / "m.tflite", CompileOptions(load_target("host")), samples=4, seed=2)
    assert res.reference == "tflite-micro"
    assert all(o.ok and o.max_abs_error == 0 for o in res.outputs), res.outputs


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_on_cortex_m4_bit_exact(op):
    shape, s_in, zp_in, s_out, zp_out = UNARY[op][0]
    case = Case(op, "int8", "m4", [t(shape, "int8", scale=s_in, zero_point=zp_in)],
                [t(shape, "int8", scale=s_out, zero_point=zp_out)])
    outcome = run_case(case, samples=2, target="cortex-m4")
    assert outcome.status == "pass", outcome.reason


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_cumsum_int8_exclusive_reverse_matches_tflite_micro(target):
    case = Case("CUMSUM", "int8", "ex1_rev1_rescaled", [t((3, 9, 4), "int8", scale=0.02, zero_point=60), i32(-2)],
                [t((3, 9, 4), "int8", scale=0.1, zero_point=-20)], {"exclusive": True, "reverse": True})
    outcome = run_case(case, samples=2, target=target)
    assert outcome.status == "pass", outcome.reason

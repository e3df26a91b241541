"""A subset of the TFLite builtin cases (tests/tflite_case_table.py) as Cortex-M4F firmware in
QEMU (mps2-an386), compared with TFLite Micro bit for bit (int8, int16) or LiteRT (float32): the
converters' Kiln op chains give the same numbers on the target as on the host."""

from __future__ import annotations

import pytest

from tflite_case_table import cases_for
from tflite_cases import run_together

pytestmark = pytest.mark.usefixtures("cortex_m")

INT8 = [("STRIDED_SLICE", 0), ("RESIZE_NEAREST_NEIGHBOR", 2), ("MAXIMUM", 0), ("GATHER_ND", 0),
        ("MIRROR_PAD", 1), ("DEPTH_TO_SPACE", 0), ("SPLIT_V", 0), ("REDUCE_MAX", 0)]
# 16x8 and int16: the int64 accumulators and shifts of these kernels on a 32-bit target.
INT16 = [("CONV_2D", 1), ("DEPTHWISE_CONV_2D", 1), ("FULLY_CONNECTED", 1), ("AVERAGE_POOL_2D", 1),
         ("ADD", 1), ("SOFTMAX", 1), ("TANH", 3), ("QUANTIZE", 3), ("TRANSPOSE_CONV", 3), ("BATCH_MATMUL", 2)]
FLOAT = [("TRANSPOSE_CONV", 0), ("RESIZE_BILINEAR", 2), ("L2_NORMALIZATION", 0), ("LOG_SOFTMAX", 0),
         ("FLOOR_MOD", 0), ("RSQRT", 0)]


@pytest.mark.parametrize("dtype, picks", [("int8", INT8), ("int16", INT16), ("float32", FLOAT)],
                         ids=["int8", "int16", "float32"])
def test_builtins_on_cortex_m4_match_reference(dtype, picks):
    cases = [cases_for(op, dtype)[k] for op, k in picks]
    mid = (len(cases) + 1) // 2
    for half in (cases[:mid], cases[mid:]):  # a few per firmware (see test_tflite_builtins.GROUPS)
        results = run_together(half, target="cortex-m4")
        assert {k: v for k, v in results.items() if v} == {}

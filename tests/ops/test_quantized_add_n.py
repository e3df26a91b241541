"""QuantizedAddN (TFLite Micro's int8 ADD_N): 2, 4 and 15 inputs with extreme zero points,
through the TFLite frontend, against the TFLite Micro interpreter and in generated C."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_models import TensorSpec, single_op_model
from tflm_node_testing import check_against_tflm_and_c


@pytest.mark.parametrize("count,in_q,out_q", [(2, (0.05, -128), (0.05, 127)), (4, (0.02, 37), (0.09, -11)),
                                              (15, (0.01, 127), (0.2, 0))])
def test_add_n_int8_matches_tflm_and_c(count, in_q, out_q):
    rng = np.random.default_rng(count)
    feeds = [rng.integers(-128, 128, (1, 16, 16)).astype(np.int8) for _ in range(count)]
    feeds[0][0, 0] = 127  # the extremes together
    feeds[1][0, 0] = 127
    spec = TensorSpec((1, 16, 16), "int8", *in_q)
    model = single_op_model("ADD_N", [spec] * count, [TensorSpec((1, 16, 16), "int8", *out_q)])
    check_against_tflm_and_c(model, "QuantizedAddN", feeds)

"""QuantizedPRelu (TFLite Micro's int8 / int16 PRELU): every int8 input (a sweep of int16 ones)
against alphas across the int8 range, through the TFLite frontend, against the TFLite Micro
interpreter and in generated C."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_models import TensorSpec, const, single_op_model
from tflm_node_testing import check_against_tflm_and_c

ALPHAS = np.array([-128, -77, -1, 0, 1, 5, 64, 127], np.int8)  # one per channel


@pytest.mark.parametrize("dtype,in_q,alpha_q,out_q", [
    ("int8", (0.05, -3), (0.01, 4), (0.05, -3)), ("int8", (0.02, 17), (0.003, -128), (0.07, 9)),
    ("int16", (0.002, 0), (0.01, 4), (0.0031, 0))])
def test_prelu_on_every_input_matches_tflm_and_c(dtype, in_q, alpha_q, out_q):
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1, 1 if dtype == "int8" else 37).astype(dtype)
    x = np.repeat(values[:, None], len(ALPHAS), axis=1)[None]  # every value against every alpha
    alpha = const(ALPHAS, "int8", scale=alpha_q[0], zero_point=alpha_q[1])
    model = single_op_model("PRELU", [TensorSpec(x.shape, dtype, *in_q), alpha], [TensorSpec(x.shape, dtype, *out_q)])
    check_against_tflm_and_c(model, "QuantizedPRelu", [x])

"""CumSum: running sum along `axis` (ONNX CumSum, TFLite CUMSUM); float32. The shared
kernel cumulative_f32 (see cumulative)."""

from __future__ import annotations

import numpy as np

from codegen.ops.cumulative import CumulativeOp
from codegen.ops.registry import register


@register
class CumSum(CumulativeOp):
    name = "CumSum"
    numpy_fn = staticmethod(np.cumsum)
    identity = 0.0
    is_product = False

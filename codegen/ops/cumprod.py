"""CumProd: running product along `axis` (ONNX CumProd); float32. The shared
kernel cumulative_f32 (see cumulative)."""

from __future__ import annotations

import numpy as np

from codegen.ops.cumulative import CumulativeOp
from codegen.ops.registry import register


@register
class CumProd(CumulativeOp):
    name = "CumProd"
    numpy_fn = staticmethod(np.cumprod)
    identity = 1.0
    is_product = True

"""TableLookup: an int8 -> int8 function given as its 256 values (the TFLite frontend's
tabulation of TFLite Micro's fixed-point arithmetic for HARD_SWISH, RSQRT, ABS, ELU and
LEAKY_RELU, codegen/frontends/tflite/lut.py).

`table` holds the output for every input byte read as uint8 (0..127, then -128..-1), the order
of the shared `unary_lut_s8` kernel: one load per element, in place, and a `lut` step of a fused
int8 chain like every other int8 unary op.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import register
from codegen.ops.unary import UnaryOp


@register
class TableLookup(UnaryOp):
    name = "TableLookup"
    attributes = {"table": ()}
    kernels = ("unary_lut_s8",)
    float_kernel = None  # int8 only: never a float32 step of a fused chain

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8",))
        cls.int8_fn(node, g)

    @classmethod
    def int8_fn(cls, node, g):
        table = np.asarray(node.attrs["table"], dtype=np.int64)
        if table.shape != (256,) or table.min() < -128 or table.max() > 127:
            raise KilnError("TableLookup needs 256 int8 values", node=node.name)
        table = table.astype(np.int8)
        return lambda x: table[np.asarray(x, np.int8).view(np.uint8)]

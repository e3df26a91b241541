"""NonZero: the coordinates of the non-zero elements of x, one row per axis (ONNX NonZero).

The number of non-zero elements depends on the data: the output is int64[rank, numel] with
axis 1 bounded (codegen/ops/bounded.py); the kernel writes [rank, nnz] compactly and reports
nnz. Floats compare with 0 (-0.0 is zero, NaN is not); integers and bools test their bits,
so int8, uint8 and bool share a kernel, and so on per width.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.bounded import LengthArg, check_graph_outputs_only
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

MAX_RANK = 8  # the kernel's strides[] field
DTYPES = ("float32", "bool", *INTEGER_DTYPES)
# one kernel per element width: integers and bools are non-zero when any bit is set
# (the template renders one kernel `non_zero__<width>` per C type: template variables name, T)
KERNEL = {"float32": ("f32", "float"), "bool": ("u8", "uint8_t"), "int8": ("u8", "uint8_t"),
          "uint8": ("u8", "uint8_t"), "int16": ("u16", "uint16_t"), "uint16": ("u16", "uint16_t"),
          "int32": ("u32", "uint32_t"), "uint32": ("u32", "uint32_t"), "int64": ("u64", "uint64_t"),
          "uint64": ("u64", "uint64_t")}


@register
class NonZero(Op):
    name = "NonZero"
    kind = OpKind.OPAQUE
    attributes: dict = {}
    arity = (1, 1)
    kernels = tuple(dict.fromkeys(f"non_zero__{suffix}" for suffix, _ in KERNEL.values()))  # one per width

    @classmethod
    def bounded_outputs(cls, node, g):
        return {0: 1}

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if not 1 <= len(x.shape) <= MAX_RANK:
            raise KilnError(f"NonZero takes a tensor of rank 1 to {MAX_RANK}, not {len(x.shape)}",
                            node=node.name)
        return [("int64", (len(x.shape), x.size))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, DTYPES)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        return [np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)]

    @classmethod
    def lower(cls, node, ctx):
        check_graph_outputs_only(node, ctx.g)
        x, out = node.inputs[0], node.outputs[0]
        shape = ctx.g.values[x].shape
        strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        params = {"rank": len(shape), "size": int(np.prod(shape, dtype=np.int64)),
                  "dims": tuple(shape) + (1,) * (MAX_RANK - len(shape)),
                  "strides": tuple(strides) + (1,) * (MAX_RANK - len(shape))}
        suffix, _ = KERNEL[ctx.g.values[x].dtype]
        ctx.request(KernelRequest(f"non_zero__{suffix}", node, params, (ctx.tensor(x), ctx.tensor(out), LengthArg(out))))

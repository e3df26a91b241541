"""LabelEncoder: each element replaced by the value of its key, or by a default (ONNX ai.onnx.ml
LabelEncoder with numeric keys and values); float32, int64, int32 and int16 on either side.

The frontend hands the keys ascending and unique (a repeated key keeps its last value, as
ONNX says), a NaN key apart (`nan_key`: NaN inputs take `nan_value`, whatever their bits);
the kernel binary-searches a `const` key table in flash. Strings are not Kiln tensors.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.broadcast_binary import SUFFIX
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

DTYPES = ("float32", "int64", "int32", "int16")


def kernel_name(key_dtype: str, value_dtype: str) -> str:
    """One kernel per (key, value) C type pair, from one template (variables name, K, V, float_keys)."""
    return f"label_encoder__{SUFFIX[key_dtype]}_{SUFFIX[value_dtype]}"


@register
class LabelEncoder(Op):
    name = "LabelEncoder"
    kind = OpKind.ELEMENTWISE
    attributes = {"keys": (), "values": (), "default": 0, "nan_key": False, "nan_value": 0, "to": "int64"}
    arity = (1, 1)
    kernels = tuple(kernel_name(k, v) for k in DTYPES for v in DTYPES)  # one per (key, value) C type pair

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        a = node.attrs
        if a["to"] not in DTYPES:
            raise KilnError(f"LabelEncoder to {a['to']} is not supported (supported: {', '.join(DTYPES)})",
                            node=node.name)
        keys = list(a["keys"])
        if len(keys) != len(a["values"]) or keys != sorted(set(keys)) or any(k != k for k in keys):
            raise KilnError("LabelEncoder keys must be unique, ascending, not NaN, one per value", node=node.name)
        return [(a["to"], x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, DTYPES)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        a = node.attrs
        out_type = np_dtype(a["to"])
        keys = np.asarray(a["keys"], x.dtype)
        values = np.asarray((*a["values"], a["default"]), out_type)
        at = np.minimum(np.searchsorted(keys, x), len(keys))
        found = at < len(keys)
        found[found] = keys[at[found]] == x[found]
        out = np.where(found, values[np.where(found, at, len(keys))], values[-1]).astype(out_type)
        if a["nan_key"]:
            out[np.isnan(x)] = a["nan_value"]
        return [out]

    @classmethod
    def lower(cls, node, ctx):
        a = node.attrs
        x = ctx.g.values[node.inputs[0]]
        nan_value = a["nan_value"] if a["nan_key"] else a["default"]
        params = {"n": x.size, "count": len(a["keys"]),
                  "keys": ctx.constant(node, "keys", a["keys"] or (0,), x.dtype),
                  # the values, then the default, then the value of NaN inputs
                  "values": ctx.constant(node, "values", (*a["values"], a["default"], nan_value), a["to"])}
        kernel = kernel_name(x.dtype, a["to"])
        ctx.request(KernelRequest(kernel, node, params, (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0]))))

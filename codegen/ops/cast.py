"""Cast: convert elements to another dtype (ONNX Cast / CastLike, TFLite CAST).

Between every dtype Kiln stores, as numpy's (ml_dtypes') astype does, except that float to
integer (int4 to int64) saturates to the target's range (NaN gives 0) where C would have undefined behaviour:
ONNX leaves out-of-range conversions undefined. Integers convert to narrower integers modulo
2**bits (int4, uint4, int2, uint2 too, one element per byte); anything non-zero is true.
Floats of every width go through float32: float64 is rounded to float32 first, the narrow
formats (runtime_c/kiln_float.h) round to nearest even (float8e8m0, a power of two, by
`round_mode`); a float8 target saturates when `saturate` is set (ONNX's default), float4e2m1
always. int8 values are converted raw (a Cast does not dequantize). A cast to the same dtype
is a view.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx.numpy_helper import saturate_cast, to_float8e8m0

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.ops.reshape import emit_copy

# Element type codes of the kernel (templates/kernels/reference/cast.c.j2).
TYPE_CODES = {"float32": 0, "int8": 1, "uint8": 2, "int16": 3, "int32": 4, "int64": 5, "bool": 6,
              "uint16": 7, "uint32": 8, "uint64": 9, "int4": 10, "uint4": 11, "int2": 12, "uint2": 13,
              "float64": 20, "float16": 21, "bfloat16": 22, "float8e4m3fn": 23, "float8e4m3fnuz": 24,
              "float8e5m2": 25, "float8e5m2fnuz": 26, "float4e2m1": 27, "float8e8m0": 28}
FLOATS = tuple(d for d, code in TYPE_CODES.items() if code == 0 or code >= 20)
SATURATING = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0")
ROUND_MODES = {"up": 0, "down": 1, "nearest": 2}  # of float8e8m0 targets (ONNX Cast's round_mode)
_SUB_BYTE_BITS = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2}
_FLOAT_NP = {np_dtype(d) for d in FLOATS}


def _wrap(v: np.ndarray, dtype: str) -> np.ndarray:
    """int64 values modulo 2**bits into `dtype` (numpy's astype for the byte-sized ones)."""
    if dtype not in _SUB_BYTE_BITS:
        return v.astype(np_dtype(dtype))
    bits = _SUB_BYTE_BITS[dtype]
    low = v & ((1 << bits) - 1)
    if dtype.startswith("int"):
        low = np.where(low >= 1 << (bits - 1), low - (1 << bits), low)
    return low.astype(np.int8 if dtype.startswith("int") else np.uint8).astype(np_dtype(dtype))


def _saturate_to_int(x: np.ndarray, dtype: str) -> np.ndarray:
    """float32 truncated toward zero, clamped to the range of integer `dtype` (NaN gives 0);
    int4, uint4, int2 and uint2 too (ONNX leaves the out-of-range values undefined)."""
    wide_type = np.dtype(np.uint64 if dtype == "uint64" else np.int64)
    info = ml_dtypes.iinfo(np_dtype(dtype))
    wide = np.trunc(np.clip(np.nan_to_num(x.astype(np.float64), nan=0.0), float(info.min), float(info.max)))
    top = wide >= float(info.max)  # float64 cannot hold INT64_MAX exactly
    out = np.where(top, 0, wide).astype(wide_type)
    out[top] = int(info.max)
    return _wrap(out.astype(np.int64), dtype) if dtype in _SUB_BYTE_BITS else out.astype(np_dtype(dtype))


def cast_array(x: np.ndarray, dtype: str, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """What the Cast kernel computes: astype with the rules of the module docstring."""
    target = np_dtype(dtype)
    src = np.asarray(x)
    with np.errstate(all="ignore"):
        if src.dtype in _FLOAT_NP or dtype in FLOATS:
            f = src.astype(np.float32)  # integers rounded to float32 first, as the kernel does
            if dtype == "bool":
                return f != 0
            if dtype in FLOATS:
                if dtype == "float8e8m0":
                    return to_float8e8m0(f, saturate, round_mode)
                if dtype in SATURATING and saturate:
                    return saturate_cast(f, target)
                return f.astype(target)
            return _saturate_to_int(f, dtype)
        if dtype == "bool":
            return src != 0
        wide = src.astype(np.uint64 if src.dtype == np.uint64 else np.int64).astype(np.int64)
        return _wrap(wide, dtype)


@register
class Cast(Op):
    name = "Cast"
    kind = OpKind.ELEMENTWISE
    attributes = {"to": "float32", "saturate": True, "round_mode": "up"}
    arity = (1, 1)
    kernels = ("cast", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        to = node.attrs["to"]
        if to not in TYPE_CODES:
            raise KilnError(f"Cast to {to} is not supported (supported: {', '.join(TYPE_CODES)})",
                            node=node.name)
        return [(to, x.shape)]

    @classmethod
    def check(cls, node, g):
        src = g.values[node.inputs[0]].dtype
        if src not in TYPE_CODES:
            raise KilnError(f"Cast from {src} is not supported", node=node.name)
        if node.attrs["round_mode"] not in ROUND_MODES:
            raise KilnError(f"Cast round_mode '{node.attrs['round_mode']}' is not one of {', '.join(ROUND_MODES)}",
                            node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        return [cast_array(args[0], node.attrs["to"], bool(node.attrs["saturate"]), node.attrs["round_mode"])]

    @classmethod
    def lower(cls, node, ctx):
        src, out = node.inputs[0], node.outputs[0]
        x = ctx.g.values[src]
        to = node.attrs["to"]
        if x.dtype == to:
            if not ctx.alias(out, src):
                emit_copy(node, ctx, src, out)
            return
        params = {"n": x.size, "from_": TYPE_CODES[x.dtype], "to": TYPE_CODES[to],
                  "saturate": bool(node.attrs["saturate"]) and to in SATURATING,
                  "round_mode": ROUND_MODES[node.attrs["round_mode"]]}
        ctx.request(KernelRequest("cast", node, params, (ctx.tensor(src), ctx.tensor(out))))


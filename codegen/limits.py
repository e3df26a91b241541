"""What a model may ask of Kiln, checked once at import and once after lowering.

Model files come from elsewhere (build systems, OTA pipelines): a file of a few hundred bytes
can claim a 10^12-element tensor, a zero-sized dimension, NaN weights or a zero scale. The
frontends parse defensively; this module holds the checks that are the same for every format,
so that such a model ends in one KilnError naming the tensor instead of an allocation the
machine cannot make, an arithmetic error deep in a pass, or C that does not compile.

Limits (generated C indexes with int32_t; no microcontroller, nor this compiler, has use for
more than 2 GiB of either weights or activations):
- a tensor: at most 2^31 - 1 elements and 2 GiB;
- all constants together (weights): 2 GiB; all computed tensors together: 2 GiB;
- constants computed at import time (ONNX nodes folded with constant inputs): at most
  max(64 MiB, 8 x the model file), so that a tiny file cannot make Kiln materialise and
  print gigabytes (a folded Expand or ConstantOfShape of absurd shape).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype

MAX_ELEMENTS = 2 ** 31 - 1
MAX_TENSOR_BYTES = 2 ** 31
MAX_WEIGHTS_BYTES = 2 ** 31
MAX_ACTIVATION_BYTES = 2 ** 31
MIN_FOLD_BUDGET = 64 * 2 ** 20
FOLD_FACTOR = 8
MAX_SHIFT = 31  # requantization shifts: the C helpers shift int32 values by at most 31 bits

_ZERO_POINT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
                     "int32": (-(2 ** 31), 2 ** 31 - 1)}


def elements(shape: Iterable[int]) -> int:
    """The element count of a shape, in Python integers (no int64 overflow on absurd dims)."""
    return math.prod(int(d) for d in shape)


def check_size(shape: Iterable[int], itemsize: int, what: str, *, node: str | None = None) -> None:
    """Refuse a tensor of `shape` that has a negative dimension or is beyond the limits."""
    dims = [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise KilnError(f"{what} has a negative dimension (shape {dims})", node=node)
    n = elements(dims)
    spread = elements(max(d, 1) for d in dims)  # [0, 10^12] holds nothing but is no less absurd
    if spread > MAX_ELEMENTS and n == 0:
        raise KilnError(f"{what} of shape {dims} is empty but its other dimensions span {spread} elements, "
                        f"more than Kiln supports ({MAX_ELEMENTS})", node=node)
    if n > MAX_ELEMENTS or n * itemsize > MAX_TENSOR_BYTES:
        raise KilnError(f"{what} of shape {dims} has {n} elements ({_bytes(n * itemsize)}), more than "
                        f"Kiln supports ({MAX_ELEMENTS} elements, {_bytes(MAX_TENSOR_BYTES)})", node=node)


def fold_budget(file_bytes: int) -> int:
    """Bytes of constants an import may compute from a model file of `file_bytes`."""
    return max(MIN_FOLD_BUDGET, FOLD_FACTOR * file_bytes)


def check_graph(g) -> None:
    """The invariants every imported graph must meet before passes and lowering see it:
    at least one output, every tensor but an unread graph input or output has at least one
    element and fits the limits, constants hold no NaN,
    quantization parameters are usable, sliding windows index within int32, and weights and
    activations fit the totals."""
    if not g.outputs:
        raise KilnError("the model has no outputs: there is nothing to compute")
    weights = activations = 0
    read = {i for node in g.nodes for i in node.inputs}
    for v in g.values.values():
        itemsize = np_dtype(v.dtype).itemsize
        kind = "constant" if v.is_const else "tensor"
        check_size(v.shape, itemsize, kind, node=v.name)
        n = elements(v.shape)
        # A tensor with no elements has no data: it may only be a graph input or output of the C
        # API that no call reads (the ONNX frontend binds it as an empty constant). Kernels, the
        # arena and the weight arrays never see one (C99 has no zero-length arrays).
        unread_io = v.name not in read and (v.name in g.inputs or (v.is_const and v.name in g.outputs))
        if n == 0 and not unread_io:
            raise KilnError(f"{kind} has no elements (shape {list(v.shape)}); Kiln computes no tensor "
                            "without elements at run time", node=v.name)
        if v.is_const:
            weights += n * itemsize
            if v.dtype == "float32" and np.isnan(v.data).any():
                where = np.unravel_index(int(np.argmax(np.isnan(v.data))), v.data.shape)
                raise KilnError(f"constant holds NaN (at index {list(map(int, where))})", node=v.name)
        else:
            activations += n * itemsize
        if v.quant is not None:
            check_quant(v.quant, v.dtype, v.shape, v.name)
    for node in g.nodes:
        check_window(node, g)
    if weights > MAX_WEIGHTS_BYTES:
        raise KilnError(f"the model's constants take {_bytes(weights)}, more than Kiln supports "
                        f"({_bytes(MAX_WEIGHTS_BYTES)})")
    if activations > MAX_ACTIVATION_BYTES:
        raise KilnError(f"the model's computed tensors take {_bytes(activations)} together, more than "
                        f"Kiln supports ({_bytes(MAX_ACTIVATION_BYTES)})")


def check_window(node, g) -> None:
    """Strides and dilations of a sliding-window op (conv, pool) are at least 1, and the index
    arithmetic of its kernel (out * stride - pad + k * dilation, in int32_t) cannot overflow."""
    strides = node.attrs.get("strides")
    if strides is None or not node.inputs or not node.outputs:
        return
    dilations = node.attrs.get("dilations") or (1,) * len(strides)
    pads = node.attrs.get("pads") or ()
    x, y = g.values.get(node.inputs[0]), g.values.get(node.outputs[0])
    w = g.values.get(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else None
    kernel = node.attrs.get("kernel") or (tuple(w.shape[1:1 + len(strides)]) if w is not None else ())
    for what, values in (("strides", strides), ("dilations", dilations)):
        if any(int(v) < 1 for v in values):
            raise KilnError(f"{node.op}: {what} {list(map(int, values))} must be at least 1", node=node.name)
    if x is None or y is None or len(x.shape) < 1 + len(strides) or len(y.shape) < 1 + len(strides):
        return
    pad = sum(abs(int(p)) for p in pads)
    for i, s in enumerate(strides):
        k = int(kernel[i]) if i < len(kernel) else 1
        extent = max(x.shape[1 + i], y.shape[1 + i]) * int(s) + k * int(dilations[i]) + pad
        if extent > MAX_ELEMENTS:
            raise KilnError(f"{node.op}: stride {int(s)}, dilation {int(dilations[i])} and kernel {k} over "
                            f"{x.shape[1 + i]} positions put indices beyond int32 range", node=node.name)


def check_quant(q, dtype: str, shape: tuple[int, ...], name: str) -> None:
    """Scales finite and positive, zero points inside the type, per-channel arrays one per channel."""
    bad = next((s for s in q.scale if not (math.isfinite(s) and s > 0)), None)
    if bad is not None:
        raise KilnError(f"quantization scale {bad} is not a positive finite number", node=name)
    lo, hi = _ZERO_POINT_RANGE.get(dtype, (-(2 ** 31), 2 ** 31 - 1))
    out = next((z for z in q.zero_point if not lo <= z <= hi), None)
    if out is not None:
        raise KilnError(f"zero point {out} is out of range for {dtype}", node=name)
    if len(q.zero_point) != len(q.scale):
        raise KilnError(f"{len(q.scale)} quantization scales but {len(q.zero_point)} zero points", node=name)
    if q.per_channel:
        axis = q.axis if q.axis is not None else 0
        if not -len(shape) <= axis < len(shape):
            raise KilnError(f"per-channel quantization axis {axis} is outside the tensor's rank {len(shape)}",
                            node=name)
        if shape[axis] != len(q.scale):
            raise KilnError(f"{len(q.scale)} per-channel scales, but dimension {axis} of {list(shape)} has "
                            f"{shape[axis]} channels", node=name)


def check_lowered(ctx) -> None:
    """Nothing the emitter cannot write or the kernels cannot compute: NaN in a constant array
    or a kernel parameter (a pass folding a negative variance, a NaN attribute), or a
    requantization shift (parameters named *shift*) beyond 31 bits, which would shift int32
    values by more than their width (undefined behaviour in C), from absurd scale ratios.
    Such a model is at fault, and its node is named."""
    origin = {}
    for call in ctx.calls:
        for arg in list(call.params.values()) + list(call.args):
            name = getattr(arg, "name", None)
            if name is not None:
                origin.setdefault(name, call)
        for key, value in call.params.items():
            if _has_nan(value):
                raise KilnError(f"{call.kernel}: parameter '{key}' is NaN (check the node's attributes "
                                "and constants)", node=", ".join(call.origin) or call.cname)
            if "shift" in key:
                check_shifts(call.kernel, key, value.data if hasattr(value, "data") else value,
                             ", ".join(call.origin) or call.cname)
    for const in ctx.consts:
        data = np.asarray(const.data)
        if data.dtype.kind == "f" and np.isnan(data).any():
            call = origin.get(const.name)
            node = ", ".join(call.origin) if call is not None and call.origin else const.name
            raise KilnError(f"constant '{const.name}' computed at compile time holds NaN (check the "
                            "node's constants, e.g. a negative variance)", node=node)


def check_shifts(kernel: str, key: str, shifts, node: str) -> None:
    """Requantization shifts of at most 31 bits either way. Checked on every kernel parameter
    named *shift* (check_lowered) and by the kernel specs whose parameter block packs the
    shifts into a table (codegen/kernels/linear.py), on the values before packing."""
    bad = [int(v) for v in np.asarray(shifts).reshape(-1) if not -MAX_SHIFT <= int(v) <= MAX_SHIFT]
    if bad:
        raise KilnError(f"{kernel}: the quantization scales give a rescale factor of 2^{bad[0]} "
                        f"('{key}'), beyond int32 fixed point (at most 2^{MAX_SHIFT}); check the "
                        "scales of the node's inputs and output", node=node)


def _has_nan(value) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (tuple, list)):
        return any(_has_nan(v) for v in value)
    return False


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"

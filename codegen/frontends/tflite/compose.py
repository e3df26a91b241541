"""Helpers for converters that build one TFLite builtin from several Kiln nodes.

A TFLite operator often maps onto a short chain of Kiln ops (DEPTH_TO_SPACE is a Reshape, a
Transpose and a Reshape; RSQRT is Reciprocal(Sqrt)). The intermediate nodes are named after
the operator (`<name>_<role>`) and carry it as their origin, so the generated C still says
which TFLite operator each kernel call comes from.

Quantized (int8, int16) tensors: Kiln only converts an operator on them where an existing
kernel gives TFLite Micro's results bit for bit. Data movement does (both copy the stored
values), provided input and output share one quantization, which `same_quant` checks;
everything else is refused by `refuse_quantized` with the reason.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from codegen.frontends.tflite.importer import OpContext

QUANTIZED = ("INT8", "INT16", "UINT8")


def step(ctx: OpContext, kiln_op: str, inputs: Sequence[str], role: str, *, quant=None, **attrs: Any) -> str:
    """Add an intermediate Kiln node of this operator; returns its output name."""
    return ctx.imp.b.node(kiln_op, list(inputs), name=f"{ctx.name}_{role}", quant=quant,
                          origin=(ctx.name,), **attrs)


def constant(ctx: OpContext, role: str, data: np.ndarray, quant=None) -> str:
    """A constant the conversion needs (an index table, a scalar)."""
    return ctx.imp.b.const(f"{ctx.name}_{role}", data, quant=quant)


def emit_output(ctx: OpContext, k: int, kiln_op: str, inputs: Sequence[str], **attrs: Any) -> None:
    """Define output k of the operator alone (UNPACK: one Kiln node per output)."""
    o = ctx.op.outputs[k]
    name = ctx.imp.b.node(kiln_op, list(inputs), name=ctx.imp.names[o], outputs=[ctx.imp.names[o]],
                          quant=ctx.imp.model.tensors[o].quant, origin=(ctx.name,), **attrs)
    ctx._check_output(o, name, kiln_op)  # the same type check as OpContext.emit
    ctx.imp.defined[o] = name


def known(ctx: OpContext, k: int) -> np.ndarray | None:
    """Input k's data when it is known at compile time: a constant of the file, or a value an
    earlier operator folded (SHAPE, a DEQUANTIZE of weights). None when computed at run time."""
    t = ctx.tensor(k)
    if t is None:
        return None
    if t.data is not None:
        return t.data
    name = ctx.imp.defined.get(ctx.op.inputs[k])
    value = ctx.imp.b.g.values.get(name) if name else None
    return value.data if value is not None and value.is_const else None


def ints(ctx: OpContext, k: int, what: str) -> list[int]:
    """Input k as a list of integers known at compile time."""
    data = known(ctx, k)
    if data is None:
        raise ctx.error(f"input {k} ({what}) must be known at compile time")
    if data.dtype.kind not in "iu":
        raise ctx.error(f"input {k} ({what}) must hold integers, got {data.dtype}")
    return [int(v) for v in np.asarray(data).reshape(-1)]


def one_int(ctx: OpContext, k: int, what: str) -> int:
    values = ints(ctx, k, what)
    if len(values) != 1:
        raise ctx.error(f"input {k} ({what}) holds {len(values)} values, expected 1")
    return values[0]


def type_name(ctx: OpContext, k: int = 0) -> str:
    return ctx.tensor(k).type_name


def refuse_quantized(ctx: OpContext, why: str, k: int = 0) -> None:
    """Refuse the operator on quantized input k: no Kiln kernel matches TFLite Micro there."""
    t = ctx.tensor(k)
    if t is not None and t.type_name in QUANTIZED:
        raise ctx.error(f"{t.type_name.lower()} is not supported: {why}")


def only_types(ctx: OpContext, allowed: Sequence[str], k: int = 0) -> None:
    """Refuse input k unless its TFLite type is one of `allowed` (the reason names the rest)."""
    t = ctx.tensor(k)
    if t is not None and t.type_name not in allowed:
        listing = ", ".join(a.lower() for a in allowed)
        raise ctx.error(f"{t.type_name.lower()} is not supported (Kiln converts {listing})")


def same_quant(ctx: OpContext, inputs: Sequence[int] = (0,), outputs: Sequence[int] = (0,)) -> None:
    """Quantized data movement: TFLite Micro copies the stored values, so Kiln converts it only
    when the inputs and outputs share one quantization (then the values mean the same)."""
    tensors = [ctx.tensor(k) for k in inputs] + [ctx.out_tensor(k) for k in outputs]
    tensors = [t for t in tensors if t is not None]
    if not any(t.type_name in QUANTIZED for t in tensors):
        return
    quants = {t.quant for t in tensors}
    if len(quants) > 1:
        raise ctx.error("quantized inputs and outputs have different quantizations (TFLite Micro "
                        "copies the stored values; Kiln needs them to mean the same)")


def axis(ctx: OpContext, value: int, rank: int) -> int:
    if not -rank <= value < rank:
        raise ctx.error(f"axis {value} is out of range for rank {rank}")
    return value % rank


_CLIP = {"relu": (0.0, float("inf")), "relu6": (0.0, 6.0), "relu_n1_to_1": (-1.0, 1.0)}


def finish(ctx: OpContext, kiln_op: str, inputs: Sequence[str], act: str = "none", **attrs: Any) -> None:
    """Emit the last node of a float chain, followed by the fused activation as a Clip."""
    if act == "none":
        ctx.emit(kiln_op, inputs, **attrs)
        return
    y = step(ctx, kiln_op, inputs, kiln_op.lower(), **attrs)
    lo, hi = _CLIP[act]
    ctx.emit("Clip", [y], min=lo, max=hi)

"""Declarations of in-place reuse, one call per op: what a kernel allows, for the planner.

Lowering only says what is *safe for the kernel*; whether the input dies at that call, and
whether taking the reuse pays, is the memory planner's decision (codegen.memory.Alias). The
emitter then runs the in-place kernel variant for the depthwise calls whose pair the plan took
(codegen.emit.layout.planned_calls).
"""

from __future__ import annotations

from codegen.lower.context import LowerContext
from codegen.lower.kernel import KernelCall, TensorArg


def allow_elementwise_inplace(ctx: LowerContext, call: KernelCall) -> KernelCall:
    """An elementwise kernel (out[i] from in[i] of each same-shaped input, read before it is
    written) may write its output over any input of the output's shape and byte size.
    Broadcast inputs are never candidates; if one shares storage with a candidate (a view of
    it), none is declared. Returns the call, so ops can wrap their `ctx.call`."""
    g = ctx.g
    out = call.writes[0]
    shape = g.values[out].shape
    tensors = [a.value for a in call.args if isinstance(a, TensorArg) and a.value != out]
    same = [v for v in tensors if g.values[v].shape == shape]
    roots = {ctx.root(v) for v in same}
    if any(ctx.root(v) in roots and g.values[v].shape != shape for v in tensors):
        return call
    for v in dict.fromkeys(same):
        ctx.allow_inplace(call, out, v)
    return call


def allow_depthwise_inplace(ctx: LowerContext, call: KernelCall) -> KernelCall:
    """A reference depthwise call (depthwise_conv2d_s8/_f32) may run in place as
    `depthwise_conv2d_inplace_<s8|f32>` with a one-channel temp: depth multiplier 1 and
    out_h * out_w <= in_h * in_w (see the template). Not for repacked (DSP/MVE) variants,
    whose params differ from the reference ones the in-place kernel takes."""
    p = call.params
    if call.kernel not in ("depthwise_conv2d_s8", "depthwise_conv2d_f32"):
        return call
    if ctx.kernel_variant(call.kernel) != "reference" or p["depth_multiplier"] != 1:
        return call
    if p["out_h"] * p["out_w"] > p["in_h"] * p["in_w"] or not isinstance(call.args[0], TensorArg):
        return call
    suffix = call.kernel.rsplit("_", 1)[1]
    itemsize = 1 if suffix == "s8" else 4
    temp = int(p["batches"]) * int(p["in_h"]) * int(p["in_w"]) * itemsize
    ctx.allow_inplace(call, call.writes[0], call.args[0].value, f"depthwise_conv2d_inplace_{suffix}", temp)
    return call

"""What the specs of conv2d_add_s8 share (reference, DSP, Helium): the convolution prepared by the
variant's own conv2d_s8 spec over the node's convolution view, the residual Add's constants
with the convolution's value as input 1 (int32 addition commutes, so TFLM's AddFunc is the
same with the inputs and their constants swapped), and the residual read before the output
element of the same index is written, so the output may take the residual's place.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np

from codegen.kernels.call import KernelCall, KernelContext
from codegen.kernels.reference.families import AddQ
from codegen.kernels.spec import KernelSpec, Prepared
from codegen.ops.add import Add
from codegen.ops.binary import add_sub_c_params
from codegen.ops.conv2d_add import add_view, conv_view
from codegen.ops.request import KernelRequest, ScratchArg, TensorArg
from codegen.quant import AddSubParams
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier, wrap_int32

RESIDUAL_HEADERS = ("kiln_quant.h",)


class _ViewContext:
    """The lowering context with the convolution's view as its graph (the intermediate's
    quantization on the fused output); everything else is the context's."""

    def __init__(self, ctx: KernelContext, g) -> None:
        self._ctx, self.g = ctx, g

    def __getattr__(self, name: str):
        return getattr(self._ctx, name)


def add_constants(node, g) -> AddSubParams:
    """TFLM's Add constants of the fused Add, the convolution's value as input 1."""
    add, view = add_view(node, g)
    if not node.attrs["conv_first"]:
        add = replace(add, inputs=add.inputs[::-1])
    return Add.int8_params(add, view)


def rescale_tables(p: AddSubParams, doubled: bool) -> np.ndarray:
    """Each input's int8 value rescaled to the common scale (AddFunc's first two steps), indexed
    by the value's byte (0..127, then -128..-1): input 1's table, then input 2's; `doubled`: twice
    the value (the DSP kernel's SMMULR operand, kiln_dsp_scale_x2_neg; |2x| < 2^29 here)."""
    x = np.arange(-128, 128, dtype=np.int64)

    def scaled(offset: int, multiplier: int, shift: int) -> np.ndarray:
        return multiply_by_quantized_multiplier(wrap_int32((x + offset) << p.left_shift), multiplier, shift)

    by_byte = [np.roll(scaled(off, m, s), 128) for off, m, s in ((p.input1_offset, p.input1_multiplier, p.input1_shift),
                                                                 (p.input2_offset, p.input2_multiplier, p.input2_shift))]
    return (2 if doubled else 1) * np.concatenate(by_byte).astype(np.int64)


def prepare_fused(conv_spec: type[KernelSpec], params: type, request: KernelRequest, ctx: KernelContext,
                  doubled: bool = False, extra_scratch: int = 0) -> Prepared:
    """The call of `conv_spec`'s kernel with the residual Add in its epilogue: the convolution's
    block and arguments as its spec makes them, the residual inserted before the output, the
    Add's constants (`q`) and rescale tables (`t`, `doubled` or not), `extra_scratch` bytes more
    scratch (after the convolution's, at `ep_off`)."""
    node = request.node
    add = add_constants(node, ctx.g)
    extra = {"t": ctx.constant(node, "t", rescale_tables(add, doubled), "int32")}
    conv, view = conv_view(node, ctx.g)
    prepared = conv_spec.prepare(replace(request, node=conv, kernel="conv2d_s8"), _ViewContext(ctx, view))
    block = {f.name: getattr(prepared.params, f.name) for f in fields(prepared.params)}
    args = list(prepared.args)
    out = next(k for k, a in enumerate(args) if isinstance(a, TensorArg) and a.value == node.outputs[0])
    args.insert(out, ctx.tensor(node.inputs[3]))
    if extra_scratch:
        scratch = args[-1]
        assert isinstance(scratch, ScratchArg)
        offset = (scratch.nbytes + 3) // 4 * 4
        args[-1] = ScratchArg(offset + extra_scratch)
        extra["ep_off"] = offset
    return Prepared(params(**block, q=AddQ(**add_sub_c_params(add)), **extra), tuple(args),
                    tuple(dict.fromkeys(prepared.headers + RESIDUAL_HEADERS)))


def allow_over_residual(ctx: KernelContext, call: KernelCall) -> None:
    """The output may be the residual's storage (same shape and size: each residual element is
    read before the output element of its index is written, and never after), unless the
    residual is the convolution's input too (y = conv(x) + x), whose windows reach ahead."""
    tensors = [a.value for a in call.args if isinstance(a, TensorArg)]
    residual = tensors[tensors.index(call.writes[0]) - 1]
    if ctx.root(residual) != ctx.root(tensors[0]):
        ctx.allow_inplace(call, call.writes[0], residual)

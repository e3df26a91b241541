"""onnxruntime's numerics (`--numerics onnxruntime`): int8 kernels whose arithmetic is
onnxruntime's CPU kernels' (codegen/quant/onnxruntime.py, runtime_c/kiln_ort.h) instead of
TFLite's fixed-point requantization. The compiler puts this variant first in the target's
list when the option asks for it (codegen/compiler.py), so its specs take every request they
compute on any target; the other kernels (float, moves, max pooling) are the target's own."""

from __future__ import annotations

import numpy as np

from codegen.kernels.linear import output_stage, quant
from codegen.kernels.spec import Prepared
from codegen.quant.onnxruntime import output_scales

VARIANT = "onnxruntime"
ORT_HEADERS = ("kiln_ort.h",)


def ort_linear_fields(request, ctx, rows, channels_to: int = 0) -> tuple[dict, object]:
    """The int8 fields of an onnxruntime-numerics linear kernel (output stage, input zero
    point, one float32 scale per output channel) and its bias with the input offset folded in:
    the same integer sum as TFLite's kernels, requantized as MlasRequantizeOutput. Scales and
    bias are zero-padded to `channels_to` channels (a kernel's block of outputs) if larger."""
    node = request.node
    p, folded = quant(request, ctx, rows)
    qx, qw, qy = (ctx.g.values[v].quant for v in (node.inputs[0], node.inputs[1], node.outputs[0]))
    scales = np.broadcast_to(output_scales(qx.s, qw.scale, qy.s), (rows.shape[0],))
    pad = max(0, channels_to - rows.shape[0])
    fields = {**output_stage(p), "input_zp": p.input_zp,
              "scale": ctx.constant(node, "scale", np.pad(scales, (0, pad)), "float32")}
    return fields, ctx.constant(node, "bias", np.pad(folded, (0, pad)), "int32")


def ort_linear_prepared(spec, request, ctx, rows) -> Prepared:
    """The call of an onnxruntime-numerics linear kernel: (input, weights, folded bias, output)
    and the block of the request's shape with `ort_linear_fields` (input_zp where the block
    has one: a kernel without padding folds the whole input offset into the bias)."""
    node = request.node
    fields, bias = ort_linear_fields(request, ctx, rows)
    if "input_zp" not in spec.Params.__dataclass_fields__:
        del fields["input_zp"]
    args = (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), bias, ctx.tensor(node.outputs[0]))
    return Prepared(spec.Params(**request.params, **fields), args, spec.headers)



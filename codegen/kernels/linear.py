"""What the linear kernels' specs share (Conv2D, DepthwiseConv2D, FullyConnected, every
variant): the fields of their parameter blocks, and the int8 output stage each variant lays
out its own way. The arithmetic (TFLM's multipliers, the input offset folded into the bias) is
codegen/quant/linear.py; here it only meets the layouts of codegen/kernels/repack.py.

Every variant keeps TFLM's integer result: the input offset is folded into the bias exactly as
for the reference kernels, only the layout changes.
"""

from __future__ import annotations

from dataclasses import dataclass, make_dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.spec import Prepared
from codegen.limits import check_shifts
from codegen.ops.conv_geometry import WINDOW_FIELDS
from codegen.ops.request import ConstArray, KernelRequest, ScratchArg
from codegen.quant.linear import LinearInt8, fold_input_offset, graph_bias, linear_int8_params

DSP_HEADERS = ("kiln_dsp.h",)
MVE_HEADERS = ("kiln_mve.h",)
NEON_HEADERS = ("kiln_neon_s8.h",)
NEON_MLA_PAIRS, NEON_MLA, NEON_SDOT = 0, 1, 2  # the NEON kernels' `mode` (runtime_c/kiln_neon_s8.h)


# A sliding window over NHWC (templates/kernels/reference/_conv_geometry.c.j2): the fields of
# codegen.ops.conv_geometry.ConvGeometry that a parameter block holds, declared there once.
Window = make_dataclass("Window", [(name, int) for name in WINDOW_FIELDS], frozen=True)
Window.__module__ = __name__


@dataclass(frozen=True)
class ConvShape(Window):
    in_c: int
    out_c: int


@dataclass(frozen=True)
class DepthwiseShape(Window):
    in_c: int
    depth_multiplier: int


@dataclass(frozen=True)
class RowsShape:
    """A fully connected layer: `batches` rows of `in_k` inputs, `out_c` outputs each."""

    batches: int
    in_k: int
    out_c: int


@dataclass(frozen=True)
class FloatClamp:
    act_min: float  # the fused activation's range
    act_max: float


@dataclass(frozen=True)
class OutputStage:
    """The int8 output stage every int8 linear kernel shares: zero point and clamp."""

    output_zp: int
    act_min: int
    act_max: int


def weights(request: KernelRequest, ctx) -> np.ndarray:
    """The request's constant weight tensor (input 1) as stored."""
    return np.asarray(ctx.g.values[request.node.inputs[1]].data)


def quant(request: KernelRequest, ctx, rows: np.ndarray, fc_per_tensor: bool = False
          ) -> tuple[LinearInt8, np.ndarray]:
    """TFLM's requantization constants (their shifts checked against the limits, since a
    variant's table hides them from codegen.limits.check_lowered) and the bias with the input
    offset folded in."""
    node = request.node
    channels = rows.shape[0]
    p = linear_int8_params(node, ctx.g, channels, fc_per_tensor)
    check_shifts(request.kernel, "shift", p.shift, ", ".join(node.origin or (node.name,)))
    return p, fold_input_offset(node, rows, graph_bias(node, ctx.g, channels), p.input_zp)


def output_stage(p: LinearInt8) -> dict:
    return {"output_zp": p.output_zp, "act_min": p.act_min, "act_max": p.act_max}


def dsp_requant(request: KernelRequest, ctx, rows: np.ndarray, channels_to: int, fc_per_tensor: bool = False
                ) -> tuple[LinearInt8, int, ConstArray]:
    """A DSP kernel's requantization: TFLM's constants, whether every channel shifts right by
    2 or more (rq_r2), and the per-channel records of folded bias and kiln_dsp_requant's words."""
    p, folded = quant(request, ctx, rows, fc_per_tensor)
    rec = repack.dsp_requant_records(folded, p.multiplier, p.shift, channels_to)
    return p, repack.dsp_requant_r2(p.multiplier, p.shift), ctx.constant(request.node, "rq", rec, "int32")


def vector_requant(request: KernelRequest, ctx, rows: np.ndarray, fc_per_tensor: bool = False, order=None,
                   block: int = 4) -> tuple[LinearInt8, ConstArray]:
    """Helium's per-channel vectors of the output stage (channels permuted by `order` when
    given, zero-padded to whole blocks of `block` channels); the NEON kernels read the same."""
    p, folded = quant(request, ctx, rows, fc_per_tensor)
    mult, shift = p.multiplier, p.shift
    if order is not None:
        folded, mult, shift = folded[order], mult[order], shift[order]
    table = repack.mve_requant(folded, mult, shift, repack.round_up(rows.shape[0], block))
    return p, ctx.constant(request.node, "rq", table, "int32")


def int8_prepared(spec, request: KernelRequest, ctx, p: LinearInt8, weights_const: ConstArray, scratch_bytes: int,
                  **fields) -> Prepared:
    """The call of an int8 linear kernel variant: arguments (input, its packed weights, output,
    scratch) and parameter block (the request's shape, TFLM's output stage, the input zero
    point where the block has one, and the variant's own `fields`)."""
    node = request.node
    stage = output_stage(p)
    if "input_zp" in spec.Params.__dataclass_fields__:
        stage["input_zp"] = p.input_zp
    args = (ctx.tensor(node.inputs[0]), weights_const, ctx.tensor(node.outputs[0]), ScratchArg(scratch_bytes))
    return Prepared(spec.Params(**request.params, **stage, **fields), args, spec.headers)


def depthwise_rows_path(shape: dict, vector: int = 4) -> bool:
    """Whether the DSP and Helium depthwise kernels take their padded-rows path (depth
    multiplier 1, channels a multiple of `vector`, a padded layer): each output row's input
    rows are copied to scratch before any of the row is written. The kernels make the same
    decision."""
    reach_h = (shape["out_h"] - 1) * shape["stride_h"] + (shape["k_h"] - 1) * shape["dilation_h"] + 1
    reach_w = (shape["out_w"] - 1) * shape["stride_w"] + (shape["k_w"] - 1) * shape["dilation_w"] + 1
    padded = (shape["pad_top"] > 0 or shape["pad_left"] > 0 or reach_h > shape["in_h"]
              or reach_w > shape["in_w"])
    return shape["depth_multiplier"] == 1 and shape["in_c"] % vector == 0 and padded


def depthwise_rows_bytes(shape: dict, vector: int = 4) -> int:
    """Scratch of the DSP and Helium depthwise kernels: on their fast path (depth multiplier 1,
    channels a multiple of `vector`, 1 for Helium's predicated loads) over a padded layer, k_h
    input rows as wide as the windows of one output row reach, padding included; 4 bytes
    otherwise."""
    if not depthwise_rows_path(shape, vector):
        return 4
    reach_w = (shape["out_w"] - 1) * shape["stride_w"] + (shape["k_w"] - 1) * shape["dilation_w"] + 1
    return shape["k_h"] * reach_w * shape["in_c"]

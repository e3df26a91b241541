"""Lowering of the int8 linear ops (Conv2D, DepthwiseConv2D, FullyConnected) for the fast
kernel variants: the same node, the weights and constants repacked for the template the
target will use (ctx.kernel_variant) instead of the reference layout.

An op's `lower` calls `lower_packed` first; it returns False when the variant is the
reference one (or has no repacking here), and the op lowers as before. Every variant keeps
TFLM's integer result: the input offset is folded into the bias exactly as for the
reference kernels (int8_linear.fold_input_offset), only the layout changes.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from codegen.ir.graph import Node
from codegen.lower import repack
from codegen.lower.kernel import ScratchArg
from codegen.ops.int8_linear import LinearInt8, fold_input_offset, graph_bias, linear_int8_params

DSP_HEADERS = ("kiln_dsp.h",)
MVE_HEADERS = ("kiln_mve.h",)

# (kernel, variant) -> lowering(node, ctx, params, weights)
_LOWERINGS: dict[tuple[str, str], Callable] = {}


def _lowering(kernel: str, variant: str):
    def wrap(fn):
        _LOWERINGS[(kernel, variant)] = fn
        return fn
    return wrap


def lower_packed(node: Node, ctx, kernel: str, params: dict, weights: np.ndarray) -> bool:
    """Lower an int8 linear node for the target's variant of `kernel` if it needs repacked
    constants; False when the reference lowering applies. `params` are the op's shape
    fields of the reference params struct, `weights` its weight tensor as stored."""
    fn = _LOWERINGS.get((kernel, ctx.kernel_variant(kernel)))
    if fn is None:
        return False
    fn(node, ctx, params, np.asarray(weights))
    return True


def _quant(node: Node, ctx, rows: np.ndarray, fc_per_tensor: bool = False
           ) -> tuple[LinearInt8, np.ndarray]:
    """TFLM's requantization constants and the bias with the input offset folded in."""
    channels = rows.shape[0]
    p = linear_int8_params(node, ctx.g, channels, fc_per_tensor)
    return p, fold_input_offset(node, rows, graph_bias(node, ctx.g, channels), p.input_zp)


def _dsp_records(node: Node, ctx, rows: np.ndarray, channels_to: int, fc_per_tensor: bool = False):
    """The params of a DSP kernel's output stage and its requantization records."""
    p, folded = _quant(node, ctx, rows, fc_per_tensor)
    rec = repack.dsp_requant_records(folded, p.multiplier, p.shift, channels_to)
    fields = {"output_zp": p.output_zp, "act_min": p.act_min, "act_max": p.act_max,
              "rq_r2": repack.dsp_requant_r2(p.multiplier, p.shift), "rq": ctx.constant(node, "rq", rec, "int32")}
    return p, fields


# -- cortex_m_dsp ----------------------------------------------------------------------------

@_lowering("conv2d_s8", "cortex_m_dsp")
def _conv2d_dsp(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """im2col of two output pixels into int16 scratch columns, then a 2x2 SMLAD tile."""
    rows = w.reshape(w.shape[0], -1)
    k4, o2 = repack.round_up(rows.shape[1], 4), repack.round_up(rows.shape[0], 2)
    p, out = _dsp_records(node, ctx, rows, o2)
    scratch = ScratchArg(2 * 2 * k4 + 2 * 4 * o2)  # two int16 columns, two pixels' accumulators
    ctx.call(node, "conv2d_s8", {**params, **out, "input_zp": p.input_zp, "k4": k4},
             [ctx.tensor(node.inputs[0]), ctx.constant(node, "w", repack.dsp_gemm_rows(rows), "int32"),
              ctx.tensor(node.outputs[0]), scratch], headers=DSP_HEADERS)


@_lowering("fully_connected_s8", "cortex_m_dsp")
def _fully_connected_dsp(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Each input row to int16 scratch once, then four output channels at a time."""
    k4 = repack.round_up(w.shape[1], 4)
    _, out = _dsp_records(node, ctx, w, repack.round_up(w.shape[0], 4), fc_per_tensor=True)
    ctx.call(node, "fully_connected_s8", {**params, **out, "k4": k4},
             [ctx.tensor(node.inputs[0]), ctx.constant(node, "w", repack.dsp_gemm_rows(w, block=4), "int32"),
              ctx.tensor(node.outputs[0]), ScratchArg(2 * k4)], headers=DSP_HEADERS)


def depthwise_rows_bytes(params: dict, vector: int = 4) -> int:
    """Scratch of the depthwise kernels: on their fast path (depth multiplier 1, channels a
    multiple of `vector`, 1 for Helium's predicated loads) over a padded layer, k_h input
    rows as wide as the windows of one output row reach, padding included; 4 bytes
    otherwise. The kernels make the same decision."""
    reach_h = (params["out_h"] - 1) * params["stride_h"] + (params["k_h"] - 1) * params["dilation_h"] + 1
    reach_w = (params["out_w"] - 1) * params["stride_w"] + (params["k_w"] - 1) * params["dilation_w"] + 1
    padded = (params["pad_top"] > 0 or params["pad_left"] > 0 or reach_h > params["in_h"]
              or reach_w > params["in_w"])
    if params["depth_multiplier"] != 1 or params["in_c"] % vector or not padded:
        return 4
    return params["k_h"] * reach_w * params["in_c"]


@_lowering("depthwise_conv2d_s8", "cortex_m_dsp")
def _depthwise_dsp(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Four channels per word: SXTB16 unpacks the input, SMLABB/SMLATT multiply lane by lane."""
    taps = w.reshape(-1, w.shape[3])  # [KH*KW, C*M]
    rows = taps.T
    p, out = _dsp_records(node, ctx, rows, repack.round_up(rows.shape[0], 4))
    ctx.call(node, "depthwise_conv2d_s8", {**params, **out, "input_zp": p.input_zp},
             [ctx.tensor(node.inputs[0]), ctx.constant(node, "w", repack.dsp_depthwise_taps(taps), "int32"),
              ctx.tensor(node.outputs[0]), ScratchArg(depthwise_rows_bytes(params))], headers=DSP_HEADERS)


# -- mve -------------------------------------------------------------------------------------

def _mve_requant(node: Node, ctx, rows: np.ndarray, fc_per_tensor: bool = False, order=None, block: int = 4):
    """The params of a Helium kernel's output stage and its per-channel vectors (channels
    permuted by `order` when given, zero-padded to whole blocks of `block` channels); the
    NEON kernels read the same layout."""
    p, folded = _quant(node, ctx, rows, fc_per_tensor)
    mult, shift = p.multiplier, p.shift
    if order is not None:
        folded, mult, shift = folded[order], mult[order], shift[order]
    table = repack.mve_requant(folded, mult, shift, repack.round_up(rows.shape[0], block))
    fields = {"output_zp": p.output_zp, "act_min": p.act_min, "act_max": p.act_max,
              "rq": ctx.constant(node, "rq", table, "int32")}
    return p, fields


@_lowering("conv2d_s8", "mve")
def _conv2d_mve(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Windows as int8 columns, four output channels per VMLADAVA.S8 block, two pixels."""
    rows = w.reshape(w.shape[0], -1)
    k16 = repack.round_up(rows.shape[1], 16)
    p, out = _mve_requant(node, ctx, rows)
    ctx.call(node, "conv2d_s8", {**params, **out, "input_zp": p.input_zp, "k16": k16},
             [ctx.tensor(node.inputs[0]), ctx.constant(node, "w", repack.mve_gemm_rows(rows), "int8"),
              ctx.tensor(node.outputs[0]), ScratchArg(2 * k16)], headers=MVE_HEADERS)


@_lowering("fully_connected_s8", "mve")
def _fully_connected_mve(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Each input row (copied to zero-padded scratch unless its length is a multiple of 16)
    against blocks of four output channels."""
    k16 = repack.round_up(w.shape[1], 16)
    _, out = _mve_requant(node, ctx, w, fc_per_tensor=True)
    ctx.call(node, "fully_connected_s8", {**params, **out, "k16": k16},
             [ctx.tensor(node.inputs[0]), ctx.constant(node, "w", repack.mve_gemm_rows(w), "int8"),
              ctx.tensor(node.outputs[0]), ScratchArg(4 if k16 == w.shape[1] else k16)], headers=MVE_HEADERS)


@_lowering("depthwise_conv2d_s8", "mve")
def _depthwise_mve(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Eight channels per step (four when the count is not a multiple of 8), the weights in
    their stored order; the same padded-rows scratch as the DSP kernel."""
    taps = w.reshape(-1, w.shape[3])  # [KH*KW, C*M]
    order = None
    if params["depth_multiplier"] == 1 and params["in_c"] % 8 == 0:
        order = repack.even_odd_order(params["in_c"])  # the kernel's eight-channel groups
    p, out = _mve_requant(node, ctx, taps.T, order=order)
    ctx.call(node, "depthwise_conv2d_s8", {**params, **out, "input_zp": p.input_zp},
             [ctx.tensor(node.inputs[0]), ctx.constant(node, "w", taps, "int8"),
              ctx.tensor(node.outputs[0]), ScratchArg(depthwise_rows_bytes(params, vector=1))],
             headers=MVE_HEADERS)


# -- neon, neon_dotprod (AArch64) --------------------------------------------------------------

NEON_HEADERS = ("kiln_neon_s8.h",)
NEON_MLA_PAIRS, NEON_MLA, NEON_SDOT = 0, 1, 2  # the kernels' `mode` (runtime_c/kiln_neon_s8.h)


def _neon_gemm_fields(node: Node, ctx, rows: np.ndarray, variant: str, fc_per_tensor: bool = False):
    """How the register tile multiplies, its weights and the output stage's table (Helium's
    layout): SDOT on blocks of eight rows (repack.sdot_gemm_blocks), or SMULL/SMLAL2 on
    Helium's blocks of four rows (16 bytes of each in turn), products summed in int16 pairs
    unless a weight is -128 (two products of 128 * 128 overflow int16)."""
    if variant == "neon_dotprod":
        mode, block, packed = NEON_SDOT, 8, repack.sdot_gemm_blocks(rows)
    else:
        mode = NEON_MLA if (np.asarray(rows) == -128).any() else NEON_MLA_PAIRS
        block, packed = 4, repack.mve_gemm_rows(rows)
    p, out = _mve_requant(node, ctx, rows, fc_per_tensor, block=block)
    fields = {**out, "k16": repack.round_up(rows.shape[1], 16), "mode": mode}
    return p, fields, ctx.constant(node, "w", packed, "int8")


def _conv2d_neon(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Four pixels' windows (im2col, or the input itself for a pointwise layer with 16k
    channels) against blocks of four output channels (SDOT: eight), in one register tile."""
    rows = w.reshape(w.shape[0], -1)
    p, fields, packed = _neon_gemm_fields(node, ctx, rows, ctx.kernel_variant("conv2d_s8"))
    ctx.call(node, "conv2d_s8", {**params, **fields, "input_zp": p.input_zp},
             [ctx.tensor(node.inputs[0]), packed, ctx.tensor(node.outputs[0]), ScratchArg(4 * fields["k16"])],
             headers=NEON_HEADERS)


def _fully_connected_neon(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Four input rows at a time (copied to zero-padded scratch unless their length is a
    multiple of 16) against blocks of four output channels (SDOT: eight)."""
    _, fields, packed = _neon_gemm_fields(node, ctx, w, ctx.kernel_variant("fully_connected_s8"),
                                          fc_per_tensor=True)
    scratch = ScratchArg(4 if fields["k16"] == w.shape[1] else 4 * fields["k16"])
    ctx.call(node, "fully_connected_s8", {**params, **fields},
             [ctx.tensor(node.inputs[0]), packed, ctx.tensor(node.outputs[0]), scratch], headers=NEON_HEADERS)


for _variant in ("neon", "neon_dotprod"):
    _lowering("conv2d_s8", _variant)(_conv2d_neon)
    _lowering("fully_connected_s8", _variant)(_fully_connected_neon)


@_lowering("depthwise_conv2d_s8", "neon")
def _depthwise_neon(node: Node, ctx, params: dict, w: np.ndarray) -> None:
    """Weights as stored; scratch: a row of input_zp (what padding taps read), then per tap
    of the window a pointer, an offset and 16 bytes (eight channels' weights twice)."""
    taps = w.reshape(-1, w.shape[3])  # [KH*KW, C*M]
    p, out = _mve_requant(node, ctx, taps.T)
    zp_row = repack.round_up(params["in_c"], 16)
    fields = {"input_zp": p.input_zp, "zp_row_bytes": zp_row, "pairs": not (taps == -128).any()}
    ctx.call(node, "depthwise_conv2d_s8", {**params, **out, **fields},
             [ctx.tensor(node.inputs[0]), ctx.constant(node, "w", taps, "int8"), ctx.tensor(node.outputs[0]),
              ScratchArg(zp_row + (8 + 4 + 16) * params["k_h"] * params["k_w"])], headers=NEON_HEADERS)

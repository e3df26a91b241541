"""templates/kernels/cortex_m_dsp/conv2d_s8.c.j2: im2col of two output pixels into int16
scratch columns, then a 2x2 SMLAD tile (channels x pixels)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.inplace import allow_pair_conv_overlap
from codegen.kernels.linear import DSP_HEADERS, ConvShape, OutputStage, dsp_requant, int8_prepared, weights
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


DSP_LOOP_HEADERS = DSP_HEADERS + ("kiln_dsp_loops.h",)  # the assembly loops of runtime_c/kiln_dsp_loops.h


@dataclass(frozen=True)
class Conv2dS8Dsp(ConvShape, OutputStage):
    input_zp: int
    rq_r2: int  # every channel shifts right by 2 or more: kiln_dsp_requant_r2
    k4: int  # window length rounded up to a multiple of 4
    wide: int  # 1: weights widened to int16 lanes at compile time (wide_weights)
    rq: ConstArray  # per output channel (rounded up to even): folded bias, kiln_dsp_requant's words


# Each weight of a layer is used once per output pixel; widening it to int16 at compile time
# saves about 0.3 instructions per use (kiln_dsp_dot_2x2_wide against kiln_dsp_dot_2x2, more
# where the pair loop then requantizes in place) for one more byte of flash. Taken from
# WIDE_MIN_PIXELS output pixels on (a byte buys about 5 instructions or more), so that the
# wide layers at the end of a network, whose few pixels use weights that are most of its flash
# (VWW's 3x3 layers: 96 KB for 2 % of its instructions), stay in bytes; never with
# --optimize size. Measured on the M4: widening VWW's 6x6 layers (36 pixels) took 90 KB more
# flash and 6 % fewer instructions (14.16M -> 12.53M).
WIDE_MIN_PIXELS = 16


def wide_weights(shape: dict, optimize: str) -> bool:
    """Whether a convolution takes int16 weights (kiln_dsp_dot_2x2_wide)."""
    return optimize != "size" and shape["batches"] * shape["out_h"] * shape["out_w"] >= WIDE_MIN_PIXELS


def pair_in_loop(wide: bool, r2: bool, out_c: int) -> bool:
    """Whether the kernel requantizes each tile in its loop (kiln_dsp_gemm_pair_r2_wide), so
    that it needs no accumulators in scratch; the template makes the same test."""
    return wide and r2 and out_c % 2 == 0


def pointwise(shape: dict) -> bool:
    """A 1x1 window, stride 1, no padding: the template's `pointwise` test."""
    return (shape["k_h"] == 1 and shape["k_w"] == 1 and shape["stride_h"] == 1 and shape["stride_w"] == 1
            and shape["pad_top"] == 0 and shape["pad_left"] == 0)


def template_paths(params: dict) -> set[str]:
    """The template's paths a call with parameter block `params` takes (paths.py): the pair
    loop (its window interleaved directly where in_c is a multiple of 4, else copied through
    plain columns) or the tiles over int16 or byte weights; im2col except for a 1x1 layer."""
    if pair_in_loop(bool(params["wide"]), bool(params["rq_r2"]), params["out_c"]):
        if pointwise(params):
            return {"in_loop"}
        return {"in_loop", "il_window" if params["in_c"] % 4 == 0 else "im2col"}
    return {"tiles", "wide" if params["wide"] else "narrow"} | (set() if pointwise(params) else {"im2col"})


def scratch_bytes(shape: dict, k4: int, o2: int, in_loop: bool) -> int:
    """Two int16 columns and two pixels' accumulators; requantizing in the loop, the two
    columns interleaved, and, where in_c is not a multiple of 4 (a window's runs straddle the
    groups), the two plain columns they are copied from (the template's tests)."""
    if not in_loop:
        return 2 * 2 * k4 + 2 * 4 * o2
    return 2 * 2 * k4 * (2 if not pointwise(shape) and shape["in_c"] % 4 else 1)


@kernel_spec
class Conv2dS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "conv2d_s8", "cortex_m_dsp", Conv2dS8Dsp, DSP_LOOP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        rows = w.reshape(w.shape[0], -1)
        k4, o2 = repack.round_up(rows.shape[1], 4), repack.round_up(rows.shape[0], 2)
        p, r2, rq = dsp_requant(request, ctx, rows, o2)
        wide = wide_weights(request.params, ctx.optimize)
        packed = repack.dsp_gemm_pairs_wide(rows) if wide else repack.dsp_gemm_rows(rows)
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", packed, "int32"),
                             scratch_bytes(request.params, k4, o2, pair_in_loop(wide, r2, rows.shape[0])),
                             rq_r2=r2, k4=k4, wide=int(wide), rq=rq)

    @classmethod
    def declare(cls, call, ctx):
        allow_pair_conv_overlap(ctx, call)
        claim_paths(ctx, call, template_paths(call.params) | ({"small"} if ctx.optimize == "size" else set()))

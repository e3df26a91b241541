"""templates/kernels/mve/depthwise_conv2d_s8.c.j2: eight channels per step (four when the
count is not a multiple of 8), the weights in their stored order; the same padded-rows scratch
as the DSP kernel. A padded 3x3 layer of stride 1 or 2 across takes the group-major path: the
input rows copied 16 channels after 16, the weights eight channels after eight, so that each
tap is one load at a constant offset."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.inplace import allow_rows_depthwise_overlap
from codegen.kernels.linear import (MVE_HEADERS, DepthwiseShape, OutputStage, depthwise_rows_bytes,
                                    depthwise_rows_path, int8_prepared, vector_requant, weights)
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class DepthwiseConv2dS8Mve(DepthwiseShape, OutputStage):
    input_zp: int
    rq: ConstArray


def g8_path(params: dict, optimize: str) -> bool:
    """Whether a call takes the template's group-major 3x3 path (the kernel decides the same
    at run time where the template renders it): depth multiplier 1, channels a multiple of 16
    (the rows' groups) or 8, a 3x3 window undilated, stride 1 or 2 across, over a padded layer
    (the rows are copied to scratch anyway); not with --optimize size (its windows in
    assembly, one per pixel and stride size, take about 1.5 KB of code each)."""
    return optimize != "size" and ((params["in_c"] % 16 == 0 or params["in_c"] == 8) and params["k_h"] == 3 and params["k_w"] == 3 and params["dilation_h"] == 1
            and params["dilation_w"] == 1 and params["stride_w"] in (1, 2) and depthwise_rows_path(params, vector=1))


def grouped_1d(params: dict, optimize: str) -> bool:
    """Whether the weights come by groups of eight channels, each its k_h taps of eight bytes
    (the kernel's 1-D paths post-increment one pointer through them): the calls that may take
    the two-row path "c8_1d" (the kernel decides the same at run time)."""
    return "c8_1d" in template_paths(params, optimize)


def group_weights(taps: np.ndarray) -> np.ndarray:
    """[K, C] taps by groups of eight channels: for each group its K taps of eight bytes (as
    the 3x3 path and the 1-D paths read them)."""
    return taps.reshape(taps.shape[0], -1, 8).transpose(1, 0, 2).reshape(-1)


def template_paths(params: dict, optimize: str) -> set[str]:
    """The template's paths a call with parameter block `params` takes (paths.py), as the
    kernel tests them: the general loop (a depth multiplier), else the padded rows where the
    layer needs them and eight channels at a time (3x3 unrolled, or any window; two output
    rows at a time down one column) or four."""
    if params["depth_multiplier"] != 1:
        return {"generic"}
    if g8_path(params, optimize):
        return {"g3x3_8" if params["in_c"] == 8 else "g3x3_16"}
    if params["in_c"] % 8:
        group = "c4"
    else:
        group = "c8_3x3" if params["k_h"] == 3 and params["k_w"] == 3 else "c8_taps"
    paths = {group} | ({"rows"} if depthwise_rows_path(params, vector=1) else set())
    if group == "c8_taps" and optimize != "size" and one_column(params):
        paths.add("c8_1d")
    return paths


def one_column(params: dict) -> bool:
    """Whether the layer's windows run down one input column, unpadded (streaming models):
    the kernel's two-row path ("c8_1d"; not with --optimize size, which keeps one output
    stage), which it takes where the output does not overlap the input or starts a pixel or
    more below it."""
    return (params["k_w"] == 1 and params["in_w"] == 1 and params["out_w"] == 1 and params["pad_top"] == 0
            and not depthwise_rows_path(params, vector=1))


@kernel_spec
class DepthwiseConv2dS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "depthwise_conv2d_s8", "mve", DepthwiseConv2dS8Mve, MVE_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w, shape = request.node, weights(request, ctx), request.params
        taps = w.reshape(-1, w.shape[3])  # [KH*KW, C*M]
        order = None
        if shape["depth_multiplier"] == 1 and shape["in_c"] % 8 == 0:
            order = repack.even_odd_order(shape["in_c"])  # the kernel's eight-channel groups
        p, rq = vector_requant(request, ctx, taps.T, order=order)
        grouped = g8_path(shape, ctx.optimize) or grouped_1d(shape, ctx.optimize)
        stored = group_weights(taps) if grouped else taps
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", stored, "int8"),
                             depthwise_rows_bytes(shape, vector=1), rq=rq)

    @classmethod
    def declare(cls, call, ctx):
        allow_rows_depthwise_overlap(ctx, call, vector=1)
        claim_paths(ctx, call, template_paths(call.params, ctx.optimize))
        claim_requant_forms(ctx, call)


def requant_forms(params: dict) -> set[str]:
    """What the output stage of a call may leave out (the template's store functions):
    "no_left" when no channel has a left shift (VSHL), "rounds" when every channel has a
    right shift (TFLM's rounding then takes one off every negative value: no mask by the
    shift), "int8_range" when the clamp is int8's own (a saturating narrowing does it)."""
    channels = params["in_c"] * params["depth_multiplier"]
    lanes = repack.mve_requant_fields(params["rq"].data, channels)
    forms = set()
    if not lanes[:, 2].any():
        forms.add("no_left")
    if lanes[:, 3].all():
        forms.add("rounds")
    if params["act_min"] == -128 and params["act_max"] == 127:
        forms.add("int8_range")
    return forms


def claim_requant_forms(ctx, call) -> None:
    """The requantization forms every call of the kernel in the model allows (the template is
    rendered once for them all), as the template variable "requant"."""
    same = [c for c in ctx.calls if c.kernel == call.kernel and c.variant == call.variant]
    common = requant_forms(call.params)
    for c in same:
        common &= requant_forms(c.params)
    for c in same:
        c.template_vars = tuple(sorted({**dict(c.template_vars), "requant": tuple(sorted(common))}.items()))

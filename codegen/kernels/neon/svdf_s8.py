"""templates/kernels/neon/svdf_s8.c.j2: TFLite Micro's integer SVDF (int8 input, int16 state;
codegen/ops/svdf.py) with both its sums by SMLAL / SMLAL2 over eight int16 lanes and both its
output stages four lanes at a time (kiln_neon_scale4q).

The input row is widened to int16 once per batch with its offset added; the feature weights
come in blocks of four filters, eight int8 weights of each in turn (widened as they are
loaded), so that four filters' projections are one vector through the output stage. Each
unit's time sum is one run over its rank filters' state rows (end to end, as their time
weights), with the state's zero point folded into the bias at compile time, as the DSP
kernel does (codegen/kernels/cortex_m_dsp/svdf_s8.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.svdf_s8 import folded_time_bias
from codegen.kernels.linear import NEON_HEADERS
from codegen.kernels.op_consts import replace_const
from codegen.kernels.reference.svdf import SvdfS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class SvdfS8Neon(SvdfS8):
    feature_right: int  # the feature scale shifts right by 1 or more (kiln_neon_scale4q's rounding)
    output_right: int  # likewise the output scale
    feature_rq: ConstArray  # repack.mve_requant's table of the feature scale in four lanes
    output_rq: ConstArray  # and of the output scale


def feature_blocks(wf: np.ndarray) -> np.ndarray:
    """[filters, input] int8 feature weights as blocks of four filters (zero filters past the
    last), per group of eight inputs (zero past the last) the eight bytes of each in turn."""
    padded = repack._pad(repack._pad(np.asarray(wf, np.int8), 1, repack.round_up(wf.shape[1], 8)), 0,
                         repack.round_up(wf.shape[0], 4))
    return np.ascontiguousarray(padded.reshape(-1, 4, padded.shape[1] // 8, 8).transpose(0, 2, 1, 3)).reshape(-1)


def lane_table(multiplier: int, shift: int) -> np.ndarray:
    return repack.mve_requant(np.zeros(4), np.full(4, multiplier), np.full(4, shift), 4)


@kernel_spec
class SvdfS8NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "svdf_s8", "neon", SvdfS8Neon, NEON_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, p = request.node, dict(request.params)
        in8 = repack.round_up(p["input"], 8)
        wf = np.asarray(p["weights_feature"].data, np.int8).reshape(p["filters"], p["input"])
        alone = len(ctx.g.consumers()[node.inputs[1]]) == 1
        p["weights_feature"] = replace_const(ctx, p["weights_feature"], feature_blocks(wf), "int8", alone)
        folded = folded_time_bias(p["bias"].data, p["weights_time"].data, p["units"], p["state_zero_point"])
        p["bias"] = replace_const(ctx, p["bias"], folded, "int32", True)  # the op's own array for this node
        params = SvdfS8Neon(
            **p, feature_right=int(p["feature_shift"] < 0), output_right=int(p["output_shift"] < 0),
            feature_rq=ctx.constant(node, "frq", lane_table(p["feature_multiplier"], p["feature_shift"]), "int32"),
            output_rq=ctx.constant(node, "orq", lane_table(p["output_multiplier"], p["output_shift"]), "int32"))
        return Prepared(params, tuple(request.args) + (ScratchArg(2 * in8),),
                        tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))

"""templates/kernels/cortex_m_dsp/svdf_s8.c.j2: TFLite Micro's integer SVDF (int8 input,
int16 state; codegen/ops/svdf.py) with both its sums by SMLAD.

The feature projection is a fully connected layer: the input row is widened to int16 once per
batch with its offset added (x - zero point) and multiplied with the feature weights in
dsp_gemm_rows' blocks of four filters (kiln_dsp_dot_4x1). The time sums of a unit run over
its rank filters' state rows, which lie end to end with their time weights, so one SMLAD run
of rank x memory int16 pairs gives the unit's sum; the state's zero point is folded into the
bias at compile time (sum of w * (s - zp) = sum of w * s - zp * sum of w, the same int32
value)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS
from codegen.kernels.op_consts import replace_const
from codegen.kernels.reference.svdf import SvdfS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ScratchArg


def folded_time_bias(bias: np.ndarray, weights_time: np.ndarray, units: int, state_zero_point: int) -> np.ndarray:
    """bias[u] - state zero point * (sum of unit u's time weights), wrapped to int32 as the
    kernel's sums wrap."""
    sums = np.asarray(weights_time, np.int64).reshape(units, -1).sum(axis=1)
    folded = np.asarray(bias, np.int64) - state_zero_point * sums
    return (folded & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


@kernel_spec
class SvdfS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "svdf_s8", "cortex_m_dsp", SvdfS8, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, p = request.node, request.params
        wf = np.asarray(p["weights_feature"].data, np.int8).reshape(p["filters"], p["input"])
        alone = len(ctx.g.consumers()[node.inputs[1]]) == 1
        packed = replace_const(ctx, p["weights_feature"], repack.dsp_gemm_rows(wf, block=4), "int32", alone)
        folded = folded_time_bias(p["bias"].data, p["weights_time"].data, p["units"], p["state_zero_point"])
        bias = replace_const(ctx, p["bias"], folded, "int32", True)  # the op's own array for this node
        params = replace(SvdfS8(**p), weights_feature=packed, bias=bias)
        scratch = 2 * repack.round_up(p["input"], 4)  # the input row widened, offset added
        return Prepared(params, tuple(request.args) + (ScratchArg(scratch),),
                        tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))

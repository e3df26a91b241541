"""templates/kernels/neon/svdf_s8.c.j2: TFLite Micro's integer SVDF (int8 input, int16 state;
codegen/ops/svdf.py) with both its sums by SMLAL / SMLAL2 over eight int16 lanes.

The input row is widened to int16 once per batch with its offset added; the feature weights
are its int8 rows zero-padded to a multiple of 8, widened as they are loaded. Each unit's time
sum is one run over its rank filters' state rows (end to end, as their time weights), with
the state's zero point folded into the bias at compile time, as the DSP kernel does
(codegen/kernels/cortex_m_dsp/svdf_s8.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.svdf_s8 import folded_time_bias, replace_const
from codegen.kernels.linear import NEON_HEADERS
from codegen.kernels.reference.svdf import SvdfS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ScratchArg


@kernel_spec
class SvdfS8NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "svdf_s8", "neon", SvdfS8, NEON_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, p = request.node, request.params
        in8 = repack.round_up(p["input"], 8)
        wf = np.asarray(p["weights_feature"].data, np.int8).reshape(p["filters"], p["input"])
        alone = len(ctx.g.consumers()[node.inputs[1]]) == 1
        padded = replace_const(ctx, p["weights_feature"], repack._pad(wf, 1, in8), "int8", alone)
        folded = folded_time_bias(p["bias"].data, p["weights_time"].data, p["units"], p["state_zero_point"])
        bias = replace_const(ctx, p["bias"], folded, "int32", True)  # the op's own array for this node
        params = replace(SvdfS8(**p), weights_feature=padded, bias=bias)
        return Prepared(params, tuple(request.args) + (ScratchArg(2 * in8),),
                        tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))

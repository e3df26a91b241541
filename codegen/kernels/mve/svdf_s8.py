"""templates/kernels/mve/svdf_s8.c.j2: TFLite Micro's integer SVDF (int8 input, int16 state;
codegen/ops/svdf.py) with both its sums by VMLADAVA.

The feature projection multiplies the int8 input as it is (copied to zero-padded scratch, 16
bytes a vector) with the feature weights in mve_gemm_rows' blocks of four filters
(kiln_mve_dot_4x1), the input offset folded into a per-filter bias at compile time (sum of
w * (x - zp) = sum of w * x - zp * sum of w). Each unit's time sum is one VMLADAVA.S16 run
over its rank filters' state rows, the state's zero point folded into the bias as the DSP
kernel does (codegen/kernels/cortex_m_dsp/svdf_s8.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.svdf_s8 import folded_time_bias
from codegen.kernels.linear import MVE_HEADERS
from codegen.kernels.op_consts import replace_const
from codegen.kernels.reference.svdf import SvdfS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class SvdfS8Mve(SvdfS8):
    feature_bias: ConstArray  # [filters rounded up to 4]: -input zero point * the filter's weights' sum


def feature_bias(wf: np.ndarray, input_zero_point: int) -> np.ndarray:
    folded = -int(input_zero_point) * np.asarray(wf, np.int64).sum(axis=1)
    return repack._pad(folded, 0, repack.round_up(wf.shape[0], 4)).astype(np.int32)


@kernel_spec
class SvdfS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "svdf_s8", "mve", SvdfS8Mve, MVE_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, p = request.node, dict(request.params)
        wf = np.asarray(p["weights_feature"].data, np.int8).reshape(p["filters"], p["input"])
        alone = len(ctx.g.consumers()[node.inputs[1]]) == 1
        p["weights_feature"] = replace_const(ctx, p["weights_feature"], repack.mve_gemm_rows(wf), "int8", alone)
        folded = folded_time_bias(p["bias"].data, p["weights_time"].data, p["units"], p["state_zero_point"])
        p["bias"] = replace_const(ctx, p["bias"], folded, "int32", True)  # the op's own array for this node
        params = SvdfS8Mve(**p, feature_bias=ctx.constant(node, "fbias", feature_bias(wf, p["input_zero_point"]),
                                                          "int32"))
        return Prepared(params, tuple(request.args) + (ScratchArg(repack.round_up(p["input"], 16)),),
                        tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))

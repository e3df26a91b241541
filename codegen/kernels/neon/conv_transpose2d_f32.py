"""templates/kernels/neon/conv_transpose2d_f32.c.j2: the float32 transposed convolution as one
convolution per stride phase (codegen/kernels/mve/conv_transpose2d_s8.py: the phase's taps
reversed meet a stride-1 window of the input), four pixels of a phase at a time against the
phase's weight panels (the GEMM tile of templates/kernels/neon/_gemm_f32.c.j2, FMLA). One
group, no dilation; constant weights and bias."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels.linear import ConvShape, FloatClamp
from codegen.kernels.mve.conv_transpose2d_s8 import phase_rows
from codegen.kernels.neon.conv2d_f32 import GEMM_HEADER
from codegen.kernels.repack_f32 import gemm_panels, neon_constant
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg

GEMM_ROWS = 4  # pixels per GEMM tile


@dataclass(frozen=True)
class ConvTranspose2dF32Neon(ConvShape, FloatClamp):
    depth: int  # the longest phase's window, taps x in_c floats (in_c for a phase without taps)
    phases: ConstArray  # per phase (py, px): its panels' offset in floats, its depth (taps x in_c)


@kernel_spec
class ConvTranspose2dF32NeonSpec(KernelSpec):
    kernel, variant, Params = "conv_transpose2d_f32", "neon", ConvTranspose2dF32Neon

    @classmethod
    def accepts(cls, request):
        """One group, no dilation, constant weights and bias (a request without arguments)."""
        p = request.params
        return p["group_in_c"] == p["in_c"] and p["dilation_h"] == 1 and p["dilation_w"] == 1 and not request.args

    @classmethod
    def prepare(cls, request, ctx):
        node, shape = request.node, dict(request.params)
        w = neon_constant(node, ctx, 1, "weights")
        bias = neon_constant(node, ctx, 2, "bias")
        bias = np.zeros(w.shape[0], np.float32) if bias is None else bias.reshape(-1)
        panels, table, offset = [], [], 0
        for rows in phase_rows(w, shape["stride_h"], shape["stride_w"]):
            if rows.shape[1] == 0:  # no taps: one zero tap (a window of zeros), the bias alone
                rows = np.zeros((w.shape[0], w.shape[3]), np.float32)
            part = gemm_panels(rows, bias)
            table += [offset, rows.shape[1]]
            panels.append(part)
            offset += part.size
        depth = max(table[1::2])
        del shape["group_in_c"], shape["group_out_c"]
        params = cls.Params(**shape, depth=depth,
                            phases=ctx.constant(node, "phases", np.asarray(table, np.int32), "int32"))
        # four windows, a tile's outputs, then the tile's run pointers (four per kernel row)
        scratch = ScratchArg(4 * GEMM_ROWS * (depth + shape["out_c"]) + 8 * GEMM_ROWS * max(shape["k_h"], 1))
        args = (ctx.tensor(node.inputs[0]), ctx.constant(node, "w", np.concatenate(panels), "float32"),
                ctx.tensor(node.outputs[0]), scratch)
        return Prepared(params, args, (*request.headers, GEMM_HEADER))

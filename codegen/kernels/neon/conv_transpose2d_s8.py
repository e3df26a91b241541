"""templates/kernels/neon/conv_transpose2d_s8.c.j2 (and neon_dotprod's): TFLite Micro's int8
TRANSPOSE_CONV as one convolution per stride phase (codegen/kernels/mve/conv_transpose2d_s8.py:
the phase's taps reversed meet a stride-1 window of the input, the input offset folded into
the phase's bias), four pixels of one phase per register tile of runtime_c/kiln_neon_s8.h
(SMULL/SMLAL2 on blocks of four output channels; SDOT on blocks of eight)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import NEON_HEADERS, NEON_MLA, NEON_MLA_PAIRS, NEON_SDOT, ConvShape, OutputStage
from codegen.kernels.linear import output_stage, weights
from codegen.kernels.mve.conv_transpose2d_s8 import phased_weights
from codegen.kernels.neon.conv2d_s8 import shifts_right
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg

COLS = 4  # pixels per register tile


@dataclass(frozen=True)
class ConvTranspose2dS8Neon(ConvShape, OutputStage):
    input_zp: int  # what a window tap past the image's edge reads
    k16: int  # the longest phase's window (taps x in_c) rounded up to a multiple of 16
    mode: int  # NEON_MLA_PAIRS, NEON_MLA or NEON_SDOT (runtime_c/kiln_neon_s8.h)
    right: int  # every channel shifts right by 1 or more (neon/conv2d_s8.shifts_right)
    rq_words: int  # one phase's output stage table: 4 words per output channel (rounded up to a block)
    phases: ConstArray  # per phase (py, px): its packed weights' offset in bytes, its window length k16
    rq: ConstArray  # per phase, repack.mve_requant's table of its folded bias


@kernel_spec
class ConvTranspose2dS8NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "conv_transpose2d_s8", "neon", ConvTranspose2dS8Neon, NEON_HEADERS
    sdot = False

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        if cls.sdot:
            mode, block, pack = NEON_SDOT, 8, repack.sdot_gemm_blocks
        else:
            # two products of -128 * -128 overflow the int16 pairs
            mode = NEON_MLA if (weights(request, ctx) == -128).any() else NEON_MLA_PAIRS
            block, pack = 4, repack.mve_gemm_rows
        pw = phased_weights(request, ctx, pack, block)
        params = cls.Params(**request.params, **output_stage(pw.p), input_zp=pw.p.input_zp, k16=pw.k16, mode=mode,
                            right=shifts_right(pw.p), rq_words=pw.rq_words,
                            phases=ctx.constant(node, "phases", pw.phases, "int32"),
                            rq=ctx.constant(node, "rq", pw.rq, "int32"))
        args = (ctx.tensor(node.inputs[0]), ctx.constant(node, "w", np.asarray(pw.packed, np.int8), "int8"),
                ctx.tensor(node.outputs[0]), ScratchArg(COLS * pw.k16))
        return Prepared(params, args, cls.headers)

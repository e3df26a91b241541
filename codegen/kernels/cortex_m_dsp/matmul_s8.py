"""templates/kernels/cortex_m_dsp/matmul_s8.c.j2: TFLite Micro's int8 BatchMatMul
(codegen/ops/matmul.py) as 2x2 tiles of SMLAD dot products over int16 operands.

Both zero points apply per product, so nothing folds into a bias: each operand is widened to
int16 with its offset added (x - zero point, within [-255, 255]), and the sums are TFLM's
int32 sums. Two rows of `a` at a time are widened into scratch in the lane order of
kiln_dsp_dot_2x2_wide (per group of four k, row 0's four lanes then row 1's); the columns of
`b` are the tile's int16 columns, k contiguous. An activation `b` is transposed into scratch
once per batch slice (again only when the slice changes: a broadcast `b` is done once); a
constant `b` is transposed and widened here, at compile time (int16 lanes in int32 words, so
word-aligned for LDRD; twice its int8 bytes in flash, no transposition at run time).

Scratch: 4 * k4 bytes for the pair of rows, plus 2 * n * k4 for an activation b's columns
(twice the slice it widens), live during the call only: the transformer's 16x16 attention
products take 576 B, against 93k -> 25k instructions each on the Cortex-M4."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS
from codegen.kernels.reference.matmul_s8 import MatmulS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class MatmulS8Dsp(MatmulS8):
    k4: int  # k rounded up to a multiple of 4 (zero lanes past k)
    b_const: int  # 1: b is the compile-time columns (int16 [n][k4] per slice); 0: an int8 activation
    rq_r2: int  # the output shifts right by 2 or more: kiln_dsp_requant_r2
    rq: ConstArray  # kiln_dsp_requant's record of the one output scale (its bias word 0)


def widened_columns(b: np.ndarray, k: int, n: int, offset: int, k_to: int, n_to: int | None = None) -> np.ndarray:
    """A constant b (slices of [k, n], in memory order) as int16 columns: per slice
    [n_to][k_to], b + offset, zero past k and past n (the DSP, Helium and NEON kernels read
    this layout)."""
    slices = np.asarray(b, np.int32).reshape(-1, k, n).transpose(0, 2, 1) + offset
    return repack._pad(repack._pad(slices, 2, k_to), 1, n_to or n).astype(np.int16)


def requant_record(multiplier: int, shift: int) -> tuple[np.ndarray, bool]:
    """The DSP output stage of one per-tensor scale: its record and whether it may take the
    r2 form."""
    m, s = np.array([multiplier]), np.array([shift])
    return repack.dsp_requant_records(np.zeros(1), m, s).reshape(-1), repack.dsp_requant_r2(m, s)


@kernel_spec
class MatmulS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "matmul_s8", "cortex_m_dsp", MatmulS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, fields = request.node, dict(request.params)
        k, n = fields["k"], fields["n"]
        k4 = repack.round_up(k, 4)
        b_value = ctx.g.values[node.inputs[1]]
        record, r2 = requant_record(fields["multiplier"], fields["shift"])
        scratch = 2 * 2 * k4  # the pair of widened rows of a
        if b_value.is_const:
            cols = widened_columns(b_value.data, k, n, fields["b_offset"], k4)
            # as int32 words (lane pairs, low first): LDRD needs the columns word-aligned
            b_arg = ctx.constant(node, "cols", np.ascontiguousarray(cols, "<i2").reshape(-1).view("<i4"), "int32")
            fields["b_strides"] = tuple(s // (k * n) * n * k4 for s in fields["b_strides"])
        else:
            b_arg = ctx.tensor(node.inputs[1])
            scratch += 2 * n * k4
        params = MatmulS8Dsp(**fields, k4=k4, b_const=int(b_value.is_const), rq_r2=int(r2),
                             rq=ctx.constant(node, "rq", record, "int32"))
        args = (ctx.tensor(node.inputs[0]), b_arg, ctx.tensor(node.outputs[0]), ScratchArg(scratch))
        return Prepared(params, args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))

"""templates/kernels/neon/matmul_s8.c.j2: TFLite Micro's int8 BatchMatMul (codegen/ops/
matmul.py) by SMLAL / SMLAL2 over int16 operands, two rows of a against four columns of b,
the output stage four lanes at a time (kiln_neon_scale4q).

As the DSP kernel (codegen/kernels/cortex_m_dsp/matmul_s8.py): both operands widened to int16
with their offsets added (no bias to fold them into), two rows of a into scratch, the columns
of b (k contiguous) into scratch once per batch slice, or at compile time for a constant b;
k is zero-padded to a multiple of 8, one int16x8 vector."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import NEON_HEADERS
from codegen.kernels.reference.matmul_s8 import MatmulS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class MatmulS8Neon(MatmulS8):
    k8: int  # k rounded up to a multiple of 8 (zero lanes past k)
    b_const: int  # 1: b is the compile-time columns (int16 [n][k8] per slice); 0: an int8 activation
    right: int  # the output shifts right by 1 or more: kiln_neon_scale4q's one-instruction rounding
    rq: ConstArray  # repack.mve_requant's table of the one output scale in all four lanes


def widened_columns(b: np.ndarray, k: int, n: int, offset: int, k_to: int) -> np.ndarray:
    """A constant b (slices of [k, n], in memory order) as int16 columns: per slice
    [n][k_to], b + offset, zero past k."""
    slices = np.asarray(b, np.int32).reshape(-1, k, n).transpose(0, 2, 1) + offset
    return repack._pad(slices, 2, k_to).astype(np.int16)


@kernel_spec
class MatmulS8NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "matmul_s8", "neon", MatmulS8Neon, NEON_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, fields = request.node, dict(request.params)
        k, n = fields["k"], fields["n"]
        k8 = repack.round_up(k, 8)
        b_value = ctx.g.values[node.inputs[1]]
        scratch = 2 * 2 * k8  # the two widened rows of a
        if b_value.is_const:
            b_arg = ctx.constant(node, "cols", widened_columns(b_value.data, k, n, fields["b_offset"], k8), "int16")
            fields["b_strides"] = tuple(s // (k * n) * n * k8 for s in fields["b_strides"])
        else:
            b_arg = ctx.tensor(node.inputs[1])
            scratch += 2 * n * k8
        table = repack.mve_requant(np.zeros(4), np.full(4, fields["multiplier"]), np.full(4, fields["shift"]), 4)
        params = MatmulS8Neon(**fields, k8=k8, b_const=int(b_value.is_const), right=int(fields["shift"] < 0),
                              rq=ctx.constant(node, "rq", table, "int32"))
        args = (ctx.tensor(node.inputs[0]), b_arg, ctx.tensor(node.outputs[0]), ScratchArg(scratch))
        return Prepared(params, args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))

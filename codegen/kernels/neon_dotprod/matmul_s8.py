"""templates/kernels/neon_dotprod/matmul_s8.c.j2: TFLite Micro's int8 BatchMatMul (codegen/ops/
matmul.py) by SDOT over the int8 operands as they are, two rows of a against four columns of b.

SDOT multiplies int8 by int8, so the zero points come out of the products instead of going
in: sum of (a + ao)(b + bo) = sum of a b + bo * (sum of a) + ao * (sum of b) + k ao bo, the
same int32 value. A slice of b is its columns, k contiguous and zero-padded to a multiple of
16, n padded to a multiple of 4 with zero columns, followed by each column's term
ao * (sum of b) + k ao bo as int32: built in scratch once per activation slice, or here for
a constant b. The rows of a are copied zero-padded to scratch, their sums (times bo) taken
on the way."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import NEON_HEADERS
from codegen.kernels.reference.matmul_s8 import MatmulS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class MatmulS8Sdot(MatmulS8):
    k16: int  # k rounded up to a multiple of 16 (zero bytes past k)
    n4: int  # n rounded up to a multiple of 4 (zero columns past n)
    b_const: int  # 1: b is the compile-time slices (columns then column terms); 0: an int8 activation
    right: int  # the output shifts right by 1 or more: kiln_neon_scale4q's one-instruction rounding
    rq: ConstArray  # repack.mve_requant's table of the one output scale in all four lanes


def column_slices(b: np.ndarray, k: int, n: int, a_offset: int, b_offset: int) -> np.ndarray:
    """A constant b (slices of [k, n] in memory order) as the kernel's slices, in int32 words:
    per slice the int8 columns [n4][k16], then n4 int32 column terms."""
    k16, n4 = repack.round_up(k, 16), repack.round_up(n, 4)
    cols = np.asarray(b, np.int8).reshape(-1, k, n).transpose(0, 2, 1)
    cols = repack._pad(repack._pad(cols, 2, k16), 1, n4)  # [slices, n4, k16]
    terms = a_offset * cols.astype(np.int64).sum(axis=2) + k * a_offset * b_offset
    terms = (terms & 0xFFFFFFFF).astype(np.uint32).view("<i4")
    words = cols.reshape(cols.shape[0], -1).view("<i4")
    return np.concatenate([words, terms], axis=1).reshape(-1)


def packed_operands(request, ctx, fields: dict):
    """What the SDOT and Helium matmuls share: b as slices of 16-byte columns with their
    offset terms (packed at compile time when constant: `fields`' b_strides then count packed
    slices), and the output stage's requantization table. Returns (b argument, b constant?,
    k16, n4, bytes of one packed slice, the table's constant)."""
    node = request.node
    k, n = fields["k"], fields["n"]
    k16, n4 = repack.round_up(k, 16), repack.round_up(n, 4)
    slice_bytes = n4 * k16 + 4 * n4
    b_value = ctx.g.values[node.inputs[1]]
    if b_value.is_const:
        data = column_slices(b_value.data, k, n, fields["a_offset"], fields["b_offset"])
        b_arg = ctx.constant(node, "cols", data, "int32")
        fields["b_strides"] = tuple(s // (k * n) * slice_bytes for s in fields["b_strides"])
    else:
        b_arg = ctx.tensor(node.inputs[1])
    table = repack.mve_requant(np.zeros(4), np.full(4, fields["multiplier"]), np.full(4, fields["shift"]), 4)
    return b_arg, b_value.is_const, k16, n4, slice_bytes, ctx.constant(node, "rq", table, "int32")


@kernel_spec
class MatmulS8SdotSpec(KernelSpec):
    kernel, variant, Params, headers = "matmul_s8", "neon_dotprod", MatmulS8Sdot, NEON_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, fields = request.node, dict(request.params)
        b_arg, b_const, k16, n4, slice_bytes, rq = packed_operands(request, ctx, fields)
        scratch = 2 * k16 + (0 if b_const else slice_bytes)  # the two zero-padded rows of a (and b's slice)
        params = MatmulS8Sdot(**fields, k16=k16, n4=n4, b_const=int(b_const), right=int(fields["shift"] < 0), rq=rq)
        args = (ctx.tensor(node.inputs[0]), b_arg, ctx.tensor(node.outputs[0]), ScratchArg(scratch))
        return Prepared(params, args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))
